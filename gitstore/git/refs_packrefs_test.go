package git_test

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/gitstore/git"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/internal/gittest"
)

// packRefsRounds bounds a test racing git pack-refs --all --prune
// (gittest.Looping.Race).
func packRefsRounds() gittest.Rounds {
	if testing.Short() {
		return gittest.Rounds{Min: 400, Runs: 60, Max: 4000}
	}
	return gittest.Rounds{Min: 2000, Runs: 300, Max: 30000}
}

// TestListSeesEveryRefWhilePackRefsPrunes: while git pack-refs --all
// --prune packs the loose refs, deletes their files and removes the
// directories it emptied, List (and Scan) still gives every ref that
// exists throughout with its value. Each round moves every ref, so that
// it is loose again for pack-refs to migrate while List runs.
func TestListSeesEveryRefWhilePackRefsPrunes(t *testing.T) {
	dir := gittest.Init(t, false)
	a := oid.MustParse(gittest.Git(t, dir, "rev-parse", "HEAD"))
	b := oid.MustParse(gittest.Git(t, dir, "rev-parse", "HEAD^{tree}"))
	refs := git.NewRefs(filepath.Join(dir, ".git"))
	const prefix = "refs/nwdes-local/"
	want := map[git.RefName]oid.ID{}
	for _, name := range []git.RefName{
		"refs/nwdes-local/swarm/leases/card",
		"refs/nwdes-local/swarm/leases/other",
		"refs/nwdes-local/swarm/jobs",
		"refs/nwdes-local/x/y/z/deep",
	} {
		if err := refs.CompareAndSwap(name, zero, a); err != nil {
			t.Fatal(err)
		}
		want[name] = a
	}
	gittest.Git(t, dir, "pack-refs", "--all", "--prune")

	missed := 0
	loop := gittest.Loop(t, dir, "pack-refs", "--all", "--prune")
	loop.Race(packRefsRounds(), func(round int) {
		for name, cur := range want {
			next := a
			if cur == a {
				next = b
			}
			if err := refs.CompareAndSwap(name, cur, next); err != nil {
				t.Fatalf("round %d: move %s: %v", round, name, err)
			}
			want[name] = next
		}
		got, err := refs.List(prefix)
		if err != nil {
			t.Fatalf("round %d: list: %v", round, err)
		}
		sc, err := refs.Scan(prefix)
		if err != nil {
			t.Fatalf("round %d: scan: %v", round, err)
		}
		if !maps.Equal(got, want) || !maps.Equal(sc.Refs, want) {
			missed++
			if missed <= 3 {
				t.Errorf("round %d: List gave %v and Scan %v, want %v", round, got, sc.Refs, want)
			}
		}
	})
	if missed > 0 {
		t.Errorf("%d rounds listed a wrong set of refs", missed)
	}
}

// TestRefsMoveAndDeleteWhilePackRefsPrunes: git pack-refs --all --prune
// packs refs, deletes their loose files and removes the directories it
// emptied, racing the creation of a lock file there (between nwdes
// making the directory and opening <ref>.lock in it, or while it makes
// the directory's parents), and racing deletes (packing the loose value
// between the rewrite of packed-refs and the unlink would bring the ref
// back). Every compare-and-swap still succeeds: refs alone in their
// directories are created, moved for a few rounds (so that pack-refs
// packs them, and a delete finds them loose and packed) and deleted, over
// and over, and no deleted ref comes back.
func TestRefsMoveAndDeleteWhilePackRefsPrunes(t *testing.T) {
	dir := gittest.Init(t, false)
	fresh := freshIDs(t, dir)
	refs := git.NewRefs(filepath.Join(dir, ".git"))
	names := []git.RefName{
		"refs/nwdes-local/swarm/leases/card",
		"refs/nwdes-local/a/b/c/d",
		"refs/nwdes-local/e/f",
		"refs/nwdes-local/g",
	}
	cur := make([]oid.ID, len(names))

	loop := gittest.Loop(t, dir, "pack-refs", "--all", "--prune")
	loop.Race(packRefsRounds(), func(round int) {
		for i, name := range names {
			next := fresh()
			if (round+i)%len(names) == 0 {
				next = zero
			}
			if err := refs.CompareAndSwap(name, cur[i], next); err != nil {
				t.Fatalf("round %d: move %s from %s to %s: %v", round, name, cur[i], next, err)
			}
			cur[i] = next
		}
	})
}

