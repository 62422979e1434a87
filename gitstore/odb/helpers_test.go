package odb

import (
	"bufio"
	"bytes"
	"fmt"
	"github.com/nwdes/nwdes/gitstore/oid"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// gitEnv makes every git invocation independent of the machine's and the
// user's configuration and of the clock.
func gitEnv(home string) []string {
	env := []string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=A U Thor",
		"GIT_AUTHOR_EMAIL=author@example.com",
		"GIT_COMMITTER_NAME=C O Mitter",
		"GIT_COMMITTER_EMAIL=committer@example.com",
		"GIT_AUTHOR_DATE=1700000000 +0000",
		"GIT_COMMITTER_DATE=1700000000 +0000",
		"GIT_CONFIG_COUNT=3",
		"GIT_CONFIG_KEY_0=gc.auto", "GIT_CONFIG_VALUE_0=0",
		"GIT_CONFIG_KEY_1=init.defaultBranch", "GIT_CONFIG_VALUE_1=main",
		"GIT_CONFIG_KEY_2=maintenance.auto", "GIT_CONFIG_VALUE_2=false",
	}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PATH=") || strings.HasPrefix(kv, "TMPDIR=") {
			env = append(env, kv)
		}
	}
	return env
}

func requireGit(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
}

// git runs git in dir and returns its stdout.
func git(t testing.TB, dir string, stdin []byte, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv(dir)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out
}

// historyStream generates a git fast-import stream of a linear history in
// which a handful of text files change a few lines per commit, so that
// repacking finds long delta chains. Files are added and removed along the
// way, and annotated tags give the repository tag objects.
func historyStream(commits int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	files := map[string][]string{}
	order := []string{"README", "src/main.go", "src/util.go", "docs/guide.txt", "docs/deep/nested/notes.md", "data/table.csv"}
	for _, p := range order {
		lines := make([]string, 150+rng.IntN(100))
		for i := range lines {
			lines[i] = fmt.Sprintf("%s line %d: %x %x", p, i, rng.Uint64(), rng.Uint64())
		}
		files[p] = lines
	}
	var b bytes.Buffer
	data := func(s string) { fmt.Fprintf(&b, "data %d\n%s\n", len(s), s) }
	for c := 1; c <= commits; c++ {
		changed := map[string]bool{}
		if c == 1 {
			for _, p := range order {
				changed[p] = true
			}
		} else {
			for range 1 + rng.IntN(2) {
				p := order[rng.IntN(len(order))]
				lines := files[p]
				for range 1 + rng.IntN(3) {
					i := rng.IntN(len(lines))
					lines[i] = fmt.Sprintf("%s line %d rev %d: %x", p, i, c, rng.Uint64())
				}
				if rng.IntN(4) == 0 {
					lines = append(lines, fmt.Sprintf("appended in %d", c))
				}
				files[p] = lines
				changed[p] = true
			}
		}
		when := 1700000000 + c*60
		fmt.Fprintf(&b, "commit refs/heads/main\nmark :%d\n", c)
		fmt.Fprintf(&b, "author A U Thor <author@example.com> %d +0000\n", when)
		fmt.Fprintf(&b, "committer C O Mitter <committer@example.com> %d +0000\n", when)
		data(fmt.Sprintf("commit %d\n\nchanges %d files", c, len(changed)))
		if c == 1 {
			b.WriteString("M 100644 inline empty\n")
			data("")
			b.WriteString("M 100755 inline bin/run.sh\n")
			data("#!/bin/sh\necho hi\n")
			b.WriteString("M 120000 inline link\n")
			data("README")
		}
		for _, p := range order {
			if changed[p] {
				fmt.Fprintf(&b, "M 100644 inline %s\n", p)
				data(strings.Join(files[p], "\n") + "\n")
			}
		}
		if c%40 == 0 {
			fmt.Fprintf(&b, "M 100644 inline gen/f%d.txt\n", c)
			data(fmt.Sprintf("generated at %d\n%s\n", c, strings.Repeat("x", c)))
		}
		if c%40 == 20 && c > 40 {
			fmt.Fprintf(&b, "D gen/f%d.txt\n", c-60)
		}
		b.WriteString("\n")
		if c%100 == 0 {
			fmt.Fprintf(&b, "tag v%d\nfrom :%d\ntagger C O Mitter <committer@example.com> %d +0000\n", c/100, c, when)
			data(fmt.Sprintf("release %d", c/100))
		}
	}
	return b.Bytes()
}

// newHistoryRepo creates a non-bare repository holding historyStream(commits)
// and returns its work tree.
func newHistoryRepo(t testing.TB, commits int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	git(t, t.TempDir(), nil, "init", "-q", dir)
	git(t, dir, historyStream(commits), "fast-import", "--quiet")
	return dir
}

func objectsDir(repo string) string { return filepath.Join(repo, ".git", "objects") }

type gitObject struct {
	id   oid.ID
	typ  plumbing.ObjectType
	data []byte
}

// allObjects returns every object git sees in repo, alternates included,
// with content, from one git cat-file --batch process.
func allObjects(t testing.TB, repo string) []gitObject {
	t.Helper()
	out := git(t, repo, nil, "cat-file", "--batch-all-objects", "--batch")
	r := bufio.NewReader(bytes.NewReader(out))
	var objs []gitObject
	for {
		line, err := r.ReadString('\n')
		if err == io.EOF && line == "" {
			return objs
		}
		if err != nil {
			t.Fatalf("parse cat-file output: %v", err)
		}
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("parse cat-file output: line %q", line)
		}
		typ, err := plumbing.ParseObjectType(f[1])
		if err != nil {
			t.Fatalf("parse cat-file output: %v", err)
		}
		n, err := strconv.Atoi(f[2])
		if err != nil {
			t.Fatalf("parse cat-file output: %v", err)
		}
		data := make([]byte, n+1)
		if _, err := io.ReadFull(r, data); err != nil || data[n] != '\n' {
			t.Fatalf("parse cat-file output: body of %s: %v", f[0], err)
		}
		objs = append(objs, gitObject{oid.MustParse(f[0]), typ, data[:n]})
	}
}

// hashLen is the size of the SHA-1 ids these tests use.
const hashLen = 20

// rawID is the SHA-1 id whose digest begins with b, the rest zero.
func rawID(b ...byte) oid.ID {
	var d [hashLen]byte
	copy(d[:], b)
	id, err := oid.FromBytes(d[:])
	if err != nil {
		panic(err)
	}
	return id
}

// setByte is id with its i-th byte set to v.
func setByte(id oid.ID, i int, v byte) oid.ID {
	b := id.Bytes()
	b[i] = v
	return rawID(b...)
}
