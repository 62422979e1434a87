package remote_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/nwdes/nwdes/gitstore/oid"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/gitstore/remote"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/refusal"
)

// syncWorld is a bare remote and clones of it, each with its own store.
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

func (w *syncWorld) clone(name string) (string, *remote.Replicator) {
	w.t.Helper()
	return w.cloneWith(name, nil)
}

// cloneWith clones the remote and opens a store with reg (nil: the test
// default, every refs/nwdes/ ref merged and the test.note kind).
func (w *syncWorld) cloneWith(name string, reg *gitstore.Registry) (string, *remote.Replicator) {
	w.t.Helper()
	dir := filepath.Join(w.t.TempDir(), name)
	gittest.Git(w.t, filepath.Dir(dir), "clone", "-q", w.remote, dir)
	return dir, openStore(w.t, dir, gitstore.Options{Registry: reg})
}

// noteKind declares the test.note kind with a merge rule.
func noteKind(merge gitstore.Resolver) *gitstore.Registry {
	return gitstore.MustRegistry(gitstore.OpenRegistry(gitstore.KindSpec{Kind: "test.note", Version: 1, Merge: merge}))
}

func (w *syncWorld) opts() gitstore.SyncOptions {
	return gitstore.SyncOptions{Environ: w.env}
}

func putNote(t *testing.T, s *remote.Replicator, ref gitstore.RefName, path, title string) {
	t.Helper()
	rec, err := gitstore.NewRecord("test.note", 1, noteBody{Title: title, Tags: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	rec.Payloads = map[string][]byte{"text": []byte(title + "\n")}
	if _, err := s.Change(context.Background(), ref, "put "+path, func(tx gitstore.Edit) error { return tx.Put(path, rec) }); err != nil {
		t.Fatal(err)
	}
}

func titleAt(t *testing.T, s *remote.Replicator, ref gitstore.RefName, path string) string {
	t.Helper()
	tx, err := s.Records(ref)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := tx.Get(path)
	if errors.Is(err, gitstore.ErrNotFound) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	var b noteBody
	if err := rec.Decode(&b); err != nil {
		t.Fatal(err)
	}
	return b.Title
}

func remoteTip(t *testing.T, remote string, ref gitstore.RefName) string {
	t.Helper()
	out, _ := gittest.Run(remote, "rev-parse", "--verify", "-q", string(ref))
	return strings.TrimSpace(out)
}

func TestTwoClonesPushingDifferentRecordsEndWithBothOnTheRemoteInEitherOrder(t *testing.T) {
	for _, order := range [][2]string{{"a", "b"}, {"b", "a"}} {
		t.Run(order[0]+" first", func(t *testing.T) {
			w := newSyncWorld(t)
			ctx := context.Background()
			_, a := w.clone("a")
			_, b := w.clone("b")
			putNote(t, a, testRef, "records/from-a", "A")
			putNote(t, b, testRef, "records/from-b", "B")
			stores := map[string]*remote.Replicator{"a": a, "b": b}
			for _, who := range order {
				if _, err := stores[who].Push(ctx, "origin", w.opts()); err != nil {
					t.Fatalf("push from %s: %v", who, err)
				}
			}
			_, fresh := w.clone("fresh")
			if _, err := fresh.Fetch(ctx, "origin", w.opts()); err != nil {
				t.Fatal(err)
			}
			if titleAt(t, fresh, testRef, "records/from-a") != "A" || titleAt(t, fresh, testRef, "records/from-b") != "B" {
				t.Fatal("the remote lost a clone's record")
			}
			gittest.Git(t, w.remote, "fsck", "--strict", "--no-dangling")
		})
	}
}

func TestClonesPushingAtTheSameTimeLoseNothing(t *testing.T) {
	w := newSyncWorld(t)
	ctx := context.Background()
	const n = 4
	var stores []*remote.Replicator
	for i := 0; i < n; i++ {
		_, s := w.clone(fmt.Sprintf("c%d", i))
		putNote(t, s, testRef, fmt.Sprintf("records/r%d", i), fmt.Sprintf("R%d", i))
		stores = append(stores, s)
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i, s := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = s.Push(ctx, "origin", w.opts())
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("clone %d: %v", i, err)
		}
	}
	_, fresh := w.clone("fresh")
	if _, err := fresh.Fetch(ctx, "origin", w.opts()); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if got := titleAt(t, fresh, testRef, fmt.Sprintf("records/r%d", i)); got != fmt.Sprintf("R%d", i) {
			t.Fatalf("record of clone %d on the remote: %q", i, got)
		}
	}
}

