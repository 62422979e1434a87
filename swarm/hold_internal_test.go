package swarm

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/internal/gittest"
)

// Before a job is recorded its lease must still be its own. A local lease
// renewed within the last heartbeat is read, not written again; an older
// one is renewed; one taken over is lost either way.
func TestHoldToRecordReadsAFreshLocalLeaseAndRenewsAnOldOne(t *testing.T) {
	dir := gittest.Init(t, false)
	loc, err := gitrepo.Discover(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := gitstore.Open(loc, gitstore.Options{Registry: gitstore.MustRegistry(Register)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	book := &Local{Store: st}
	me, err := Self("test")
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	mine := &Lease{Label: "card", Holder: me, Nonce: "mine", Attempt: 1, Attest: "00", Taken: t0.UTC().Format(stamp),
		Heartbeat: t0.UTC().Format(stamp), Until: t0.Add(time.Hour).UTC().Format(stamp)}
	takeAny := func(*Lease, error, time.Time) error { return nil }
	tip, err := book.Take(ctx, "card", mine, takeAny)
	if err != nil {
		t.Fatal(err)
	}
	s := &Supervisor{Store: st, Book: book, Heartbeat: time.Minute}

	got, err := s.holdToRecord(ctx, "card", tip, mine, t0)
	if err != nil || got != tip {
		t.Fatalf("a fresh lease: %v, %v; want its tip %v unmoved", got, err, tip)
	}
	got, err = s.holdToRecord(ctx, "card", tip, mine, t0.Add(-time.Hour))
	if err != nil || got == tip {
		t.Fatalf("a lease last written an hour ago: %v, %v; want it renewed (a new tip)", got, err)
	}
	tip = got

	theirs := *mine
	theirs.Nonce = "theirs"
	if _, err := book.Take(ctx, "card", &theirs, takeAny); err != nil {
		t.Fatal(err)
	}
	for _, renewed := range []time.Time{time.Now(), t0.Add(-time.Hour)} {
		if _, err := s.holdToRecord(ctx, "card", tip, mine, renewed); !errors.Is(err, ErrLost) {
			t.Fatalf("a lease taken over (last written at %v): %v, want ErrLost", renewed, err)
		}
	}
}
