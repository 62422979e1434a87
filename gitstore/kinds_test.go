package gitstore_test

import (
	"context"
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/gitstoretest"
	"github.com/nwdes/nwdes/internal/gittest"
)

// Declarations; the policies themselves are checked by the conformance
// suite (gitstoretest), run below.

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
	reg := gitstoretest.Registry(t)
	for ref, want := range map[gitstore.RefName]gitstore.SyncPolicy{
		gitstoretest.MergeRef: gitstore.PolicyMerge, gitstoretest.LedgerRef: gitstore.PolicyFastForward,
		gitstoretest.LeaseRef: gitstore.PolicySwap, "refs/nwdes/conformance-leases/a/b": gitstore.PolicySwap,
		gitstoretest.LocalRef: gitstore.PolicyLocal, gitstore.NotesRef: gitstore.PolicyMerge,
	} {
		if spec, ok := reg.Ref(ref); !ok || spec.Policy != want {
			t.Errorf("policy of %s: %v %v, want %s", ref, spec.Policy, ok, want)
		}
	}
	if _, ok := reg.Ref("refs/nwdes/other"); ok {
		t.Error("an undeclared ref has a declaration")
	}
}

// TestStoreConforms holds the Store to the conformance suite of its roles:
// records, history, notes and every sync policy through real git push and
// fetch.
func TestStoreConforms(t *testing.T) {
	gitstoretest.Run(t, gitstoretest.Harness{Open: func(t *testing.T, dir string, reg *gitstore.Registry) gitstoretest.Store {
		return openStore(t, dir, gitstore.Options{Registry: reg})
	}})
}

var heartbeats = flag.Int("heartbeats", 2000, "updates TestHeartbeatsLeaveNothingToWalk makes (a tenth with -short); the issue's proof is -heartbeats 200000")

// TestHeartbeatsLeaveNothingToWalk: a ref declared latest-only takes N
// updates and every later operation still reads one commit: its log, fsck,
// a view and the ancestry question a sync would ask. Nothing any of them
// does depends on N, which is the point; the run at 200,000 is in
// docs/performance.md.
func TestHeartbeatsLeaveNothingToWalk(t *testing.T) {
	n := *heartbeats
	if testing.Short() {
		n /= 10
	}
	dir := gittest.Init(t, false)
	s := openStore(t, dir, gitstore.Options{Registry: gitstoretest.Registry(t), MaxWalk: 10})
	ctx := context.Background()
	var first plumbing.Hash
	start := time.Now()
	for i := 0; i < n; i++ {
		rec, err := gitstore.NewRecord(gitstoretest.Kind, 1, gitstoretest.Body{Title: "alive", N: i})
		if err != nil {
			t.Fatal(err)
		}
		h, err := s.Update(ctx, gitstoretest.LocalRef, "beat", func(tx *gitstore.Tx) error { return tx.Put("beat", rec) })
		if err != nil {
			t.Fatalf("heartbeat %d: %v", i, err)
		}
		if i == 0 {
			first = h
		}
	}
	t.Logf("%d heartbeats in %v", n, time.Since(start))
	// MaxWalk is 10: any walk that crossed the heartbeats would refuse.
	commits := 0
	if err := s.Log(gitstoretest.LocalRef, func(gitstore.Entry) bool { commits++; return true }); err != nil || commits != 1 {
		t.Fatalf("log after %d heartbeats: %d commits, %v", n, commits, err)
	}
	rep, err := s.Fsck()
	if err != nil || !rep.OK() || rep.Commits != 1 {
		t.Fatalf("fsck after %d heartbeats: %+v %v", n, rep, err)
	}
	tip, _ := s.Tip(gitstoretest.LocalRef)
	if anc, err := s.IsAncestor(first, tip); err != nil || (anc != (n == 1)) {
		t.Fatalf("is the first heartbeat an ancestor of the last: %v %v", anc, err)
	}
	tx, err := s.View(gitstoretest.LocalRef)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := tx.Get("beat")
	if err != nil {
		t.Fatal(err)
	}
	var b gitstoretest.Body
	if err := rec.Decode(&b); err != nil || b.N != n-1 {
		t.Fatalf("last heartbeat reads %+v %v", b, err)
	}
	gittest.Git(t, dir, "fsck", "--strict", "--no-dangling")
}
