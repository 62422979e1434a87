package gitstore_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/gitstore/remote"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/refusal"
)

const (
	recordsRef gitstore.RefName = "refs/nwdes/records" // merged, published/ immutable
	chainRef   gitstore.RefName = "refs/nwdes/chain"   // fast-forward, entries/ immutable
)

func historyKinds() *gitstore.Registry {
	return gitstore.MustRegistry(func(r *gitstore.Registry) error {
		if err := r.DeclareKind(gitstore.KindSpec{Kind: "test.note", Version: 1}); err != nil {
			return err
		}
		if err := r.DeclareRef(gitstore.RefSpec{Ref: recordsRef, Policy: gitstore.PolicyMerge,
			Layout: []string{"drafts", "published"}, Immutable: []string{"published"}}); err != nil {
			return err
		}
		return r.DeclareRef(gitstore.RefSpec{Ref: chainRef, Policy: gitstore.PolicyFastForward,
			Layout: []string{"entries"}, Immutable: []string{"entries"}})
	})
}

func historyStore(t *testing.T, dir string) *gitstore.Store {
	t.Helper()
	return openStore(t, dir, gitstore.Options{Registry: historyKinds()})
}

// plumb runs a shell script of git plumbing in dir, with $L naming ref.
func plumb(t *testing.T, dir string, ref gitstore.RefName, script string) {
	t.Helper()
	cmd := exec.Command("sh", "-ec", script)
	cmd.Dir = dir
	cmd.Env = append(gittest.Env(filepath.Dir(dir)), "L="+string(ref), "CP="+string(gitstore.CheckpointRef(ref)))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
}

// dropOnTop commits, on top of $L, its tree without path.
const dropOnTop = `
git read-tree --index-output=.git/tmpidx "$L"
GIT_INDEX_FILE=.git/tmpidx git rm -q --cached -r "$P"
git update-ref "$L" $(git commit-tree -m drop -p $(git rev-parse "$L") $(GIT_INDEX_FILE=.git/tmpidx git write-tree))`

