package gitstore_test

import (
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/gitstoretest"
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
