package git

import (
	"errors"
	"fmt"

	"github.com/nwdes/nwdes/gitstore/oid"
)

// Sentinels callers branch on with errors.Is. go-git's own errors never
// leave this package; they are wrapped into these.
var (
	// ErrConflict: a compare-and-swap found another value than expected.
	ErrConflict = errors.New("ref changed concurrently")
	// ErrLocked: another writer holds the ref's lock beyond the timeout.
	ErrLocked = errors.New("ref is locked")
	// ErrNotFound: a path asked for is not in the tree (a missing object
	// is ErrObjectMissing).
	ErrNotFound = errors.New("not found")
	// ErrObjectMissing: a tree names an object this repository does not
	// have (a partial or shallow clone, or damage). It is never ErrNotFound:
	// a missing object is not an absent record, and nothing may be written
	// on top of a state that could not be read whole.
	ErrObjectMissing = errors.New("object missing")
)

// ConflictError says what a compare-and-swap expected and what it found.
type ConflictError struct {
	Ref      RefName
	Expected oid.ID
	Actual   oid.ID
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("ref %s: expected %s, found %s", e.Ref, showHash(e.Expected), showHash(e.Actual))
}

// Unwrap makes errors.Is(err, ErrConflict) hold.
func (e *ConflictError) Unwrap() error { return ErrConflict }

func showHash(h oid.ID) string {
	if h.IsZero() {
		return "nothing"
	}
	return h.String()
}