func TestPushNeverOverwritesARemoteUpdateItHasNotSeen(t *testing.T) {
	w := newSyncWorld(t)
	ctx := context.Background()
	_, a := w.clone("a")
	_, b := w.clone("b")
	putNote(t, a, testRef, "records/a", "A")
	putNote(t, b, testRef, "records/b", "B")
	// A git that lets clone b push first, right after a's fetch and before
	// a's own push: a's lease must fail and a must merge b's record.
	marker := filepath.Join(t.TempDir(), "raced")
	gitBin := filepath.Join(t.TempDir(), "git")
	script := fmt.Sprintf(`#!/bin/sh
for a in "$@"; do
  if [ "$a" = push ] && [ ! -e %q ]; then
    : > %q
    git -C %q push -q --no-verify origin refs/nwdes/test:refs/nwdes/test || exit 99
  fi
done
exec git "$@"
`, marker, marker, b.Location().WorkTree)
	if err := os.WriteFile(gitBin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	o := w.opts()
	o.GitPath = gitBin
	rep, err := a.Push(ctx, "origin", o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Attempts != 2 {
		t.Fatalf("push took %d rounds, want 2 (the first lease must fail)", rep.Attempts)
	}
	_, fresh := w.clone("fresh")
	if _, err := fresh.Fetch(ctx, "origin", w.opts()); err != nil {
		t.Fatal(err)
	}
	if titleAt(t, fresh, testRef, "records/a") != "A" || titleAt(t, fresh, testRef, "records/b") != "B" {
		t.Fatal("a record was overwritten on the remote")
	}
}

func TestFetchFastForwardsCreatesAndLeavesLocalWorkAhead(t *testing.T) {
	w := newSyncWorld(t)
	ctx := context.Background()
	_, a := w.clone("a")
	_, b := w.clone("b")
	putNote(t, a, testRef, "records/one", "1")
	if _, err := a.Push(ctx, "origin", w.opts()); err != nil {
		t.Fatal(err)
	}
	rep, err := b.Fetch(ctx, "origin", w.opts())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Merged) != 1 || rep.Merged[0].Action != gitstore.SyncCreated {
		t.Fatalf("first fetch: %+v", rep.Merged)
	}
	putNote(t, a, testRef, "records/two", "2")
	if _, err := a.Push(ctx, "origin", w.opts()); err != nil {
		t.Fatal(err)
	}
	if rep, err = b.Fetch(ctx, "origin", w.opts()); err != nil || rep.Merged[0].Action != gitstore.SyncFastForward {
		t.Fatalf("second fetch: %+v %v", rep, err)
	}
	putNote(t, b, testRef, "records/three", "3")
	if rep, err = b.Fetch(ctx, "origin", w.opts()); err != nil || rep.Merged[0].Action != gitstore.SyncAhead {
		t.Fatalf("fetch with local work ahead: %+v %v", rep, err)
	}
	if titleAt(t, b, testRef, "records/three") != "3" {
		t.Fatal("fetch dropped a local record")
	}
}

func TestAMergeKeepsAChangeOverADeletionAndAppliesOneSidedDeletions(t *testing.T) {
	w := newSyncWorld(t)
	ctx := context.Background()
	_, a := w.clone("a")
	_, b := w.clone("b")
	putNote(t, a, testRef, "records/kept", "base")
	putNote(t, a, testRef, "records/gone", "base")
	if _, err := a.Push(ctx, "origin", w.opts()); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Fetch(ctx, "origin", w.opts()); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Change(ctx, testRef, "rm", func(tx gitstore.Edit) error {
		if err := tx.Remove("records/kept"); err != nil {
			return err
		}
		return tx.Remove("records/gone")
	}); err != nil {
		t.Fatal(err)
	}
	putNote(t, b, testRef, "records/kept", "changed by b")
	putNote(t, b, testRef, "records/new", "b")
	if _, err := a.Push(ctx, "origin", w.opts()); err != nil {
		t.Fatal(err)
	}
	rep, err := b.Fetch(ctx, "origin", w.opts())
	if err != nil || rep.Merged[0].Action != gitstore.SyncMerged {
		t.Fatalf("fetch: %+v %v", rep, err)
	}
	if got := titleAt(t, b, testRef, "records/kept"); got != "changed by b" {
		t.Fatalf("a change lost to a deletion: %q", got)
	}
	if got := titleAt(t, b, testRef, "records/gone"); got != "" {
		t.Fatalf("a one-sided deletion was undone: %q", got)
	}
	if titleAt(t, b, testRef, "records/new") != "b" {
		t.Fatal("a one-sided addition was lost")
	}
	tip, _ := b.Tip(testRef)
	parents, _, err := b.Parents(tip)
	if err != nil || len(parents) != 2 {
		t.Fatalf("merge commit parents: %v %v", parents, err)
	}
}

func TestARecordBothSidesChangedIsDecidedByItsKindsMergeRuleTheSameWayOnBothClones(t *testing.T) {
	w := newSyncWorld(t)
	ctx := context.Background()
	earlier := func(_ gitstore.RefName, _ string, ours, theirs *gitstore.Record) (gitstore.Side, error) {
		var o, th noteBody
		if err := ours.Decode(&o); err != nil {
			return 0, err
		}
		if err := theirs.Decode(&th); err != nil {
			return 0, err
		}
		if o.Title <= th.Title {
			return gitstore.Ours, nil
		}
		return gitstore.Theirs, nil
	}
	// The rule is declared with the kind; no sync call passes one. It
	// keeps the title that sorts first, where the byte rule
	// (DefaultResolve) would keep the record that sorts last.
	_, a := w.cloneWith("a", noteKind(earlier))
	_, b := w.cloneWith("b", noteKind(earlier))
	putNote(t, a, testRef, "records/x", "base")
	if _, err := a.Push(ctx, "origin", w.opts()); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Fetch(ctx, "origin", w.opts()); err != nil {
		t.Fatal(err)
	}
	putNote(t, a, testRef, "records/x", "apple")
	putNote(t, b, testRef, "records/x", "zebra")
	if _, err := a.Push(ctx, "origin", w.opts()); err != nil {
		t.Fatal(err)
	}
	rep, err := b.Push(ctx, "origin", w.opts())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Merged) != 1 || len(rep.Merged[0].Resolved) != 1 || rep.Merged[0].Resolved[0] != "records/x" || rep.Merged[0].Policy != gitstore.PolicyMerge {
		t.Fatalf("resolved paths: %+v", rep.Merged)
	}
	if _, err := a.Fetch(ctx, "origin", w.opts()); err != nil {
		t.Fatal(err)
	}
	if titleAt(t, a, testRef, "records/x") != "apple" || titleAt(t, b, testRef, "records/x") != "apple" {
		t.Fatal("the kind's merge rule was not applied on both clones")
	}
}

