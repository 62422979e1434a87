package remote_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/refusal"
)

// commitOn checks out from (a commit, or "" for the current one), lets
// change edit the work tree, commits everything and returns the commit.
func commitOn(t *testing.T, dir, from string, change func()) oid.ID {
	t.Helper()
	if from != "" {
		gittest.Git(t, dir, "checkout", "-q", "--detach", from)
	}
	change()
	gittest.Git(t, dir, "add", "-A")
	gittest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "c")
	return oid.MustParse(strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD")))
}

func TestThreeWayTakesEachPathFromTheSideThatChangedItAndNamesEveryClash(t *testing.T) {
	t.Parallel()
	dir := gittest.Init(t, false)
	write := func(name, content string) { gittest.WriteFile(t, dir, name, content) }
	base := commitOn(t, dir, "", func() {
		write("kept", "k\n")
		write("both/same", "s\n")
		write("edited", "e\n")
		write("deleted", "d\n")
		write("dir/file", "f\n")
		if err := os.WriteFile(filepath.Join(dir, "tool"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	})
	tip := commitOn(t, dir, base.String(), func() {
		write("ours", "o\n")
		write("both/same", "same on both\n")
		write("edited", "tip\n")
		write("dir/file", "tip\n")
	})
	clean := commitOn(t, dir, base.String(), func() {
		write("theirs", "t\n")
		write("both/same", "same on both\n")
		if err := os.Remove(filepath.Join(dir, "deleted")); err != nil {
			t.Fatal(err)
		}
	})
	clash := commitOn(t, dir, base.String(), func() {
		write("edited", "head\n")
		if err := os.RemoveAll(filepath.Join(dir, "dir")); err != nil {
			t.Fatal(err)
		}
		write("dir", "now a file\n")
	})
	r := openStore(t, dir, gitstore.Options{})

	tree, conflicts, err := r.ThreeWay(base, tip, clean, 1000)
	if err != nil || conflicts != nil {
		t.Fatalf("clean: %v, %v", conflicts, err)
	}
	merged, err := r.WriteCommit(tree, []oid.ID{tip}, "merged\n")
	if err != nil {
		t.Fatal(err)
	}
	got := gittest.Git(t, dir, "ls-tree", "-r", merged.String())
	for _, want := range []string{"\tkept", "\tours", "\ttheirs", "\tedited", "100755 blob", "\tdir/file"} {
		if !strings.Contains(got, want) {
			t.Errorf("merged tree lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "\tdeleted") {
		t.Errorf("the deletion was lost:\n%s", got)
	}
	if show := gittest.Git(t, dir, "show", merged.String()+":edited"); show != "tip" {
		t.Errorf("edited = %q", show)
	}
	if parent := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", merged.String()+"^")); parent != tip.String() {
		t.Errorf("parent %s, want %s", parent, tip)
	}
	gittest.Git(t, dir, "fsck", "--strict", "--no-dangling")

	_, conflicts, err = r.ThreeWay(base, tip, clash, 1000)
	if err != nil || !slices.Equal(conflicts, []string{"dir/file", "edited"}) {
		t.Fatalf("clash: %v, %v", conflicts, err)
	}
	if _, _, err := r.ThreeWay(base, tip, clean, 1); !refusal.Named(err, refusal.WalkLimit) {
		t.Fatalf("past the limit: %v", err)
	}
}
