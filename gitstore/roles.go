package gitstore

import (
	"context"

	"github.com/nwdes/nwdes/gitstore/oid"
)

// The roles a store plays for the packages built on it. Each is small, so
// that a package asks only for what it uses (a ledger reads and appends, a
// swarm swaps leases on a remote), and gitstoretest holds any
// implementation — the Store, or a wrapper that injects faults or counts —
// to the same contract.

// RecordReader reads the records and history of refs.
type RecordReader interface {
	// Tip is a ref's current commit, zero when it does not exist.
	Tip(ref RefName) (oid.ID, error)
	// View is a read-only view of a ref at its tip.
	View(ref RefName) (*Tx, error)
	// ViewAt is a read-only view of a ref as it was at commit.
	ViewAt(ref RefName, commit oid.ID) (*Tx, error)
	// Log walks a ref's first-parent history, newest first.
	Log(ref RefName, fn func(Entry) bool) error
}

// RecordWriter changes records by compare-and-swap of their ref.
type RecordWriter interface {
	RecordReader
	Update(ctx context.Context, ref RefName, message string, fn func(*Tx) error, opts ...UpdateOption) (oid.ID, error)
}

// NoteKeeper keeps one note per commit under NotesRef.
type NoteKeeper interface {
	Note(commit oid.ID) ([]byte, error)
	UpdateNote(ctx context.Context, commit oid.ID, message string, fn func(old []byte, found bool) ([]byte, error), opts ...UpdateOption) (oid.ID, error)
}

// Replicator moves refs between clones, each by its declared policy.
type Replicator interface {
	Fetch(ctx context.Context, remote string, o SyncOptions) (*SyncReport, error)
	Push(ctx context.Context, remote string, o SyncOptions) (*SyncReport, error)
	SwapRemote(ctx context.Context, remote string, ref RefName, old oid.ID, message string, fn func(*Tx) error, o SyncOptions) (oid.ID, error)
	DeleteRemote(ctx context.Context, remote string, ref RefName, old oid.ID, o SyncOptions) error
}

var (
	_ RecordWriter = (*Store)(nil)
	_ NoteKeeper   = (*Store)(nil)
)