func TestNotesBothSidesChangedKeepBothTexts(t *testing.T) {
	w := newSyncWorld(t)
	ctx := context.Background()
	dirA, a := w.clone("a")
	_, b := w.clone("b")
	head := oid.MustParse(gittest.Git(t, dirA, "rev-parse", "HEAD"))
	setNote := func(s *remote.Replicator, text string) {
		t.Helper()
		if _, err := s.UpdateNote(ctx, head, "note", func([]byte, bool) ([]byte, error) { return []byte(text), nil }); err != nil {
			t.Fatal(err)
		}
	}
	setNote(a, "brief from a\n")
	setNote(b, "brief from b\n")
	if _, err := a.Push(ctx, "origin", w.opts()); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Push(ctx, "origin", w.opts()); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Fetch(ctx, "origin", w.opts()); err != nil {
		t.Fatal(err)
	}
	want := "brief from a\n\nbrief from b\n"
	for name, s := range map[string]*remote.Replicator{"a": a, "b": b} {
		got, err := s.Note(head)
		if err != nil || string(got) != want {
			t.Fatalf("note on %s = %q, %v; want %q", name, got, err, want)
		}
	}
	if got := gittest.Git(t, dirA, "notes", "--ref", "nwdes", "show", "HEAD"); got != strings.TrimSpace(want) {
		t.Fatalf("git reads the merged note as %q", got)
	}
	// Merging again changes nothing: a note containing the other is kept.
	rep, err := b.Fetch(ctx, "origin", w.opts())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Merged {
		if r.Action != gitstore.SyncUpToDate {
			t.Fatalf("a second fetch moved %s: %s", r.Ref, r.Action)
		}
	}
}

