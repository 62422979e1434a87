package git_test

import (
	"os"

	"testing"
	"time"

	"github.com/nwdes/nwdes/gitstore/git"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/internal/gittest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	gittest.RemoveFixtures()
	os.Exit(code)
}

// openRepo opens the repository at dir, closed when the test ends.
func openRepo(t testing.TB, dir string, opts git.Options) *git.Repo {
	t.Helper()
	loc, err := gitrepo.Discover(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := git.Open(loc, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// commitFile writes, as nwdes's own writer does (one pack staged, then the
// ref moved by compare-and-swap), a commit on ref's tip whose tree holds
// one file with content, and returns it.
func commitFile(t testing.TB, r *git.Repo, ref git.RefName, name, content string, when time.Time) git.Commit {
	t.Helper()
	tip, err := r.Refs().Read(ref)
	if err != nil {
		t.Fatal(err)
	}
	b := *git.NewBatch(r.Format())
	blob := b.Add(git.BlobObject, []byte(content))
	tb, err := git.EncodeTree([]git.TreeEntry{{Name: name, Mode: git.ModeFile, ID: blob}})
	if err != nil {
		t.Fatal(err)
	}
	tree := b.Add(git.TreeObject, tb)
	c := git.Commit{Tree: tree, Time: when, Message: "write " + name}
	if !tip.IsZero() {
		c.Parents = append(c.Parents, tip)
	}
	cb, err := git.EncodeCommit(c.Tree, c.Parents, "nwdes <nwdes@localhost>", when, c.Message)
	if err != nil {
		t.Fatal(err)
	}
	id := b.Add(git.CommitObject, cb)
	if err := r.Stage(&b, id); err != nil {
		t.Fatal(err)
	}
	if err := r.MoveRef(ref, tip, id); err != nil {
		t.Fatal(err)
	}
	return c
}
