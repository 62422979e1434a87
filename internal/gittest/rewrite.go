package gittest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// RewriteTip replaces ref's tip in the repository whose git directory is
// gitDir by a commit with the same parents whose tree is the tip's with
// edit applied (path → content; a path deleted from the map is removed),
// with git's own plumbing, and deletes forget (the ref's checkpoint, "" for
// none): the records as a fresh clone receives them from a writer who
// forged them, never a change along a history the clone already verified.
func RewriteTip(t testing.TB, gitDir, ref, forget string, edit func(files map[string][]byte)) {
	t.Helper()
	git := func(stdin []byte, env []string, args ...string) []byte {
		t.Helper()
		c := exec.Command("git", append([]string{"--git-dir=" + gitDir}, args...)...)
		c.Env = append(os.Environ(), env...)
		c.Stdin = bytes.NewReader(stdin)
		out, err := c.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return out
	}
	line := func(b []byte) string { return strings.TrimSpace(string(b)) }
	tip := line(git(nil, nil, "rev-parse", ref))
	files := map[string][]byte{}
	for _, l := range strings.Split(line(git(nil, nil, "ls-tree", "-r", "--full-tree", tip)), "\n") {
		meta, path, _ := strings.Cut(l, "\t")
		f := strings.Fields(meta)
		files[path] = git(nil, nil, "cat-file", "blob", f[2])
	}
	edit(files)
	var info bytes.Buffer
	for path, b := range files {
		fmt.Fprintf(&info, "100644 %s\t%s\n", line(git(b, nil, "hash-object", "-w", "--stdin")), path)
	}
	index := []string{"GIT_INDEX_FILE=" + filepath.Join(t.TempDir(), "index")}
	git(info.Bytes(), index, "update-index", "--add", "--index-info")
	tree := line(git(nil, index, "write-tree"))
	args := []string{"commit-tree", tree, "-m", "forged"}
	for _, p := range strings.Fields(line(git(nil, nil, "rev-parse", tip+"^@"))) {
		args = append(args, "-p", p)
	}
	next := line(git(nil, nil, args...))
	git(nil, nil, "update-ref", ref, next, tip)
	if forget != "" {
		git(nil, nil, "update-ref", "-d", forget)
	}
}

// MoveRecord renames the record directory from to to in files.
func MoveRecord(files map[string][]byte, from, to string) {
	for p, b := range files {
		if rest, ok := strings.CutPrefix(p, from+"/"); ok {
			delete(files, p)
			files[to+"/"+rest] = b
		}
	}
}

// EditBody rewrites the body of the record whose record.json is at path in
// files (its envelope {body, kind, v} kept) and returns the new body's
// canonical bytes (sorted keys, no spaces: what a record's content id is
// made from).
func EditBody(t testing.TB, files map[string][]byte, path string, edit func(body map[string]any)) []byte {
	t.Helper()
	var env map[string]any
	if err := json.Unmarshal(files[path], &env); err != nil {
		t.Fatal(err)
	}
	body, _ := env["body"].(map[string]any)
	edit(body)
	env["body"] = body
	files[path] = canonical(t, env)
	return canonical(t, body)
}

// canonical is a record's JSON form for what these tests write: sorted
// keys (encoding/json sorts maps), no spaces, no HTML escaping.
func canonical(t testing.TB, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
