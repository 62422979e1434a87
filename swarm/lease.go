package swarm

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/gitstore/remote"
	"github.com/nwdes/nwdes/internal/names"
	"github.com/nwdes/nwdes/refusal"
)

// DefaultStaleAfter is how long a lease from another host (or one that does
// not parse) is held after its last heartbeat.
const DefaultStaleAfter = 10 * time.Minute

// Lease is who holds a card, and until when.
type Lease struct {
	Label string `json:"label"`
	Holder
	// Nonce names this taking: a renewal or release of another taking (a
	// lease lost and taken again) is refused.
	Nonce   string `json:"nonce"`
	Attempt int    `json:"attempt"`
	Taken   string `json:"taken"`
	// Until is when the lease ends unless renewed: the job's deadline plus
	// the grace to end it. A live holder past it is DRIFT.
	Until     string `json:"until"`
	Heartbeat string `json:"heartbeat"`
	// Attest is the SHA-256 of the secret the supervisor keeps in memory
	// and reveals only in the job's exit record: a job cannot forge one.
	Attest string `json:"attest"`
	JobDir string `json:"job_dir,omitempty"`
}

// State is what a lease means now.
type State string

const (
	// Free: no lease.
	Free State = "free"
	// Live: held by a process on this host that is alive, within Until.
	Live State = "live"
	// Drift: the holder is alive but past Until.
	Drift State = "drift"
	// Stranded: held on this host by a process that is gone: the card is
	// queued again.
	Stranded State = "stranded"
	// Held: held from another host (or unreadable), its heartbeat within
	// the stale window.
	Held State = "held"
	// Stale: held from another host (or unreadable) with no heartbeat for
	// the stale window: it may be taken over.
	Stale State = "stale"
)

// Takeable reports whether a card whose lease is in state s may be taken.
func (s State) Takeable() bool { return s == Free || s == Stranded || s == Stale }

const stamp = time.RFC3339Nano

// StateOf decides a lease's state (nil is Free) for a supervisor that is
// here, at now. unchanged is how long this reader has seen the lease's
// heartbeat keep the value it has now (Watch.Unchanged): a lease from
// another host is stale once it has not changed for staleAfter as the
// reader's own clock measures it. The holder's times are never compared
// with the reader's clock — a holder whose clock runs ten minutes behind
// is as held as any other — and a heartbeat from the future holds nothing
// longer: it too is stale once it stops changing.
func StateOf(l *Lease, unchanged time.Duration, here Holder, now time.Time, staleAfter time.Duration) State {
	if l == nil {
		return Free
	}
	if staleAfter <= 0 {
		staleAfter = DefaultStaleAfter
	}
	if l.Host == here.Host && l.Boot == here.Boot && l.Boot != "" && l.NS == here.NS {
		if !alive(l.Holder) {
			return Stranded
		}
		if until, err := time.Parse(stamp, l.Until); err != nil || now.After(until) {
			return Drift
		}
		return Live
	}
	if unchanged > staleAfter {
		return Stale
	}
	return Held
}

// Watch remembers, for each card, the lease heartbeat a reader saw last
// and when, by the reader's clock (Now), it first saw that value: how long
// a lease has gone unchanged is then measured by one clock, the reader's.
// A reader that has just started has seen nothing change for no time, so
// it takes over no lease of another host until it has watched it stand
// still for the stale window. Safe for concurrent use.
type Watch struct {
	Now func() time.Time

	mu   sync.Mutex
	seen map[string]sighting
}

type sighting struct {
	value string
	at    time.Time
}

// Unchanged is how long this reader has seen label's lease as it is now
// (l; for one that does not parse, written, when its ref last moved): zero
// the first time it sees this value.
func (w *Watch) Unchanged(label string, l *Lease, written time.Time) time.Duration {
	value := "unreadable " + written.UTC().Format(stamp)
	if l != nil && l.Nonce != "" {
		value = l.Nonce + " " + l.Heartbeat
	}
	t := now(w.Now)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.seen == nil {
		w.seen = map[string]sighting{}
	}
	s, ok := w.seen[label]
	if !ok || s.value != value {
		w.seen[label] = sighting{value: value, at: t}
		return 0
	}
	return t.Sub(s.at)
}

