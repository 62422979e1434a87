package swarm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/oid"
)

// notSyncedBook releases as a durable store whose sync failed does: the
// ref is gone, and the error says it was not made durable.
type notSyncedBook struct {
	Book
	calls int
}

func (b *notSyncedBook) Release(ctx context.Context, label string, tip oid.ID) error {
	b.calls++
	if b.calls > 1 {
		return ErrLost // the ref is gone: a second try finds it moved
	}
	return fmt.Errorf("release the lease of %s: %w", label, &gitstore.NotDurableError{Ref: "refs/nwdes/swarm/leases/" + label, Err: errors.New("fsync: input/output error")})
}

// A release that was applied but not synced is a release (said so in the
// event), not retried into a lost lease.
func TestAReleaseAppliedButNotSyncedIsReleasedNotLost(t *testing.T) {
	book := &notSyncedBook{}
	var events []Event
	s := &Supervisor{Book: book, Events: func(e Event) { events = append(events, e) }}
	if err := s.release(context.Background(), "card", 1, oid.Zero); err != nil {
		t.Fatal(err)
	}
	if book.calls != 1 || len(events) != 1 || events[0].Kind != EventReleased {
		t.Fatalf("%d releases, events %+v; want one release, reported released", book.calls, events)
	}
	if want := "not synced"; !strings.Contains(events[0].Detail, want) {
		t.Errorf("detail %q does not say %q", events[0].Detail, want)
	}
}