// freshIDs returns a source of object ids, each new: blobs git
// fast-import writes, 256 at a time. Values that recur would let git
// itself lose a ref: pack-refs --prune deletes a loose file that holds
// the value it packed (prune_ref checks the loose value, not whether
// packed-refs still names the ref), so a ref deleted and made again with
// that value meanwhile is gone. nwdes's own updates name a new commit
// each.
func freshIDs(t *testing.T, dir string) func() oid.ID {
	var ids []oid.ID
	made := 0
	return func() oid.ID {
		if len(ids) == 0 {
			var in strings.Builder
			for i := 0; i < 256; i++ {
				made++
				data := fmt.Sprintf("value %d\n", made)
				fmt.Fprintf(&in, "blob\nmark :%d\ndata %d\n%sget-mark :%d\n", made, len(data), data, made)
			}
			out, err := gittest.Pipe(dir, []byte(in.String()), "fast-import", "--quiet")
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range strings.Fields(out) {
				ids = append(ids, oid.MustParse(l))
			}
		}
		id := ids[0]
		ids = ids[1:]
		return id
	}
}

// TestListAcrossAPackRefsBetweenItsReads runs git pack-refs --all --prune
// at the one instant where the order of List's two reads matters: after
// the loose files were walked and before packed-refs is read. Every ref
// moves from its loose file into packed-refs there, and List must still
// give each with the value it held. Read in the other order (packed-refs
// first) the refs are in neither read. The race tests above find this by
// chance; this one at the instant, every run.
func TestListAcrossAPackRefsBetweenItsReads(t *testing.T) {
	dir := gittest.Init(t, false)
	fresh := freshIDs(t, dir)
	refs := git.NewRefs(filepath.Join(dir, ".git"))
	want := map[git.RefName]oid.ID{}
	for _, name := range []git.RefName{"refs/nwdes-local/swarm/leases/card", "refs/nwdes-local/x/y/deep"} {
		old := fresh()
		if err := refs.CompareAndSwap(name, zero, old); err != nil {
			t.Fatal(err)
		}
		// packed with an older value, loose with the newer one
		gittest.Git(t, dir, "pack-refs", "--all", "--no-prune")
		want[name] = fresh()
		if err := refs.CompareAndSwap(name, old, want[name]); err != nil {
			t.Fatal(err)
		}
	}
	packed := false
	refs.SetRaceHooks(func() {
		gittest.Git(t, dir, "pack-refs", "--all", "--prune")
		packed = true
	}, nil)
	got, err := refs.List("refs/nwdes-local/")
	if err != nil {
		t.Fatal(err)
	}
	if !packed {
		t.Fatal("List did not call the hook between its reads")
	}
	for name := range want {
		if _, err := os.Lstat(filepath.Join(dir, ".git", filepath.FromSlash(string(name)))); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("pack-refs --prune left the loose file of %s (%v): the test raced nothing", name, err)
		}
	}
	if !maps.Equal(got, want) {
		t.Fatalf("List across a pack-refs gave %v, want %v", got, want)
	}
}

// TestDeleteHoldsPackedRefsUntilTheLooseFileIsGone runs git pack-refs
// --all --prune at the instant a delete has dropped the ref from
// packed-refs and not yet removed its loose file. The delete still holds
// packed-refs.lock then, so pack-refs must fail to take it; had the
// delete released it (by renaming the lock over packed-refs, as it once
// did), pack-refs would pack the loose value and the deleted ref (a
// released lease) would come back.
func TestDeleteHoldsPackedRefsUntilTheLooseFileIsGone(t *testing.T) {
	dir := gittest.Init(t, false)
	fresh := freshIDs(t, dir)
	refs := git.NewRefs(filepath.Join(dir, ".git"))
	const name git.RefName = "refs/nwdes-local/swarm/leases/card"
	a, b := fresh(), fresh()
	if err := refs.CompareAndSwap(name, zero, a); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "pack-refs", "--all", "--no-prune")
	if err := refs.CompareAndSwap(name, a, b); err != nil {
		t.Fatal(err)
	}
	var packErr error
	called := false
	refs.SetRaceHooks(nil, func() {
		called = true
		_, packErr = gittest.Pipe(dir, nil, "-c", "core.packedRefsTimeout=0", "pack-refs", "--all", "--prune")
	})
	if err := refs.CompareAndSwap(name, b, zero); err != nil {
		t.Fatal(err)
	}
	if !called {
		t.Fatal("the delete did not call the hook before removing the loose file")
	}
	if packErr == nil {
		t.Error("git pack-refs took packed-refs.lock while a delete held it")
	}
	if out := gittest.Git(t, dir, "for-each-ref", string(name)); out != "" {
		t.Fatalf("the deleted ref came back: %s", out)
	}
	if got, err := refs.Read(name); err != nil || !got.IsZero() {
		t.Fatalf("Read after the delete: %v, %v; want no ref", got, err)
	}
}
