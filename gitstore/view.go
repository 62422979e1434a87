package gitstore

import (
	"context"
	"fmt"

	"github.com/nwdes/nwdes/gitstore/oid"
)

// View is a read-only view of one ref's records at one commit: what a
// consumer reads, whoever stores it. *Tx is the git store's; memstore has
// its own.
//
// Absent things are ErrNotFound: ReadBlob and Get of a path that holds no
// file (or no record) wrap it; List and ReadDir of an absent directory
// return none and no error; Lookup reports found false. A path with an
// empty, ".", ".." or ".git" component is refused (PathInvalid), except
// that ReadBlob and Get report it as not found. A view never changes after
// it is taken: writers elsewhere move the ref, not the view, so a view may
// be read from one goroutine while others write; one view is not safe for
// concurrent use by itself.
type View interface {
	// Ref is the ref the view belongs to.
	Ref() RefName
	// Base is the commit the view was taken at, zero for an absent ref.
	Base() oid.ID
	// Get reads the record at path (record.json, its payloads and its
	// tree's id), wrapping ErrNotFound when there is none.
	Get(path string) (*Record, error)
	// ReadBlob returns the bytes at path, wrapping ErrNotFound.
	ReadBlob(path string) ([]byte, error)
	// List returns the names directly under dir, sorted.
	List(dir string) ([]string, error)
	// ReadDir returns the entries directly under dir, sorted by name.
	ReadDir(dir string) ([]DirEntry, error)
	// Lookup returns the entry at path, found false when there is none.
	Lookup(path string) (DirEntry, bool, error)
}

// Edit is a View with edits staged in memory: the function a
// RecordWriter.Change runs is given one. Nothing staged is visible to any
// other reader until Change has moved the ref; an Edit is used by one
// goroutine, and only inside the function it was given to.
type Edit interface {
	View
	// Put stores rec at path, replacing any record there. A kind not
	// declared for the ref (or newer than declared) is refused
	// (KindNotDeclared), a record over the store's size limit
	// (RecordTooLarge), a bad payload name or path (PathInvalid).
	Put(path string, rec *Record) error
	// WriteBlob stages data at path; a record.json is refused
	// (KindNotDeclared): records are written with Put.
	WriteBlob(path string, data []byte) error
	// Remove deletes whatever is at path; removing nothing is no error.
	Remove(path string) error
}

var (
	_ View = (*Tx)(nil)
	_ Edit = (*Tx)(nil)
)

// The Store's methods of its roles that speak View and Edit. Inside the
// package they are built on the concrete *Tx, which only the git store can
// make; outside it every reader and writer takes and returns the
// interfaces (Prepare, the replication layer's, included), so that a
// consumer written against the roles runs on any implementation. Commit
// content has shortcuts beside Files (ReadFile, Walk) that a CommitReader
// offers without a View.

// Records is a read-only view of the records of ref at its current tip.
func (s *Store) Records(ref RefName) (View, error) { return asView(s.view(ref)) }

// RecordsAt is a read-only view of the records of ref as they were at
// commit.
func (s *Store) RecordsAt(ref RefName, commit oid.ID) (View, error) {
	return asView(s.viewAt(ref, commit, true))
}

// VerifiedRecords is Records after CheckHistory of the ref's tip: the
// records of ref at a tip whose history holds every record it ever held.
func (s *Store) VerifiedRecords(ref RefName) (View, error) { return asView(s.verifiedView(ref)) }

// Files is commit's own tree as a read-only View.
func (s *Store) Files(commit oid.ID) (View, error) { return asView(s.commitFiles(commit)) }