// A store that answers git config from the configuration read when it
// was opened (Options.Config, as the CLI opens it) still adds each spec
// once: the second setup sees what the first wrote.
func TestSetupRemoteThroughAStoreWithTheConfigReadAtOpenAddsEachSpecOnce(t *testing.T) {
	w := newSyncWorld(t)
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "c")
	gittest.Git(t, filepath.Dir(dir), "clone", "-q", w.remote, dir)
	loc, err := gitrepo.Discover(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := gitrepo.ReadConfig(loc, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := openStore(t, dir, gitstore.Options{Config: cfg})
	if res, err := a.SetupRemote(ctx, "origin", w.opts()); err != nil || len(res.Added) != 2 {
		t.Fatalf("first setup: %+v %v", res, err)
	}
	if res, err := a.SetupRemote(ctx, "origin", w.opts()); err != nil || len(res.Added) != 0 || len(res.Present) != 2 {
		t.Fatalf("second setup through the same store: %+v %v", res, err)
	}
	if out := gittest.Git(t, dir, "config", "--get-all", "remote.origin.fetch"); strings.Count(out, "+refs/nwdes/*:") != 1 {
		t.Fatalf("remote.origin.fetch holds the nwdes spec more than once:\n%s", out)
	}
}

func TestSetupRemoteAddsTrackingRefspecsOnceAndNeverAPushRefspec(t *testing.T) {
	w := newSyncWorld(t)
	ctx := context.Background()
	dir, a := w.clone("a")
	gittest.Git(t, dir, "config", "--add", "remote.origin.fetch", "+refs/notes/*:refs/notes/*")
	res, err := a.SetupRemote(ctx, "origin", w.opts())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Added) != 2 || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "+refs/notes/*:refs/notes/*") {
		t.Fatalf("first setup: %+v", res)
	}
	res, err = a.SetupRemote(ctx, "origin", w.opts())
	if err != nil || len(res.Added) != 0 || len(res.Present) != 2 {
		t.Fatalf("second setup: %+v %v", res, err)
	}
	if out, _ := gittest.Run(dir, "config", "--get-all", "remote.origin.push"); out != "" {
		t.Fatalf("remote.origin.push was written: %q", out)
	}
	// A plain git fetch works against a remote that has no nwdes refs yet,
	// and brings them once it does.
	gittest.Git(t, dir, "config", "--unset", "remote.origin.fetch", `\+refs/notes/\*:refs/notes/\*`)
	gittest.Git(t, dir, "fetch", "-q")
	_, b := w.clone("b")
	putNote(t, b, testRef, "records/b", "B")
	if _, err := b.Push(ctx, "origin", w.opts()); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "fetch", "-q")
	tracked := gittest.Git(t, dir, "rev-parse", "refs/nwdes-remotes/origin/nwdes/test")
	if tracked != remoteTip(t, w.remote, testRef) {
		t.Fatal("git fetch did not bring the tracking ref")
	}
	if titleAt(t, a, testRef, "records/b") != "" {
		t.Fatal("a plain git fetch wrote the local ref")
	}
	if _, err := a.MergeTracking(ctx, "origin", w.opts()); err != nil {
		t.Fatal(err)
	}
	if titleAt(t, a, testRef, "records/b") != "B" {
		t.Fatal("merging the tracking refs did not bring the record")
	}
}

func TestAnUnknownRemoteIsRefused(t *testing.T) {
	w := newSyncWorld(t)
	_, a := w.clone("a")
	for _, name := range []string{"nope", "-x", "a b", ""} {
		_, err := a.Fetch(context.Background(), name, w.opts())
		if !refusal.Named(err, "MissingFact") {
			t.Fatalf("fetch from %q: %v", name, err)
		}
	}
}

func TestAnUnreachableRemoteIsNamedWithGitsMessage(t *testing.T) {
	w := newSyncWorld(t)
	dir, a := w.clone("a")
	gittest.Git(t, dir, "remote", "add", "gone", filepath.Join(t.TempDir(), "missing.git"))
	_, err := a.Push(context.Background(), "gone", w.opts())
	r, ok := refusal.As(err)
	if !ok || r.Name != "RemoteFailed" || !strings.Contains(r.Detail, "missing.git") {
		t.Fatalf("err = %v", err)
	}
}