func put(t *testing.T, s *gitstore.Store, ref gitstore.RefName, path, title string) oid.ID {
	t.Helper()
	rec, err := gitstore.NewRecord("test.note", 1, noteBody{Title: title, Tags: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	tip, err := s.Change(context.Background(), ref, "put "+path, func(tx gitstore.Edit) error { return tx.Put(path, rec) })
	if err != nil {
		t.Fatal(err)
	}
	return tip
}

func tipOf(t *testing.T, s *gitstore.Store, ref gitstore.RefName) oid.ID {
	t.Helper()
	tip, err := s.Tip(ref)
	if err != nil {
		t.Fatal(err)
	}
	return tip
}

func wantRewritten(t *testing.T, err error, mentions ...string) {
	t.Helper()
	if !refusal.Named(err, refusal.HistoryRewritten) {
		t.Fatalf("got %v, want HistoryRewritten", err)
	}
	for _, m := range mentions {
		if !strings.Contains(err.Error(), m) {
			t.Fatalf("%v does not name %q", err, m)
		}
	}
}

func fsckNames(t *testing.T, s *gitstore.Store, what string) {
	t.Helper()
	rep, err := s.Fsck()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rep.Problems {
		if strings.Contains(p.String(), what) {
			return
		}
	}
	t.Fatalf("fsck does not name %q: %+v", what, rep.Problems)
}

func TestACommitOnTopThatDropsARecordIsRefusedByNameAndNothingIsWrittenOnIt(t *testing.T) {
	t.Parallel()
	dir := gittest.Init(t, false)
	s := historyStore(t, dir)
	put(t, s, recordsRef, "published/a", "a")
	put(t, s, recordsRef, "published/b", "b")
	cmd := "P=published/b" + dropOnTop
	plumb(t, dir, recordsRef, cmd)
	s = historyStore(t, dir)
	bad := tipOf(t, s, recordsRef)
	wantRewritten(t, s.VerifyHistory(recordsRef, oid.Zero, bad), bad.String()[:12], "published/b")
	wantRewritten(t, s.CheckHistory(recordsRef, bad), "removes published/b")
	if _, err := s.VerifiedRecords(recordsRef); !refusal.Named(err, refusal.HistoryRewritten) {
		t.Fatalf("a verified view of a rewritten ref: %v", err)
	}
	rec, _ := gitstore.NewRecord("test.note", 1, noteBody{Title: "c", Tags: []string{}})
	_, err := s.Change(context.Background(), recordsRef, "put c", func(tx gitstore.Edit) error { return tx.Put("published/c", rec) })
	wantRewritten(t, err, "published/b")
	if tipOf(t, s, recordsRef) != bad {
		t.Fatal("an update wrote on a rewritten ref")
	}
	fsckNames(t, s, "published/b")
}

func TestAChangedRecordIsNamedAsChanged(t *testing.T) {
	t.Parallel()
	dir := gittest.Init(t, false)
	s := historyStore(t, dir)
	put(t, s, chainRef, "entries/1", "one")
	put(t, s, chainRef, "entries/2", "two")
	plumb(t, dir, chainRef, `
p=entries/1/record.json
new=$(git cat-file blob "$L:$p" | sed 's/one/ONE/' | git hash-object -w --stdin)
git read-tree --index-output=.git/tmpidx "$L"
GIT_INDEX_FILE=.git/tmpidx git update-index --cacheinfo 100644,$new,$p
git update-ref "$L" $(git commit-tree -m edit -p $(git rev-parse "$L") $(GIT_INDEX_FILE=.git/tmpidx git write-tree))`)
	s = historyStore(t, dir)
	wantRewritten(t, s.CheckHistory(chainRef, tipOf(t, s, chainRef)), "changes entries/1/record.json")
	fsckNames(t, s, "entries/1/record.json")
}

func TestARefMovedBackPastTheCheckpointIsRefusedUntilTheCheckpointIsDeleted(t *testing.T) {
	t.Parallel()
	dir := gittest.Init(t, false)
	s := historyStore(t, dir)
	first := put(t, s, chainRef, "entries/1", "one")
	put(t, s, chainRef, "entries/2", "two")
	last := put(t, s, chainRef, "entries/3", "three")
	if cp := tipOf(t, s, gitstore.CheckpointRef(chainRef)); cp != last {
		t.Fatalf("the checkpoint is %s after the writes, want the tip %s", cp, last)
	}
	plumb(t, dir, chainRef, `git update-ref "$L" `+first.String())
	s = historyStore(t, dir)
	wantRewritten(t, s.CheckHistory(chainRef, first), "does not contain "+last.String()[:12])
	rec, _ := gitstore.NewRecord("test.note", 1, noteBody{Title: "again", Tags: []string{}})
	_, err := s.Change(context.Background(), chainRef, "append", func(tx gitstore.Edit) error { return tx.Put("entries/2", rec) })
	wantRewritten(t, err)
	fsckNames(t, s, "does not contain "+last.String()[:12])
	if cp := tipOf(t, s, gitstore.CheckpointRef(chainRef)); cp != last {
		t.Fatalf("a refused check moved the checkpoint to %s", cp)
	}
	// A meant rewrite: deleting the checkpoint verifies the whole history anew.
	plumb(t, dir, chainRef, `git update-ref -d "$CP"`)
	if err := s.CheckHistory(chainRef, first); err != nil {
		t.Fatal(err)
	}
	if cp := tipOf(t, s, gitstore.CheckpointRef(chainRef)); cp != first {
		t.Fatalf("the checkpoint is %s, want %s", cp, first)
	}
}

func TestAHistoryRebuiltOnAnotherRootIsRefused(t *testing.T) {
	t.Parallel()
	dir := gittest.Init(t, false)
	s := historyStore(t, dir)
	put(t, s, chainRef, "entries/1", "one")
	put(t, s, chainRef, "entries/2", "two")
	plumb(t, dir, chainRef, `
prev=
for c in $(git rev-list --reverse "$L"); do
  prev=$(git commit-tree -m rebuilt ${prev:+-p $prev} $(git rev-parse "$c^{tree}"))
done
git update-ref "$L" $prev`)
	s = historyStore(t, dir)
	wantRewritten(t, s.CheckHistory(chainRef, tipOf(t, s, chainRef)), "does not contain")
}

func TestADeletedRefIsRefused(t *testing.T) {
	t.Parallel()
	dir := gittest.Init(t, false)
	s := historyStore(t, dir)
	put(t, s, chainRef, "entries/1", "one")
	plumb(t, dir, chainRef, `git update-ref -d "$L"`)
	s = historyStore(t, dir)
	wantRewritten(t, s.CheckHistory(chainRef, oid.Zero), "deleted")
}

func TestAnUpdateThatRemovesOrChangesAnImmutableRecordIsRefused(t *testing.T) {
	t.Parallel()
	dir := gittest.Init(t, false)
	s := historyStore(t, dir)
	tip := put(t, s, recordsRef, "published/a", "a")
	put(t, s, recordsRef, "drafts/a", "draft")
	tip = tipOf(t, s, recordsRef)
	for name, fn := range map[string]func(tx gitstore.Edit) error{
		"removed": func(tx gitstore.Edit) error { return tx.Remove("published/a") },
		"changed": func(tx gitstore.Edit) error {
			rec, _ := gitstore.NewRecord("test.note", 1, noteBody{Title: "other", Tags: []string{}})
			return tx.Put("published/a", rec)
		},
	} {
		_, err := s.Change(context.Background(), recordsRef, name, fn)
		if !refusal.Named(err, refusal.RecordImmutable) || !strings.Contains(err.Error(), "published/a") {
			t.Fatalf("%s: %v, want RecordImmutable naming published/a", name, err)
		}
	}
	if tipOf(t, s, recordsRef) != tip {
		t.Fatal("a refused update moved the ref")
	}
	// What is not immutable changes freely, and a record written again
	// byte for byte is no change.
	put(t, s, recordsRef, "drafts/a", "draft 2")
	put(t, s, recordsRef, "published/a", "a")
	if err := s.CheckHistory(recordsRef, tipOf(t, s, recordsRef)); err != nil {
		t.Fatal(err)
	}
}

func TestLegitimateAppendsConsolidationAndMergesPass(t *testing.T) {
	t.Parallel()
	w := newSyncWorld(t)
	_, a := w.cloneWith("a", historyKinds())
	bdir, b := w.cloneWith("b", historyKinds())
	put(t, a, recordsRef, "published/base", "base")
	if _, err := remote.New(a).Push(context.Background(), "origin", w.opts()); err != nil {
		t.Fatal(err)
	}
	if _, err := remote.New(b).Fetch(context.Background(), "origin", w.opts()); err != nil {
		t.Fatal(err)
	}
	// More updates than the pack bound, so consolidation runs.
	for i := range 25 {
		put(t, a, recordsRef, "published/a"+string(rune('a'+i)), "a")
	}
	put(t, b, recordsRef, "published/b", "b")
	// Both clones hold a record at one path, each its own: the merge
	// decides between them, which is no rewrite.
	put(t, a, recordsRef, "published/same", "from a")
	put(t, b, recordsRef, "published/same", "from b")
	if _, err := remote.New(a).Push(context.Background(), "origin", w.opts()); err != nil {
		t.Fatal(err)
	}
	if _, err := remote.New(b).Fetch(context.Background(), "origin", w.opts()); err != nil {
		t.Fatal(err)
	}
	merged := tipOf(t, b, recordsRef)
	if ps, _, _ := b.Parents(merged); len(ps) != 2 {
		t.Fatalf("b's tip %s is not a merge", merged)
	}
	for _, s := range []*gitstore.Store{a, b} {
		tip := tipOf(t, s, recordsRef)
		if err := s.VerifyHistory(recordsRef, oid.Zero, tip); err != nil {
			t.Fatal(err)
		}
		if err := s.CheckHistory(recordsRef, tip); err != nil {
			t.Fatal(err)
		}
		if cp := tipOf(t, s, gitstore.CheckpointRef(recordsRef)); cp != tip {
			t.Fatalf("checkpoint %s, tip %s", cp, tip)
		}
		rep, err := s.Fsck()
		if err != nil || !rep.OK() {
			t.Fatalf("fsck: %+v %v", rep, err)
		}
	}
	// MergeInto of what the remote holds, fetched by git alone.
	put(t, a, recordsRef, "published/after", "after")
	if _, err := remote.New(a).Push(context.Background(), "origin", w.opts()); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, bdir, "fetch", "-q", "origin", "+refs/nwdes/*:refs/nwdes-remotes/origin/*")
	theirs := tipOf(t, b, gitstore.TrackingRef("origin", recordsRef))
	if _, err := remote.New(b).MergeInto(context.Background(), recordsRef, theirs, "origin", w.opts()); err != nil {
		t.Fatal(err)
	}
	if err := b.CheckHistory(recordsRef, tipOf(t, b, recordsRef)); err != nil {
		t.Fatal(err)
	}
}

func TestAFetchRefusesARemoteHistoryThatDropsARecord(t *testing.T) {
	t.Parallel()
	w := newSyncWorld(t)
	adir, a := w.cloneWith("a", historyKinds())
	_, b := w.cloneWith("b", historyKinds())
	put(t, a, recordsRef, "published/x", "x")
	put(t, a, chainRef, "entries/x", "x")
	put(t, a, recordsRef, "published/keep", "keep")
	put(t, a, chainRef, "entries/keep", "keep")
	if _, err := remote.New(a).Push(context.Background(), "origin", w.opts()); err != nil {
		t.Fatal(err)
	}
	if _, err := remote.New(b).Fetch(context.Background(), "origin", w.opts()); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ref  gitstore.RefName
		path string
	}{{recordsRef, "published/keep"}, {chainRef, "entries/keep"}} {
		before := tipOf(t, b, c.ref)
		plumb(t, adir, c.ref, "P="+c.path+dropOnTop+`
git push -q origin "$L"`)
		_, err := remote.New(b).Fetch(context.Background(), "origin", w.opts())
		wantRewritten(t, err, "from origin", c.path)
		if tipOf(t, b, c.ref) != before {
			t.Fatalf("%s moved to the remote's rewritten history", c.ref)
		}
		plumb(t, adir, c.ref, `git update-ref "$L" "$L^" && git push -q -f origin "$L"`)
	}
}

