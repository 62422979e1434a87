package examine_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/oid"
)

func plumbingHash(s string) oid.ID { return oid.MustParse(s) }

// rewriteTip replaces Ref's tip by a commit with the same parents whose
// tree is the tip's with edit applied (path → content; a path deleted from
// the map is removed), with git's own plumbing, and forgets this clone's
// checkpoint of the ref: the records as a fresh clone receives them from a
// writer who forged them. (Changing a record along a history this clone
// verified is refused HistoryRewritten before any record is read; these
// tests are about what a reader makes of the record itself.)
func rewriteTip(t *testing.T, st *gitstore.Store, edit func(files map[string][]byte)) {
	t.Helper()
	gd := st.Location().CommonDir
	git := func(stdin []byte, env []string, args ...string) string {
		t.Helper()
		c := exec.Command("git", append([]string{"--git-dir=" + gd}, args...)...)
		c.Env = append(os.Environ(), env...)
		c.Stdin = bytes.NewReader(stdin)
		out, err := c.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	tip := git(nil, nil, "rev-parse", string(examine.Ref))
	files := map[string][]byte{}
	for _, line := range strings.Split(git(nil, nil, "ls-tree", "-r", "--full-tree", tip), "\n") {
		meta, path, _ := strings.Cut(line, "\t")
		f := strings.Fields(meta)
		c := exec.Command("git", "--git-dir="+gd, "cat-file", "blob", f[2])
		b, err := c.Output()
		if err != nil {
			t.Fatal(err)
		}
		files[path] = b
	}
	edit(files)
	var info bytes.Buffer
	for path, b := range files {
		fmt.Fprintf(&info, "100644 %s\t%s\n", git(b, nil, "hash-object", "-w", "--stdin"), path)
	}
	index := []string{"GIT_INDEX_FILE=" + filepath.Join(t.TempDir(), "index")}
	git(info.Bytes(), index, "update-index", "--add", "--index-info")
	tree := git(nil, index, "write-tree")
	args := []string{"commit-tree", tree, "-m", "forged"}
	for _, p := range strings.Fields(git(nil, nil, "rev-parse", tip+"^@")) {
		args = append(args, "-p", p)
	}
	next := git(nil, nil, args...)
	git(nil, nil, "update-ref", string(examine.Ref), next, tip)
	git(nil, nil, "update-ref", "-d", string(gitstore.CheckpointRef(examine.Ref)))
}

// moveRecord renames the record at from to to in files.
func moveRecord(files map[string][]byte, from, to string) {
	for p, b := range files {
		if rest, ok := strings.CutPrefix(p, from+"/"); ok {
			delete(files, p)
			files[to+"/"+rest] = b
		}
	}
}

// editBody rewrites the body of the record whose record.json is at path in
// files (its envelope {body, kind, v} kept) and returns the new body's
// canonical bytes, which a record's content id is made from.
func editBody(t *testing.T, files map[string][]byte, path string, edit func(body map[string]any)) []byte {
	t.Helper()
	var env map[string]any
	if err := json.Unmarshal(files[path], &env); err != nil {
		t.Fatal(err)
	}
	body, _ := env["body"].(map[string]any)
	edit(body)
	env["body"] = body
	b, err := gitstore.Canonical(env)
	if err != nil {
		t.Fatal(err)
	}
	files[path] = b
	cb, err := gitstore.Canonical(body)
	if err != nil {
		t.Fatal(err)
	}
	return cb
}