// maxLabel bounds a card's label, in bytes (names.Valid).
const maxLabel = 100

func (l *Lease) validate(path string) error {
	switch {
	case !names.Component(l.Label, maxLabel):
		return malformed(path, "label %q is not a card label", l.Label)
	case l.Nonce == "" || l.Attest == "" || l.Attempt < 1:
		return malformed(path, "a lease needs a nonce, an attestation hash and an attempt")
	}
	for _, s := range []string{l.Taken, l.Until, l.Heartbeat} {
		if _, err := time.Parse(stamp, s); err != nil {
			return malformed(path, "%q is not a time", s)
		}
	}
	return nil
}

func malformed(path, format string, args ...any) error {
	return refusal.NewUnreadable(refusal.RecordMalformed, "run git nwdes fsck; release the lease (git nwdes swarm release --force) if it is damaged",
		"%s: %s", path, fmt.Sprintf(format, args...))
}

const leasePath = "lease"

func leaseFrom(rec *gitstore.Record) (*Lease, error) {
	if rec.Kind != KindLease || rec.V != 1 {
		return nil, malformed(leasePath, "a %s v%d record, not a lease", rec.Kind, rec.V)
	}
	var l Lease
	if err := rec.Decode(&l); err != nil {
		return nil, err
	}
	if len(rec.Payloads) != 0 {
		return nil, malformed(leasePath, "a lease holds no payloads")
	}
	return &l, l.validate(leasePath)
}

// LeaseEntry is one lease as listed.
type LeaseEntry struct {
	Label string
	Tip   oid.ID
	// Lease is nil when the record does not parse (Err says why).
	Lease   *Lease
	Err     error
	Written time.Time
}

// Book keeps the leases: in this repository (Local) or on a remote
// (Remote). Every move is a compare-and-swap; losing one is an answer.
type Book interface {
	// Take puts l on label when decide accepts what is there now (nil:
	// free; a lease that does not parse is given with its error).
	Take(ctx context.Context, label string, l *Lease, decide func(cur *Lease, curErr error, written time.Time) error) (oid.ID, error)
	// Renew replaces the lease the caller holds (at tip) with l; ErrLost
	// when it no longer holds it.
	Renew(ctx context.Context, label string, tip oid.ID, l *Lease) (oid.ID, error)
	// Release removes the lease at tip; ErrLost when it moved.
	Release(ctx context.Context, label string, tip oid.ID) error
	// List reads every lease this repository knows.
	List(ctx context.Context) ([]LeaseEntry, error)
}

// ErrLost: the lease moved under its holder (released by force, taken over
// as stale).
var ErrLost = errors.New("the lease was lost")

// ErrNotTaken: decide refused what is there.
var ErrNotTaken = errors.New("not taken")

// Local keeps leases in this repository's refs/nwdes-local/swarm/leases/.
type Local struct {
	Store *gitstore.Store
}

func leaseRef(family gitstore.RefName, label string) gitstore.RefName {
	return gitstore.RefName(string(family) + label)
}

func leaseRecord(l *Lease) (*gitstore.Record, error) { return gitstore.NewRecord(KindLease, 1, l) }