// Change applies fn to a view of ref at its tip and, if fn staged changes,
// writes them as one commit whose parent is that tip, then moves the ref by
// compare-and-swap. On a conflict it re-reads the tip and runs fn again
// (bounded, with jittered backoff), so fn re-validates what it wants against
// the newest state; with NoRetry it refuses instead. If fn returns an error,
// or stages nothing, nothing is written and the ref does not move.
//
// On an append-only ref (declared with Immutable directories) nothing is
// written on a tip that fails CheckHistory (HistoryRewritten), and edits
// that remove or change a file under an immutable directory are refused
// (RecordImmutable); after the write the ref's checkpoint moves to the new
// tip. When the tip is the checkpoint that costs one ref read and one ref
// write, neither synced.
//
// It returns the new tip (or the unchanged tip when fn staged nothing, or
// staged edits that leave the tree as it was).
func (s *Store) Change(ctx context.Context, ref RefName, message string, fn func(Edit) error, opts ...UpdateOption) (oid.ID, error) {
	return s.updateTx(ctx, ref, message, func(tx *Tx) error { return fn(tx) }, opts...)
}

// asView keeps a nil *Tx from becoming a non-nil View.
func asView(tx *Tx, err error) (View, error) {
	if err != nil {
		return nil, err
	}
	return tx, nil
}

// ReadRecord reads the record at path through v: its record.json, the id
// of its tree when it has one, and its payloads; ErrNotFound when there is
// none. Every View's Get is this (Tx's and memstore's).
func ReadRecord(v View, path string) (*Record, error) {
	r, err := readEnvelope(v, path)
	if err != nil {
		return nil, err
	}
	if err := readRecordRest(v, path, r); err != nil {
		return nil, err
	}
	return r, nil
}

// cachedEnvelope is the record this store decoded before from blob id,
// while the object database still has the blob: a record is read from the
// repository as it is now, and a blob gone since (pruned, damaged) is
// missing, not the record it once held. Checking costs a lookup in the
// pack indexes, not a read; where the lookup fails the blob is read again.
func (s *Store) cachedEnvelope(id oid.ID) (*envelope, bool) {
	env, ok := s.records.get(id)
	if !ok || !s.stillHas(id) {
		return nil, false
	}
	return env, true
}

// readEnvelope reads and decodes path's record.json. Through a Tx, one
// this store has decoded before (the same blob: fsck checked it, say, and
// now renders a note from it) is neither read nor checked again.
func readEnvelope(v View, path string) (*Record, error) {
	name := path + "/record.json"
	read := func() ([]byte, error) { return v.ReadBlob(name) }
	var keep func(*Record)
	if tx, ok := v.(*Tx); ok {
		e, err := tx.blobEntry(name)
		if err != nil {
			return nil, err
		}
		if env, ok := tx.s.cachedEnvelope(e.ID); ok {
			return env.record(), nil
		}
		read = func() ([]byte, error) { return tx.readBlobAt(name, e) }
		// Only what was read from the object database is kept: a blob
		// staged in this Tx is not written if its change aborts, and a
		// later tree naming it must read as missing, not as a record.
		if _, staged := tx.blobs[e.ID]; !staged {
			keep = func(r *Record) { tx.s.records.put(e.ID, envelopeOf(r)) }
		}
	}
	b, err := read()
	if err != nil {
		return nil, err
	}
	r, err := decodeRecord(b)
	if err != nil {
		return nil, fmt.Errorf("record %s in %s: %w", path, v.Ref(), err)
	}
	if keep != nil {
		keep(r)
	}
	return r, nil
}

// readRecordRest reads into r, decoded from path's record.json, the id of
// its tree and its payloads.
func readRecordRest(v View, path string, r *Record) error {
	if e, found, err := v.Lookup(path + "/" + recordTreeDir); err != nil {
		return err
	} else if found && e.Mode == ModeTree {
		r.TreeID = e.Hash
	}
	names, err := v.List(path + "/payload")
	if err != nil {
		return err
	}
	for _, name := range names {
		p, err := v.ReadBlob(path + "/payload/" + name)
		if err != nil {
			return err
		}
		if r.Payloads == nil {
			r.Payloads = map[string][]byte{}
		}
		r.Payloads[name] = p
	}
	return nil
}
