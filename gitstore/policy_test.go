package gitstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/refusal"
)

// The sync policies, each through real git push and fetch between clones
// and a bare remote.

const (
	ledgerRef = gitstore.RefName("refs/nwdes/ledger")
	leaseRef  = gitstore.RefName("refs/nwdes/leases/task-1")
	localRef  = gitstore.RefName("refs/nwdes-local/heartbeat")
)

// policyRegistry declares one ref of each policy, plus the test's merged
// ref, and the test.note kind.
func policyRegistry(t testing.TB) *gitstore.Registry {
	t.Helper()
	reg, err := gitstore.NewRegistry(func(r *gitstore.Registry) error {
		if err := r.DeclareKind(gitstore.KindSpec{Kind: "test.note", Version: 1}); err != nil {
			return err
		}
		for _, spec := range []gitstore.RefSpec{
			{Ref: testRef, Policy: gitstore.PolicyMerge},
			{Ref: ledgerRef, Policy: gitstore.PolicyFastForward},
			{Ref: "refs/nwdes/leases/", Policy: gitstore.PolicySwap, History: gitstore.HistoryLatest},
			{Ref: localRef, Policy: gitstore.PolicyLocal, History: gitstore.HistoryLatest},
		} {
			if err := r.DeclareRef(spec); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func refusalName(err error) string {
	if r, ok := refusal.As(err); ok {
		return r.Name
	}
	return ""
}

func actionOf(rep *gitstore.SyncReport, ref gitstore.RefName) gitstore.SyncAction {
	for _, m := range rep.Merged {
		if m.Ref == ref {
			return m.Action
		}
	}
	return ""
}

func TestRegistryRefusesDeclarationsTheStoreCouldNotHonour(t *testing.T) {
	cases := []struct {
		spec gitstore.RefSpec
		want string
	}{
		{gitstore.RefSpec{Ref: "refs/nwdes/x", Policy: gitstore.PolicyLocal}, "must be under refs/nwdes-local/"},
		{gitstore.RefSpec{Ref: "refs/nwdes-local/x", Policy: gitstore.PolicyMerge}, "must be under refs/nwdes/"},
		{gitstore.RefSpec{Ref: "refs/heads/main", Policy: gitstore.PolicySwap}, "must be under refs/nwdes/"},
		{gitstore.RefSpec{Ref: "refs/nwdes/x", Policy: gitstore.PolicyMerge, History: gitstore.HistoryLatest}, "needs policy local or swap"},
		{gitstore.RefSpec{Ref: "refs/nwdes/x", Policy: gitstore.PolicyFastForward, History: gitstore.HistoryLatest}, "needs policy local or swap"},
		{gitstore.RefSpec{Ref: "refs/nwdes/x", Policy: "sometimes"}, "unknown sync policy"},
		{gitstore.RefSpec{Ref: "refs/nwdes/x..y", Policy: gitstore.PolicyMerge}, "RefNameInvalid"},
		{gitstore.RefSpec{Ref: "refs/nwdes/x", Policy: gitstore.PolicyMerge, CheckNote: func(*gitstore.Store, plumbing.Hash, []byte) error { return nil }}, "only refs/notes/nwdes holds notes"},
		{gitstore.RefSpec{Ref: testRef, Policy: gitstore.PolicyMerge}, "declared twice"},
	}
	for _, c := range cases {
		_, err := gitstore.NewRegistry(func(r *gitstore.Registry) error {
			if err := r.DeclareRef(gitstore.RefSpec{Ref: testRef, Policy: gitstore.PolicyMerge}); err != nil {
				return err
			}
			return r.DeclareRef(c.spec)
		})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.spec, err, c.want)
		}
	}
	_, err := gitstore.NewRegistry(func(r *gitstore.Registry) error {
		r.DeclareKind(gitstore.KindSpec{Kind: "a", Version: 1})
		return r.DeclareKind(gitstore.KindSpec{Kind: "a", Version: 2})
	})
	if err == nil || !strings.Contains(err.Error(), "declared twice") {
		t.Errorf("a kind declared twice: %v", err)
	}
	reg := policyRegistry(t)
	for ref, want := range map[gitstore.RefName]gitstore.SyncPolicy{
		testRef: gitstore.PolicyMerge, ledgerRef: gitstore.PolicyFastForward, leaseRef: gitstore.PolicySwap,
		"refs/nwdes/leases/a/b": gitstore.PolicySwap, localRef: gitstore.PolicyLocal, gitstore.NotesRef: gitstore.PolicyMerge,
	} {
		if spec, ok := reg.Ref(ref); !ok || spec.Policy != want {
			t.Errorf("policy of %s: %v %v, want %s", ref, spec.Policy, ok, want)
		}
	}
	if _, ok := reg.Ref("refs/nwdes/other"); ok {
		t.Error("an undeclared ref has a declaration")
	}
}

func TestAnUndeclaredRefOrKindIsRefusedAndNothingIsWritten(t *testing.T) {
	dir := gittest.Init(t, false)
	s := openStore(t, dir, gitstore.Options{Registry: policyRegistry(t)})
	ctx := context.Background()
	rec, _ := gitstore.NewRecord("test.note", 1, noteBody{Title: "x", Tags: []string{}})
	_, err := s.Update(ctx, "refs/nwdes/other", "x", func(tx *gitstore.Tx) error { return tx.Put("r", rec) })
	if refusalName(err) != refusal.RefNotDeclared {
		t.Fatalf("update of an undeclared ref: %v", err)
	}
	other, _ := gitstore.NewRecord("test.other", 1, noteBody{})
	newer, _ := gitstore.NewRecord("test.note", 2, noteBody{})
	for _, r := range []*gitstore.Record{other, newer} {
		_, err = s.Update(ctx, testRef, "x", func(tx *gitstore.Tx) error { return tx.Put("r", r) })
		if refusalName(err) != refusal.KindNotDeclared {
			t.Fatalf("put of %s v%d: %v", r.Kind, r.V, err)
		}
	}
	if out, _ := gittest.Run(dir, "for-each-ref", "refs/nwdes/", "refs/nwdes-local/"); strings.TrimSpace(out) != "" {
		t.Fatalf("refs written: %s", out)
	}
}

func TestFastForwardRefsMoveForwardAndADivergedChainIsRefusedNamingBothTips(t *testing.T) {
	w := newSyncWorld(t)
	ctx := context.Background()
	_, a := w.cloneWith("a", policyRegistry(t))
	_, b := w.cloneWith("b", policyRegistry(t))
	putNote(t, a, ledgerRef, "e/1", "one")
	if _, err := a.Push(ctx, "origin", w.opts()); err != nil {
		t.Fatal(err)
	}
	rep, err := b.Fetch(ctx, "origin", w.opts())
	if err != nil || actionOf(rep, ledgerRef) != gitstore.SyncCreated {
		t.Fatalf("b fetch: %+v %v", rep, err)
	}
	putNote(t, b, ledgerRef, "e/2", "two")
	if _, err := b.Push(ctx, "origin", w.opts()); err != nil {
		t.Fatal(err)
	}
	if rep, err = a.Fetch(ctx, "origin", w.opts()); err != nil || actionOf(rep, ledgerRef) != gitstore.SyncFastForward {
		t.Fatalf("a fetch: %+v %v", rep, err)
	}

	// Both append: a pushes first; b's chain has diverged from the remote's.
	putNote(t, a, ledgerRef, "e/3", "three from a")
	putNote(t, b, ledgerRef, "e/3", "three from b")
	putNote(t, a, testRef, "records/merged", "from a") // a merge ref moving beside it
	if _, err := a.Push(ctx, "origin", w.opts()); err != nil {
		t.Fatal(err)
	}
	remoteBefore := remoteTip(t, w.remote, ledgerRef)
	bLedger, _ := b.Tip(ledgerRef)
	bTest, _ := b.Tip(testRef)
	for verb, run := range map[string]func() (*gitstore.SyncReport, error){
		"fetch": func() (*gitstore.SyncReport, error) { return b.Fetch(ctx, "origin", w.opts()) },
		"push":  func() (*gitstore.SyncReport, error) { return b.Push(ctx, "origin", w.opts()) },
	} {
		_, err := run()
		if refusalName(err) != refusal.ChainDiverged {
			t.Fatalf("%s of a diverged ledger: %v", verb, err)
		}
		if !strings.Contains(err.Error(), bLedger.String()[:12]) || !strings.Contains(err.Error(), remoteBefore[:12]) {
			t.Fatalf("%s: the refusal does not name both tips: %v", verb, err)
		}
		if tip, _ := b.Tip(ledgerRef); tip != bLedger {
			t.Fatalf("%s moved the local ledger", verb)
		}
		if tip, _ := b.Tip(testRef); tip != bTest {
			t.Fatalf("%s merged another ref although it refused", verb)
		}
		if remoteTip(t, w.remote, ledgerRef) != remoteBefore {
			t.Fatalf("%s moved the remote ledger", verb)
		}
	}
	// Nothing on the remote is a merge of two chains.
	if parents := strings.Fields(gittest.Git(t, w.remote, "log", "--format=%p", string(ledgerRef))); len(parents) != 2 {
		t.Fatalf("remote ledger history: %q", parents)
	}
}

func TestLocalRefsAreNeverPushedOrFetched(t *testing.T) {
	w := newSyncWorld(t)
	ctx := context.Background()
	_, a := w.cloneWith("a", policyRegistry(t))
	_, b := w.cloneWith("b", policyRegistry(t))
	putNote(t, a, localRef, "beat", "a alive")
	putNote(t, a, testRef, "records/x", "shared")
	if _, err := a.Push(ctx, "origin", w.opts()); err != nil {
		t.Fatal(err)
	}
	if out := gittest.Git(t, w.remote, "for-each-ref", "--format=%(refname)"); strings.Contains(out, "nwdes-local") || !strings.Contains(out, string(testRef)) {
		t.Fatalf("remote refs after push: %s", out)
	}
	if _, err := b.Fetch(ctx, "origin", w.opts()); err != nil {
		t.Fatal(err)
	}
	if tip, _ := b.Tip(localRef); !tip.IsZero() {
		t.Fatal("a local ref reached another clone")
	}
}

func TestSwapRefsMoveOnlyByOneCompareAndSwapOnTheRemote(t *testing.T) {
	w := newSyncWorld(t)
	ctx := context.Background()
	_, a := w.cloneWith("a", policyRegistry(t))
	_, b := w.cloneWith("b", policyRegistry(t))
	take := func(s *gitstore.Store, old plumbing.Hash, who string) (plumbing.Hash, error) {
		rec, _ := gitstore.NewRecord("test.note", 1, noteBody{Title: who, Tags: []string{}})
		return s.SwapRemote(ctx, "origin", leaseRef, old, "lease "+who, func(tx *gitstore.Tx) error { return tx.Put("lease", rec) }, w.opts())
	}
	first, err := take(a, plumbing.ZeroHash, "a")
	if err != nil {
		t.Fatal(err)
	}
	if remoteTip(t, w.remote, leaseRef) != first.String() {
		t.Fatal("the remote does not hold a's lease")
	}
	if tip, _ := a.Tip(leaseRef); tip != first {
		t.Fatal("a's local ref does not mirror the remote")
	}
	// b believes the task is free: losing the race is an answer carrying
	// the winner's value, and b now mirrors it.
	_, err = take(b, plumbing.ZeroHash, "b")
	var ce *gitstore.ConflictError
	if !errors.As(err, &ce) || ce.Actual != first || !errors.Is(err, gitstore.ErrConflict) {
		t.Fatalf("b's take: %v", err)
	}
	if tip, _ := b.Tip(leaseRef); tip != first || titleAt(t, b, leaseRef, "lease") != "a" {
		t.Fatal("b does not mirror the lease it lost to")
	}
	// b takes it over from the value it now knows (the lease expired, say);
	// a's renewal from its stale value then loses.
	second, err := take(b, first, "b")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := take(a, first, "a again"); !errors.As(err, &ce) || ce.Actual != second {
		t.Fatalf("a's stale renewal: %v", err)
	}
	// No history: every lease commit stands alone.
	if out := gittest.Git(t, w.remote, "rev-list", "--count", string(leaseRef)); out != "1" {
		t.Fatalf("the remote lease has %s commits of history", out)
	}
	// Bulk push never sends a swap ref, even one moved locally (its own
	// fetch mirrors the remote's value back).
	putNote(t, a, leaseRef, "lease", "forged locally")
	if _, err := a.Push(ctx, "origin", w.opts()); err != nil {
		t.Fatal(err)
	}
	if remoteTip(t, w.remote, leaseRef) != second.String() {
		t.Fatal("git nwdes push moved a swap ref")
	}
	// Fetch mirrors the remote over the local value.
	putNote(t, a, leaseRef, "lease", "forged again")
	rep, err := a.Fetch(ctx, "origin", w.opts())
	if err != nil || actionOf(rep, leaseRef) != gitstore.SyncMirrored {
		t.Fatalf("fetch: %+v %v", rep, err)
	}
	if tip, _ := a.Tip(leaseRef); tip != second {
		t.Fatal("fetch did not mirror the remote's lease")
	}
	// Releasing is a compare-and-swap too.
	if err := b.DeleteRemote(ctx, "origin", leaseRef, first, w.opts()); !errors.Is(err, gitstore.ErrConflict) {
		t.Fatalf("release from a stale value: %v", err)
	}
	if err := b.DeleteRemote(ctx, "origin", leaseRef, second, w.opts()); err != nil {
		t.Fatal(err)
	}
	if remoteTip(t, w.remote, leaseRef) != "" {
		t.Fatal("the lease is still on the remote")
	}
	// Only swap refs move this way.
	if _, err := a.SwapRemote(ctx, "origin", testRef, plumbing.ZeroHash, "x", func(*gitstore.Tx) error { return nil }, w.opts()); refusalName(err) != refusal.RefNotDeclared {
		t.Fatalf("swap of a merge ref: %v", err)
	}
}

func TestOfManyClonesRacingForOneLeaseExactlyOneWins(t *testing.T) {
	w := newSyncWorld(t)
	ctx := context.Background()
	const n = 6
	stores := make([]*gitstore.Store, n)
	for i := range stores {
		_, stores[i] = w.cloneWith(fmt.Sprintf("c%d", i), policyRegistry(t))
	}
	var wg sync.WaitGroup
	won := make([]bool, n)
	errs := make([]error, n)
	for i, s := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec, _ := gitstore.NewRecord("test.note", 1, noteBody{Title: fmt.Sprint(i), Tags: []string{}})
			_, err := s.SwapRemote(ctx, "origin", leaseRef, plumbing.ZeroHash, "take", func(tx *gitstore.Tx) error { return tx.Put("lease", rec) }, w.opts())
			switch {
			case err == nil:
				won[i] = true
			case !errors.Is(err, gitstore.ErrConflict):
				errs[i] = err
			}
		}()
	}
	wg.Wait()
	winners := 0
	for i := range stores {
		if errs[i] != nil {
			t.Fatalf("clone %d: %v", i, errs[i])
		}
		if won[i] {
			winners++
			if got := titleAt(t, stores[0], leaseRef, "lease"); got != "" && got != fmt.Sprint(i) && won[0] {
				t.Fatalf("clone 0 mirrors %q", got)
			}
		}
	}
	if winners != 1 {
		t.Fatalf("%d clones hold the lease", winners)
	}
}

func TestLatestOnlyHistoryKeepsNoChainHoweverManyUpdates(t *testing.T) {
	dir := gittest.Init(t, false)
	s := openStore(t, dir, gitstore.Options{Registry: policyRegistry(t)})
	n := 2000
	if testing.Short() {
		n = 200
	}
	for i := 0; i < n; i++ {
		putNote(t, s, localRef, "beat", fmt.Sprint(i))
	}
	commits := 0
	if err := s.Log(localRef, func(gitstore.Entry) bool { commits++; return true }); err != nil {
		t.Fatal(err)
	}
	if commits != 1 || titleAt(t, s, localRef, "beat") != fmt.Sprint(n-1) {
		t.Fatalf("after %d heartbeats the ref has %d commits of history", n, commits)
	}
	rep, err := s.Fsck()
	if err != nil || !rep.OK() || rep.Commits != 1 {
		t.Fatalf("fsck after %d heartbeats: %+v %v", n, rep, err)
	}
	gittest.Git(t, dir, "fsck", "--strict", "--no-dangling")
}
