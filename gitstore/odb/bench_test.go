package odb

import (
	"bufio"
	"bytes"
	"fmt"
	"github.com/nwdes/nwdes/gitstore/oid"
	"io"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

const benchBlobs = 100_000

// bigRepoStream is a fast-import stream of benchBlobs small distinct blobs
// spread over 256 directories, committed once, followed by a few commits
// touching a handful of files so that the head trees have history.
func bigRepoStream() []byte {
	rng := rand.New(rand.NewPCG(3, 4))
	var b bytes.Buffer
	for i := range benchBlobs {
		d := fmt.Sprintf("file %d\n%016x%016x\n", i, rng.Uint64(), rng.Uint64())
		fmt.Fprintf(&b, "blob\nmark :%d\ndata %d\n%s\n", i+1, len(d), d)
	}
	mark := benchBlobs + 1
	for c := range 4 {
		fmt.Fprintf(&b, "commit refs/heads/main\nmark :%d\ncommitter C O Mitter <c@example.com> %d +0000\ndata 7\ncommit%d\n", mark, 1700000000+c, c)
		if c == 0 {
			for i := range benchBlobs {
				fmt.Fprintf(&b, "M 100644 :%d d%03d/f%05d\n", i+1, i%256, i)
			}
		} else {
			for j := range 10 {
				i := rng.IntN(benchBlobs)
				d := fmt.Sprintf("changed %d %d\n", c, j)
				fmt.Fprintf(&b, "M 100644 inline d%03d/f%05d\ndata %d\n%s\n", i%256, i, len(d), d)
			}
		}
		b.WriteString("\n")
		mark++
	}
	return b.Bytes()
}

// benchRepo builds a packed repository of about benchBlobs objects and
// returns its .git directory and the ids a pre-push hook would read: the
// head commit, its tree, a subtree and a blob in it.
func benchRepo(b *testing.B) (string, []oid.ID) {
	b.Helper()
	requireGit(b)
	repo := filepath.Join(b.TempDir(), "big")
	git(b, b.TempDir(), nil, "init", "-q", repo)
	git(b, repo, bigRepoStream(), "fast-import", "--quiet")
	git(b, repo, nil, "repack", "-q", "-a", "-d")
	var ids []oid.ID
	for _, rev := range []string{"main", "main^{tree}", "main:d042", "main:d042/f00042"} {
		ids = append(ids, oid.MustParse(strings.TrimSpace(string(git(b, repo, nil, "rev-parse", rev)))))
	}
	if n := countPacks(b, objectsDir(repo)); n != 1 {
		b.Fatalf("want 1 pack, have %d", n)
	}
	return filepath.Join(repo, ".git"), ids
}

func BenchmarkColdRead(b *testing.B) {
	gitDir, ids := benchRepo(b)
	objects := filepath.Join(gitDir, "objects")
	b.ReportAllocs()
	for b.Loop() {
		db, err := Open(objects, oid.SHA1)
		if err != nil {
			b.Fatal(err)
		}
		for _, id := range ids {
			if _, _, err := db.Read(id); err != nil {
				b.Fatal(err)
			}
		}
		db.Close()
	}
}

func BenchmarkColdReadGoGit(b *testing.B) {
	gitDir, ids := benchRepo(b)
	b.ReportAllocs()
	for b.Loop() {
		st := filesystem.NewStorage(osfs.New(gitDir), cache.NewObjectLRUDefault())
		for _, id := range ids {
			obj, err := st.EncodedObject(plumbing.AnyObject, goGitHash(id))
			if err != nil {
				b.Fatal(err)
			}
			r, err := obj.Reader()
			if err != nil {
				b.Fatal(err)
			}
			if _, err := io.Copy(io.Discard, r); err != nil {
				b.Fatal(err)
			}
			r.Close()
		}
		st.Close()
	}
}

func BenchmarkColdReadGitCLI(b *testing.B) {
	gitDir, ids := benchRepo(b)
	var stdin bytes.Buffer
	for _, id := range ids {
		fmt.Fprintln(&stdin, id)
	}
	env := gitEnv(b.TempDir())
	b.ReportAllocs()
	for b.Loop() {
		cmd := exec.Command("git", "--git-dir="+gitDir, "cat-file", "--batch")
		cmd.Env = env
		cmd.Stdin = bytes.NewReader(stdin.Bytes())
		out, err := cmd.Output()
		if err != nil {
			b.Fatal(err)
		}
		// Parse the replies so the CLI is charged for what the others do.
		r := bufio.NewReader(bytes.NewReader(out))
		for range ids {
			var id, typ string
			var size int
			if _, err := fmt.Fscanf(r, "%s %s %d\n", &id, &typ, &size); err != nil {
				b.Fatal(err)
			}
			if _, err := r.Discard(size + 1); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkWarmRead is the steady state: one DB, the same four objects
// read again and again.
func BenchmarkWarmRead(b *testing.B) {
	gitDir, ids := benchRepo(b)
	db, err := Open(filepath.Join(gitDir, "objects"), oid.SHA1)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	b.ReportAllocs()
	for b.Loop() {
		for _, id := range ids {
			if _, _, err := db.Read(id); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// goGitHash is id as go-git's SHA-1 hash, for the go-git twin.
func goGitHash(id oid.ID) plumbing.Hash {
	var h plumbing.Hash
	copy(h[:], id.Bytes())
	return h
}
