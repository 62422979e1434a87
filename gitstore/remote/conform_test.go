package remote_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/gitstoretest"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/gitstore/remote"
	"github.com/nwdes/nwdes/internal/gittest"
)

// TestStoreConforms holds the Store to the conformance suite of its roles:
// records, history, notes and every sync policy through real git push and
// fetch.
func TestStoreConforms(t *testing.T) {
	gitstoretest.Run(t, gitstoretest.Harness{Open: func(t *testing.T, dir string, reg *gitstore.Registry) gitstoretest.Store {
		return openStore(t, dir, gitstore.Options{Registry: reg})
	}})
}

// TestALostSwapInAPartialCloneReadsTheWinnersLeaseWhole: the loser mirrors
// the winner's value, and in a --filter=blob:none clone its record blobs
// are fetched too, so the lease reads instead of ObjectMissing.
func TestALostSwapInAPartialCloneReadsTheWinnersLeaseWhole(t *testing.T) {
	ctx := context.Background()
	bare := gittest.Init(t, true)
	gittest.Git(t, bare, "config", "uploadpack.allowfilter", "true")
	gittest.Git(t, bare, "config", "uploadpack.allowanysha1inwant", "true")
	seed := gittest.Init(t, false)
	gittest.Git(t, seed, "push", "-q", bare, "main")
	root := t.TempDir()
	gittest.Git(t, root, "clone", "-q", bare, "full")
	gittest.Git(t, root, "clone", "-q", "--filter=blob:none", "file://"+bare, "partial")
	full := openStore(t, filepath.Join(root, "full"), gitstore.Options{Registry: gitstoretest.Registry(t)})
	partial := openStore(t, filepath.Join(root, "partial"), gitstore.Options{Registry: gitstoretest.Registry(t)})
	o := gitstore.SyncOptions{Environ: gittest.Env(root)}
	take := func(s *remote.Replicator, who string) error {
		rec, _ := gitstore.NewRecord(gitstoretest.Kind, 1, gitstoretest.Body{Title: who})
		_, err := s.SwapRemote(ctx, "origin", gitstoretest.LeaseRef, oid.Zero, "take",
			func(tx gitstore.Edit) error { return tx.Put("lease", rec) }, o)
		return err
	}
	if err := take(full, "full"); err != nil {
		t.Fatal(err)
	}
	if err := take(partial, "partial"); !errors.Is(err, gitstore.ErrConflict) {
		t.Fatalf("the partial clone's take: %v", err)
	}
	tx, err := partial.Records(gitstoretest.LeaseRef)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := tx.Get("lease")
	if err != nil {
		t.Fatalf("the mirrored lease: %v", err)
	}
	var b gitstoretest.Body
	if err := rec.Decode(&b); err != nil || b.Title != "full" {
		t.Fatalf("the mirrored lease reads %+v %v", b, err)
	}
}