// readLease reads the lease in a view: nil when there is none.
func readLease(tx gitstore.View) (*Lease, error) {
	rec, err := tx.Get(leasePath)
	if errors.Is(err, gitstore.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return leaseFrom(rec)
}

func (b *Local) written(tip oid.ID) time.Time {
	if tip.IsZero() {
		return time.Time{}
	}
	_, t, err := b.Store.Parents(tip)
	if err != nil {
		return time.Time{}
	}
	return t
}

// Take implements Book.
func (b *Local) Take(ctx context.Context, label string, l *Lease, decide func(*Lease, error, time.Time) error) (oid.ID, error) {
	return b.Store.Change(ctx, leaseRef(LocalLeases, label), "take "+label, func(tx gitstore.Edit) error {
		cur, err := readLease(tx)
		var rerr *refusal.Error
		if err != nil && !errors.As(err, &rerr) {
			return err // unreadable objects: never guessed about
		}
		if err := decide(cur, err, b.written(tx.Base())); err != nil {
			return err
		}
		rec, err := leaseRecord(l)
		if err != nil {
			return err
		}
		return tx.Put(leasePath, rec)
	})
}

// Renew implements Book.
func (b *Local) Renew(ctx context.Context, label string, tip oid.ID, l *Lease) (oid.ID, error) {
	return b.Store.Change(ctx, leaseRef(LocalLeases, label), "renew "+label, func(tx gitstore.Edit) error {
		cur, err := readLease(tx)
		if err != nil || cur == nil || cur.Nonce != l.Nonce {
			return ErrLost
		}
		rec, err := leaseRecord(l)
		if err != nil {
			return err
		}
		return tx.Put(leasePath, rec)
	})
}

// Release implements Book: the lease's ref is deleted by compare-and-swap
// from tip (git's protocol: the ref's lock, then packed-refs' lock), which
// writes no object. An empty commit in its place would cost a pack, its
// index, its .keep and a lock file a card on the way to the next job, and
// a ref that is gone reads as free just as well.
func (b *Local) Release(ctx context.Context, label string, tip oid.ID) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := b.Store.Refs().CompareAndSwap(leaseRef(LocalLeases, label), tip, oid.ID{})
	if errors.Is(err, gitstore.ErrConflict) {
		return ErrLost
	}
	if err != nil {
		return fmt.Errorf("release the lease of %s: %w", label, err)
	}
	return nil
}

// List implements Book.
func (b *Local) List(ctx context.Context) ([]LeaseEntry, error) {
	return listLeases(b.Store, LocalLeases, b.written)
}

