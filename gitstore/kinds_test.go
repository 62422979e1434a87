package gitstore_test

import (
	"context"

	"flag"

	"strings"
	"testing"
	"time"

	"github.com/nwdes/nwdes/gitstore/oid"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/gitstore/gitstoretest"
	"github.com/nwdes/nwdes/gitstore/remote"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/refusal"
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
		{gitstore.RefSpec{Ref: "refs/nwdes/x", Policy: gitstore.PolicyMerge, CheckNote: func(*gitstore.Store) func(oid.ID, []byte) error { return nil }}, "only a notes ref holds notes"},
		{gitstore.RefSpec{Ref: "refs/notes/commits", Policy: gitstore.PolicyFastForward, Notes: true}, "a notes ref is one ref under refs/notes/"},
		{gitstore.RefSpec{Ref: "refs/nwdes/y", Policy: gitstore.PolicyMerge, Notes: true}, "a notes ref is one ref under refs/notes/"},
		{gitstore.RefSpec{Ref: testRef, Policy: gitstore.PolicyMerge}, "declared twice"},
		{gitstore.RefSpec{Ref: testRef + "/", Policy: gitstore.PolicyMerge}, "git cannot hold both"},
		{gitstore.RefSpec{Ref: gitstore.NotesRef, Policy: gitstore.PolicyMerge, Layout: []string{"x"}}, "declared twice"},
		{gitstore.RefSpec{Ref: "refs/nwdes/y", Policy: gitstore.PolicyMerge, Layout: []string{"a/b"}}, "not a directory name"},
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

var heartbeatCount = flag.Int("heartbeats", 2000, "updates TestHeartbeatsLeaveNothingToWalk makes (a tenth with -short); the issue's proof is -heartbeats 200000")

// TestHeartbeatsLeaveNothingToWalk: a ref declared latest-only takes N
// updates and every later operation still reads one commit: its log, fsck,
// a view and the ancestry question a sync would ask. Nothing any of them
// does depends on N, which is the point; the run at 200,000 is in
// docs/performance.md.
func TestHeartbeatsLeaveNothingToWalk(t *testing.T) {
	n := *heartbeatCount
	if testing.Short() {
		n /= 10
	}
	dir := gittest.Init(t, false)
	s := openStore(t, dir, gitstore.Options{Registry: gitstoretest.Registry(t), MaxWalk: 10})
	ctx := context.Background()
	var first oid.ID
	start := time.Now()
	for i := 0; i < n; i++ {
		rec, err := gitstore.NewRecord(gitstoretest.Kind, 1, gitstoretest.Body{Title: "alive", N: i})
		if err != nil {
			t.Fatal(err)
		}
		h, err := s.Change(ctx, gitstoretest.LocalRef, "beat", func(tx gitstore.Edit) error { return tx.Put("beat", rec) })
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
	tx, err := s.Records(gitstoretest.LocalRef)
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

func TestRegistryDefaultsFreezesAndChecksNamedKinds(t *testing.T) {
	reg := gitstoretest.Registry(t)
	if spec, _ := reg.Ref(gitstoretest.LeaseRef); spec.History != gitstore.HistoryLatest {
		t.Fatalf("a swap ref declared without a history keeps %q", spec.History)
	}
	check := func(*gitstore.Store) func(oid.ID, []byte) error { return nil }
	if err := reg.DeclareRef(gitstore.RefSpec{Ref: gitstore.NotesRef, Policy: gitstore.PolicyMerge, CheckNote: check}); err != nil {
		t.Fatalf("adding the notes check: %v", err)
	}
	if err := reg.DeclareRef(gitstore.RefSpec{Ref: gitstore.NotesRef, Policy: gitstore.PolicyMerge, CheckNote: check}); err == nil {
		t.Fatal("the notes check was added twice")
	}
	dir := gittest.Init(t, false)
	openStore(t, dir, gitstore.Options{Registry: reg})
	if err := reg.DeclareKind(gitstore.KindSpec{Kind: "late", Version: 1}); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("a declaration after a store opened: %v", err)
	}
	bad := gitstore.MustRegistry(func(r *gitstore.Registry) error {
		return r.DeclareRef(gitstore.RefSpec{Ref: "refs/nwdes/z", Policy: gitstore.PolicyMerge, Kinds: []gitstore.Kind{"nobody.declared"}})
	})
	loc, err := gitrepo.Discover(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gitstore.Open(loc, gitstore.Options{Registry: bad}); err == nil || !strings.Contains(err.Error(), "nobody.declared") {
		t.Fatalf("a ref naming an undeclared kind: %v", err)
	}
}

func TestWritesThatWouldBreakTheRefOrSkipTheKindCheckAreRefused(t *testing.T) {
	reg := gitstore.MustRegistry(func(r *gitstore.Registry) error {
		if err := r.DeclareKind(gitstore.KindSpec{Kind: gitstoretest.Kind, Version: 1}); err != nil {
			return err
		}
		return r.DeclareRef(gitstore.RefSpec{Ref: testRef, Policy: gitstore.PolicyMerge, Layout: []string{"records"}})
	})
	dir := gittest.Init(t, false)
	s := openStore(t, dir, gitstore.Options{Registry: reg})
	ctx := context.Background()
	rec, _ := gitstore.NewRecord(gitstoretest.Kind, 1, gitstoretest.Body{})
	if _, err := s.Change(ctx, testRef, "ok", func(tx gitstore.Edit) error { return tx.Put("records/a", rec) }); err != nil {
		t.Fatal(err)
	}
	tip, _ := s.Tip(testRef)
	for name, fn := range map[string]func(gitstore.Edit) error{
		"a record outside the layout": func(tx gitstore.Edit) error { return tx.Put("elsewhere/r", rec) },
		"a file at the top":           func(tx gitstore.Edit) error { return tx.WriteBlob("loose", []byte("x")) },
		"a record.json by hand": func(tx gitstore.Edit) error {
			return tx.WriteBlob("records/b/record.json", []byte(`{"body":{},"kind":"evil","v":99}`))
		},
	} {
		_, err := s.Change(ctx, testRef, "bad", fn)
		if n := refusalName(err); n != refusal.PathInvalid && n != refusal.KindNotDeclared {
			t.Errorf("%s: %v", name, err)
		}
		if now, _ := s.Tip(testRef); now != tip {
			t.Fatalf("%s moved the ref", name)
		}
	}
	if _, err := s.Records(testRef); err != nil {
		t.Fatalf("the ref no longer reads: %v", err)
	}
	// A merge ref is the only kind MergeInto moves.
	ff := gitstore.MustRegistry(gitstore.OpenRegistry(), func(r *gitstore.Registry) error {
		return r.DeclareRef(gitstore.RefSpec{Ref: "refs/nwdes/chain", Policy: gitstore.PolicyFastForward})
	})
	s2 := openStore(t, dir, gitstore.Options{Registry: ff})
	if _, err := remote.New(s2).MergeInto(ctx, "refs/nwdes/chain", tip, "elsewhere", gitstore.SyncOptions{}); refusalName(err) != refusal.PolicyRefused {
		t.Fatalf("MergeInto of a fast-forward ref: %v", err)
	}
}

func refusalName(err error) string {
	if r, ok := refusal.As(err); ok {
		return r.Name
	}
	return ""
}
