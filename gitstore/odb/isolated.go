package odb

import (
	"errors"
	"fmt"

	"github.com/nwdes/nwdes/gitstore/oid"
)

// ErrTooLarge is wrapped by errors of a DB opened with OpenIsolated
// reporting an object, or a delta on the way to one, larger than its bound.
var ErrTooLarge = errors.New("object larger than the bound")

// OpenIsolated opens objectsDir alone, to read objects that another party
// wrote (a job's repository): its objects/info/alternates is never read,
// so an object it holds only through an alternate it names is not found
// (ErrNotFound), and a REF_DELTA base is looked up in objectsDir only.
// Every object, every pack entry and every delta's result is at most
// maxSize bytes (at least 1): a larger one — a header that says so, or a
// small compressed stream that would inflate past it — is refused with
// ErrTooLarge before it is inflated, and the deltas applied for one object
// are at most maxSize bytes together. Reads are otherwise those of Open:
// through an os.Root on objectsDir, re-hashed against the id asked for,
// except that no resolved object is kept for later reads (Open keeps
// delta bases): each read resolves its whole chain, so whether a read is
// refused never depends on what was read before it. It keeps no pack
// blocks either: its readers are short, and what it reads is a push.
func OpenIsolated(objectsDir string, f oid.Format, maxSize int64) (*DB, error) {
	if maxSize < 1 {
		return nil, fmt.Errorf("odb: open %s isolated: a bound of %d bytes", objectsDir, maxSize)
	}
	db, err := Open(objectsDir, f)
	if err != nil {
		return nil, err
	}
	db.altLoaded, db.maxSize, db.bases, db.blocks = true, maxSize, nil, nil
	return db, nil
}

// checkSize refuses a declared size past the DB's bound.
func (db *DB) checkSize(n int64) error {
	if db.maxSize > 0 && n > db.maxSize {
		return fmt.Errorf("%d bytes, more than %d: %w", n, db.maxSize, ErrTooLarge)
	}
	return nil
}

// checkDeltas refuses a delta chain whose deltas together, or any of whose
// results, pass the DB's bound; the result size is the second varint of
// a delta's header, read before anything is allocated for it.
func (db *DB) checkDeltas(deltas [][]byte) error {
	if db.maxSize <= 0 {
		return nil
	}
	var total int64
	for _, d := range deltas {
		total += int64(len(d))
		if err := db.checkSize(total); err != nil {
			return fmt.Errorf("deltas of %w", err)
		}
		// The sizes read as applyDelta reads them (git's rules), so
		// that the two readers of a pack answer alike.
		_, rest, err := deltaHeaderSize(d)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrCorrupt, err)
		}
		dst, _, err := deltaHeaderSize(rest)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrCorrupt, err)
		}
		if dst > uint64(db.maxSize) {
			return fmt.Errorf("a delta's result of %d bytes, more than %d: %w", dst, db.maxSize, ErrTooLarge)
		}
	}
	return nil
}