func listLeases(st *gitstore.Store, family gitstore.RefName, written func(oid.ID) time.Time) ([]LeaseEntry, error) {
	refs, err := st.Refs().List(string(family))
	if err != nil {
		return nil, err
	}
	var out []LeaseEntry
	for name, tip := range refs {
		label := strings.TrimPrefix(string(name), string(family))
		tx, err := st.RecordsAt(name, tip)
		if err != nil {
			return nil, err
		}
		l, err := readLease(tx)
		if err == nil && l == nil {
			continue // released
		}
		var rerr *refusal.Error
		if err != nil && !errors.As(err, &rerr) {
			return nil, err
		}
		out = append(out, LeaseEntry{Label: label, Tip: tip, Lease: l, Err: err, Written: written(tip)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Label < out[j].Label })
	return out, nil
}

// Remote keeps leases on a remote: each move is one atomic push of the
// card's lease ref with the expected old value (remote.Replicator.SwapRemote),
// so supervisors sharing only the remote never both hold a card.
type Remote struct {
	Store *gitstore.Store
	Name  string
	Sync  gitstore.SyncOptions
	Tries int // rounds of take against a remote that keeps moving (default 4)

	once sync.Once
	tr   *transport
}

// transport is the clone's swarm transport every move of this book goes
// through (transport.go): a supervisor's fetches and pushes share it.
func (b *Remote) transport() *transport {
	b.once.Do(func() { b.tr = newTransport(b.Store) })
	return b.tr
}

// written is when the lease ref was last moved; it changes nothing of b
// (a supervisor's workers call it at once).
func (b *Remote) written(tip oid.ID) time.Time {
	return (&Local{Store: b.Store}).written(tip)
}

// Take implements Book: from the value this clone last saw of the remote
// lease; losing the push mirrors the remote's value, which is decided on
// again.
func (b *Remote) Take(ctx context.Context, label string, l *Lease, decide func(*Lease, error, time.Time) error) (oid.ID, error) {
	ref := leaseRef(RemoteLeases, label)
	tries := b.Tries
	if tries <= 0 {
		tries = 4
	}
	for i := 0; ; i++ {
		tip, err := b.Store.Tip(ref)
		if err != nil {
			return oid.ID{}, err
		}
		var cur *Lease
		var curErr error
		if !tip.IsZero() {
			tx, err := b.Store.RecordsAt(ref, tip)
			if err != nil {
				return oid.ID{}, err
			}
			cur, curErr = readLease(tx)
			var rerr *refusal.Error
			if curErr != nil && !errors.As(curErr, &rerr) {
				return oid.ID{}, curErr
			}
		}
		if err := decide(cur, curErr, b.written(tip)); err != nil {
			return oid.ID{}, err
		}
		var next oid.ID
		err = b.transport().exclusive(func() (err error) {
			next, err = remote.New(b.Store).SwapRemote(ctx, b.Name, ref, tip, "take "+label, func(tx gitstore.Edit) error {
				rec, err := leaseRecord(l)
				if err != nil {
					return err
				}
				return tx.Put(leasePath, rec)
			}, b.Sync)
			return err
		})
		if err == nil {
			return next, nil
		}
		if !errors.Is(err, gitstore.ErrConflict) || i+1 >= tries {
			return oid.ID{}, err
		}
	}
}

// Renew implements Book.
func (b *Remote) Renew(ctx context.Context, label string, tip oid.ID, l *Lease) (oid.ID, error) {
	var next oid.ID
	err := b.transport().exclusive(func() (err error) {
		next, err = remote.New(b.Store).SwapRemote(ctx, b.Name, leaseRef(RemoteLeases, label), tip, "renew "+label, func(tx gitstore.Edit) error {
			rec, err := leaseRecord(l)
			if err != nil {
				return err
			}
			return tx.Put(leasePath, rec)
		}, b.Sync)
		return err
	})
	if errors.Is(err, gitstore.ErrConflict) {
		return oid.ID{}, ErrLost
	}
	return next, err
}

// Release implements Book.
func (b *Remote) Release(ctx context.Context, label string, tip oid.ID) error {
	err := b.transport().exclusive(func() error {
		return remote.New(b.Store).DeleteRemote(ctx, b.Name, leaseRef(RemoteLeases, label), tip, b.Sync)
	})
	if errors.Is(err, gitstore.ErrConflict) {
		return ErrLost
	}
	return err
}

// List implements Book: the leases as this clone last fetched them.
func (b *Remote) List(ctx context.Context) ([]LeaseEntry, error) {
	return listLeases(b.Store, RemoteLeases, b.written)
}

// holds reports, without writing, whether the lease on label is still the
// one nonce names (what Renew checks before it writes), with the tip it
// is at; ErrLost when it is not. A ref still at tip, the commit this
// holder last wrote, holds that lease (a commit id names its content):
// only the ref is read then.
func (b *Local) holds(label, nonce string, tip oid.ID) (oid.ID, error) {
	if cur, err := b.Store.Tip(leaseRef(LocalLeases, label)); err == nil && !tip.IsZero() && cur == tip {
		return tip, nil
	}
	v, err := b.Store.Records(leaseRef(LocalLeases, label))
	if err != nil {
		return oid.ID{}, err
	}
	cur, err := readLease(v)
	if err != nil || cur == nil || cur.Nonce != nonce {
		return oid.ID{}, ErrLost
	}
	return v.Base(), nil
}

// holdsChecker is a Book that can check a lease without writing it.
type holdsChecker interface {
	holds(label, nonce string, tip oid.ID) (oid.ID, error)
}

// holdToRecord makes sure the lease l (at tip, its heartbeat last written
// at renewed) is still this job's before its record is written, and
// returns its tip. A lease renewed within the last heartbeat is as fresh
// as the heartbeat keeps it anyway: a book that can check it without
// writing (Local) only reads it, which spares a commit and a ref update
// per card; otherwise it is renewed.
func (s *Supervisor) holdToRecord(ctx context.Context, label string, tip oid.ID, l *Lease, renewed time.Time) (oid.ID, error) {
	t := now(s.Now)
	if c, ok := s.Book.(holdsChecker); ok && t.Sub(renewed) < s.heartbeat() {
		return c.holds(label, l.Nonce, tip)
	}
	l.Heartbeat = t.UTC().Format(stamp)
	return s.Book.Renew(ctx, label, tip, l)
}
