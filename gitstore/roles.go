package gitstore

import (
	"context"
	"time"

	"github.com/nwdes/nwdes/gitstore/oid"
)

// The roles a store plays for the packages built on it. Each is small, so
// that a package asks only for what it uses (a ledger reads and appends, a
// judgment reads a candidate's files, a swarm swaps leases on a remote),
// and gitstoretest holds every implementation to the same contract: the
// git Store, memstore (records and notes in memory, for the tests of the
// packages above), or a wrapper that injects faults or counts.
//
// Records are read through a View and changed through an Edit (view.go),
// never through the git store's *Tx, so nothing above the store depends on
// how a tree is kept. The errors are the store's: ErrNotFound for what is
// absent, ErrConflict (a Conflict refusal) for a compare-and-swap lost,
// the named refusals of package refusal for what is refused.

// RecordReader reads the records and history of refs. Safe for concurrent
// use; every read sees one committed state of the ref, never a write in
// progress.
type RecordReader interface {
	// Tip is a ref's current commit, zero (and no error) when the ref does
	// not exist.
	Tip(ref RefName) (oid.ID, error)
	// Records is a read-only view of ref at its tip; an absent ref is an
	// empty view at the zero commit, not an error. A tip whose tree is not
	// the ref's declared layout is RefUnreadable.
	Records(ref RefName) (View, error)
	// RecordsAt is a read-only view of ref as it was at commit, which
	// must be a commit of the store (ErrObjectMissing or ErrNotFound
	// otherwise).
	RecordsAt(ref RefName, commit oid.ID) (View, error)
	// Log walks ref's first-parent history from its tip, newest first,
	// until fn returns false; an absent ref has none. A ref declared
	// HistoryLatest has one entry. Walks longer than the store's bound
	// are WalkLimit.
	Log(ref RefName, fn func(Entry) bool) error
}

// RecordWriter changes records by compare-and-swap of their ref.
type RecordWriter interface {
	RecordReader
	// Change runs fn on an Edit of ref at its tip and, when fn staged a
	// change, commits it (parent the tip, none on a HistoryLatest ref)
	// and moves the ref only if it still points at that tip. When another
	// writer moved it first, fn runs again on a fresh Edit at the new tip
	// (bounded; Conflict when the bound is passed), so fn must decide
	// from what the Edit shows; with NoRetry the loser gets a Conflict
	// refusal wrapping ErrConflict and fn runs once. An error from fn, or
	// nothing staged, writes nothing and returns the tip as it was.
	// Refused by name, changing nothing: an undeclared ref
	// (RefNotDeclared), a swap ref or a checkpoint (PolicyRefused), a
	// kind the ref does not hold (KindNotDeclared), an edit that leaves
	// the declared layout (PathInvalid) or removes or changes a file
	// under an Immutable directory (RecordImmutable). Safe for concurrent
	// use by goroutines, and for the git store by processes.
	Change(ctx context.Context, ref RefName, message string, fn func(Edit) error, opts ...UpdateOption) (oid.ID, error)
}

// NoteKeeper keeps one note per commit in a notes ref: NotesRef, or a
// display ref the registry declares Notes. The notes ref moves by
// compare-and-swap like any other (fn may run more than once); a notes ref
// not declared is RefNotDeclared.
type NoteKeeper interface {
	// Note is the note on commit under NotesRef, wrapping ErrNotFound.
	Note(commit oid.ID) ([]byte, error)
	// NoteIn is Note in the notes ref ref.
	NoteIn(ref RefName, commit oid.ID) ([]byte, error)
	// UpdateNote sets the note on commit to what fn returns given the
	// current one (nil, false when there is none).
	UpdateNote(ctx context.Context, commit oid.ID, message string, fn func(old []byte, found bool) ([]byte, error), opts ...UpdateOption) (oid.ID, error)
	// UpdateNoteIn is UpdateNote in the notes ref ref.
	UpdateNoteIn(ctx context.Context, ref RefName, commit oid.ID, message string, fn func(old []byte, found bool) ([]byte, error), opts ...UpdateOption) (oid.ID, error)
	// NotedCommits lists the commits the tip of NotesRef holds a note
	// for, in no promised order.
	NotedCommits() ([]oid.ID, error)
}

// AppendOnly reads refs whose Immutable directories only grow (published
// examinations, gate evidence, ledgers) with their history checked.
type AppendOnly interface {
	// VerifiedRecords is Records after CheckHistory of the tip.
	VerifiedRecords(ref RefName) (View, error)
	// CheckHistory checks that every commit since the ref's last verified
	// tip keeps every immutable file (HistoryRewritten naming the commit
	// and path otherwise); nil for a ref that is not append-only. Safe
	// for concurrent use.
	CheckHistory(ref RefName, tip oid.ID) error
	// Altered is the first file under dirs that commit old holds and
	// commit next lacks or changed, "" when none.
	Altered(old, next oid.ID, dirs []string) (string, error)
}

// CommitReader reads committed content: a candidate's files, its
// identities and signature. It never reads a work tree. Safe for
// concurrent use.
type CommitReader interface {
	// Resolve resolves a revision as git rev-parse does, "" as HEAD;
	// what it cannot resolve is MissingFact.
	Resolve(rev string) (oid.ID, error)
	// Files is a read-only view of commit's own tree (any entry git
	// allows: links and gitlinks are returned as such by Lookup).
	Files(commit oid.ID) (View, error)
	// ReadFile is the committed file at path, wrapping ErrNotFound when
	// path is no file of commit.
	ReadFile(commit oid.ID, path string) (File, error)
	// Walk calls fn for every file of commit's tree in path order.
	Walk(commit oid.ID, fn func(path string, mode uint32, blob oid.ID) error) error
	// ReadBlob is a blob's content by id (ErrObjectMissing when absent).
	ReadBlob(id oid.ID) ([]byte, error)
	// CommitMeta is commit's identities and signature, unverified.
	CommitMeta(commit oid.ID) (CommitMeta, error)
}

// Ancestry reads the commit graph. Walks are bounded (WalkLimit); a commit
// whose parents the clone lacks is ShallowClone. Safe for concurrent use.
type Ancestry interface {
	// Parents are commit's parents, in order, and its committer time.
	Parents(commit oid.ID) ([]oid.ID, time.Time, error)
	// IsAncestor reports whether anc is desc or one of its ancestors.
	IsAncestor(anc, desc oid.ID) (bool, error)
	// MergeBases are the best common ancestors of a and b, as git
	// merge-base --all lists them.
	MergeBases(a, b oid.ID) ([]oid.ID, error)
}

// Replicator moves refs between clones, each by its declared policy. Only
// git plays it (gitstore/remote's Replicator, over the git store); its
// SwapRemote gives fn an Edit, as Change does.
type Replicator interface {
	Fetch(ctx context.Context, remote string, o SyncOptions) (*SyncReport, error)
	Push(ctx context.Context, remote string, o SyncOptions) (*SyncReport, error)
	SwapRemote(ctx context.Context, remote string, ref RefName, old oid.ID, message string, fn func(Edit) error, o SyncOptions) (oid.ID, error)
	DeleteRemote(ctx context.Context, remote string, ref RefName, old oid.ID, o SyncOptions) error
}

var (
	_ RecordWriter = (*Store)(nil)
	_ NoteKeeper   = (*Store)(nil)
	_ AppendOnly   = (*Store)(nil)
	_ CommitReader = (*Store)(nil)
	_ Ancestry     = (*Store)(nil)
)