func TestGitRunsWithOnlyTransportAndCredentialVariables(t *testing.T) {
	got := gitstore.GitEnv([]string{
		"HOME=/h", "PATH=/bin", "SSH_AUTH_SOCK=/s", "GIT_SSH_COMMAND=ssh -i k", "GIT_ASKPASS=/a",
		"GIT_CONFIG_KEY_0=k", "GIT_CONFIG_VALUE_0=v", "https_proxy=p",
		"GIT_DIR=/elsewhere", "GIT_WORK_TREE=/w", "GIT_INDEX_FILE=/i", "GIT_OBJECT_DIRECTORY=/o",
		"AWS_SECRET_ACCESS_KEY=x", "LANG=fr_FR.UTF-8", "malformed",
	})
	want := "HOME=/h PATH=/bin SSH_AUTH_SOCK=/s GIT_SSH_COMMAND=ssh -i k GIT_ASKPASS=/a GIT_CONFIG_KEY_0=k GIT_CONFIG_VALUE_0=v https_proxy=p LC_ALL=C LANGUAGE=C"
	if strings.Join(got, " ") != want {
		t.Fatalf("GitEnv = %q", got)
	}
}

func TestPushNeverLeasesOnATrackingValueAPlainFetchBroughtDuringTheMerge(t *testing.T) {
	w := newSyncWorld(t)
	ctx := context.Background()
	// While a merges b's change, b pushes another record and an ordinary
	// `git fetch` in a (an IDE's, say) moves a's tracking ref past what the
	// merge took in: the kind's merge rule is where that can happen.
	var (
		b    *remote.Replicator
		dirA string
		once bool
	)
	dirA, a := w.cloneWith("a", noteKind(func(ref gitstore.RefName, path string, ours, theirs *gitstore.Record) (gitstore.Side, error) {
		if !once {
			once = true
			putNote(t, b, testRef, "late", "late from b")
			if _, err := b.Push(ctx, "origin", w.opts()); err != nil {
				return gitstore.Ours, err
			}
			gittest.Git(t, dirA, "fetch", "-q", "origin")
		}
		return gitstore.DefaultResolve(ref, path, ours, theirs)
	}))
	_, b = w.clone("b")
	if _, err := a.SetupRemote(ctx, "origin", w.opts()); err != nil {
		t.Fatal(err)
	}
	putNote(t, a, testRef, "shared", "from a")
	putNote(t, b, testRef, "shared", "from b")
	if _, err := b.Push(ctx, "origin", w.opts()); err != nil {
		t.Fatal(err)
	}
	o := w.opts()
	rep, err := a.Push(ctx, "origin", o)
	if err != nil {
		t.Fatal(err)
	}
	if !once || rep.Attempts != 2 {
		t.Fatalf("resolver ran: %v; push took %d rounds, want 2", once, rep.Attempts)
	}
	_, fresh := w.clone("fresh")
	if _, err := fresh.Fetch(ctx, "origin", w.opts()); err != nil {
		t.Fatal(err)
	}
	if got := titleAt(t, fresh, testRef, "late"); got != "late from b" {
		t.Fatalf("the remote lost b's late record (got %q)", got)
	}
}

// A fetch that cannot update a tracking ref because this clone holds its
// lock (another fetch of the same clone, here a lock left in place) is
// retried, then refused LockHeld as a local lock race, not blamed on the
// network; once the lock is gone the same fetch brings the record.
func TestAFetchLosingALocalLockRaceIsNamedSoAndNotBlamedOnTheNetwork(t *testing.T) {
	w := newSyncWorld(t)
	ctx := context.Background()
	_, a := w.clone("a")
	dirB, b := w.clone("b")
	putNote(t, a, testRef, "records/one", "1")
	if _, err := a.Push(ctx, "origin", w.opts()); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(dirB, ".git", gitstore.TrackingPrefix+"origin", strings.TrimPrefix(string(testRef), "refs/")+".lock")
	if err := os.MkdirAll(filepath.Dir(lock), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	o := w.opts()
	o.MaxAttempts = 2
	_, err := b.Fetch(ctx, "origin", o)
	r, ok := refusal.As(err)
	if !ok || r.Name != "LockHeld" || !strings.Contains(r.Detail, "could not lock a tracking ref of this clone, 2 times") ||
		!strings.Contains(r.Detail, "not the network") || !strings.Contains(r.Detail, lock) ||
		!strings.Contains(r.Remedy, "removed by hand") || !errors.Is(err, gitstore.ErrLocked) {
		t.Fatalf("a fetch whose tracking ref is locked: %v", err)
	}
	if titleAt(t, b, testRef, "records/one") != "" {
		t.Fatal("a refused fetch brought the record")
	}
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Fetch(ctx, "origin", o); err != nil {
		t.Fatal(err)
	}
	if titleAt(t, b, testRef, "records/one") != "1" {
		t.Fatal("the fetch after the lock went did not bring the record")
	}
}
