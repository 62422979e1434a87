package remote_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/refusal"
)

// TestARemoteOfAnotherObjectFormatIsRefusedByName: a SHA-1 clone whose
// remote is a SHA-256 repository neither fetches from it nor pushes to it,
// and says why by name (not as a network failure to retry); nothing local
// moves.
func TestARemoteOfAnotherObjectFormatIsRefusedByName(t *testing.T) {
	root := t.TempDir()
	env := gittest.Env(root)
	ctx := context.Background()
	gittest.Git(t, root, "init", "-q", "--bare", "--object-format=sha256", "empty256.git")
	gittest.Git(t, root, "init", "-q", "--bare", "--object-format=sha256", "full256.git")
	gittest.Git(t, root, "init", "-q", "-b", "main", "--object-format=sha256", "w256")
	w := filepath.Join(root, "w256")
	gittest.Git(t, w, "commit", "-q", "--allow-empty", "-m", "sha256")
	gittest.Git(t, w, "update-ref", "refs/nwdes/test", "HEAD")
	gittest.Git(t, w, "push", "-q", filepath.Join(root, "full256.git"), "main", "refs/nwdes/test")

	dir := gittest.Init(t, false)
	gittest.Git(t, dir, "remote", "add", "full", filepath.Join(root, "full256.git"))
	gittest.Git(t, dir, "remote", "add", "empty", filepath.Join(root, "empty256.git"))
	s := openStore(t, dir, gitstore.Options{})
	rec, err := gitstore.NewRecord("test.note", 1, noteBody{Title: "local", Tags: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	tip, err := s.Change(ctx, testRef, "local", func(tx gitstore.Edit) error { return tx.Put("n/1", rec) })
	if err != nil {
		t.Fatal(err)
	}
	o := gitstore.SyncOptions{Environ: env}
	for name, sync := range map[string]func() error{
		"fetch from a SHA-256 remote": func() error { _, err := s.Fetch(ctx, "full", o); return err },
		"push to a SHA-256 remote":    func() error { _, err := s.Push(ctx, "full", o); return err },
		"push to an empty SHA-256":    func() error { _, err := s.Push(ctx, "empty", o); return err },
	} {
		err := sync()
		if !refusal.Named(err, refusal.UnsupportedRepository) {
			t.Errorf("%s: %v, want UnsupportedRepository", name, err)
		}
		if now, _ := s.Tip(testRef); now != tip {
			t.Fatalf("%s moved %s", name, testRef)
		}
	}
	for _, bare := range []string{"full256.git", "empty256.git"} {
		if out, _ := gittest.Run(filepath.Join(root, bare), "for-each-ref", "refs/nwdes/test"); bare == "empty256.git" && out != "" {
			t.Errorf("%s took a ref: %s", bare, out)
		}
	}
}
