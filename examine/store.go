package examine

import (
	"context"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/oid"
)

// The roles examine asks of a store (gitstore's roles.go). The CLI passes
// the git store; a function asks for the narrowest role it reads.

// Records is what reading published examinations and gate evidence needs:
// views of the records, their history checked.
type Records interface {
	gitstore.RecordReader
	gitstore.AppendOnly
}

// Reading is what a Reader reads: the records, and the candidate's
// contracts and commit identities.
type Reading interface {
	Records
	gitstore.CommitReader
}

// Store is every role examine asks of a store: its records (read,
// verified and changed), notes, and the candidate's committed content and
// ancestry.
type Store interface {
	gitstore.RecordWriter
	gitstore.AppendOnly
	gitstore.NoteKeeper
	gitstore.CommitReader
	gitstore.Ancestry
}

// Fetcher is a store that may lack objects (a partial clone) and can ask
// its promisor remote for what a commit's tree needs, before an export
// reads it. ExportTree asks a store that is one; a store that holds every
// object it names need not be.
type Fetcher interface {
	FetchMissing(ctx context.Context, commits ...oid.ID) error
}