func TestAQuarantineIsVerifiedButItsCheckpointIsNotMoved(t *testing.T) {
	t.Parallel()
	dir := gittest.Init(t, false)
	s := historyStore(t, dir)
	put(t, s, chainRef, "entries/1", "one")
	plumb(t, dir, chainRef, `git update-ref -d "$CP"`)
	loc, err := gitrepo.Discover(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	loc.ObjectDir = filepath.Join(loc.CommonDir, "objects", "incoming-test")
	loc.Alternates = []string{filepath.Join(loc.CommonDir, "objects")}
	if err := os.MkdirAll(loc.ObjectDir, 0o755); err != nil {
		t.Fatal(err)
	}
	q, err := gitstore.Open(loc, gitstore.Options{Registry: historyKinds()})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if err := q.CheckHistory(chainRef, tipOf(t, q, chainRef)); err != nil {
		t.Fatal(err)
	}
	if cp := tipOf(t, q, gitstore.CheckpointRef(chainRef)); !cp.IsZero() {
		t.Fatalf("a quarantine moved the checkpoint to %s", cp)
	}
}

func TestACheckpointIsNotWrittenByUpdate(t *testing.T) {
	t.Parallel()
	dir := gittest.Init(t, false)
	s := historyStore(t, dir)
	_, err := s.Change(context.Background(), gitstore.CheckpointRef(chainRef), "x", func(tx gitstore.Edit) error { return tx.WriteBlob("x", nil) })
	if err == nil {
		t.Fatal("an update wrote a checkpoint")
	}
}

// syncWorld is a bare remote and clones of it, each with its own store
// (gitstore/remote's tests have the full one; these tests only push and
// fetch through it).
type syncWorld struct {
	t      *testing.T
	remote string
	env    []string
}

func newSyncWorld(t *testing.T) *syncWorld {
	t.Helper()
	remote := gittest.Init(t, true)
	seed := gittest.Init(t, false)
	gittest.Git(t, seed, "push", "-q", remote, "main")
	return &syncWorld{t: t, remote: remote, env: gittest.Env(filepath.Dir(remote))}
}

func (w *syncWorld) cloneWith(name string, reg *gitstore.Registry) (string, *gitstore.Store) {
	w.t.Helper()
	dir := filepath.Join(w.t.TempDir(), name)
	gittest.Git(w.t, filepath.Dir(dir), "clone", "-q", w.remote, dir)
	return dir, openStore(w.t, dir, gitstore.Options{Registry: reg})
}

func (w *syncWorld) opts() gitstore.SyncOptions { return gitstore.SyncOptions{Environ: w.env} }

// TestAnAbsentTipReadBeforeTheRefWasCreatedIsStaleNotDeleted: a writer
// that read the ref as absent, while another created it and moved its
// checkpoint on, is told nothing is wrong (its write then loses its
// compare-and-swap and reads again); only a ref still absent next to its
// checkpoint was deleted.
func TestAnAbsentTipReadBeforeTheRefWasCreatedIsStaleNotDeleted(t *testing.T) {
	t.Parallel()
	dir := gittest.Init(t, false)
	s := historyStore(t, dir)
	put(t, s, chainRef, "entries/a", "a")
	if err := s.CheckHistoryFrom(chainRef, oid.Zero); err != nil {
		t.Fatalf("a stale absent tip: %v", err)
	}
	gittest.Git(t, dir, "update-ref", "-d", string(chainRef))
	wantRewritten(t, s.CheckHistoryFrom(chainRef, oid.Zero), "deleted")
}
