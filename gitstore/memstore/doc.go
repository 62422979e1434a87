// Package memstore is an in-memory record and note store: it plays the
// record roles of package gitstore (RecordWriter, NoteKeeper, AppendOnly,
// and Ancestry over its own commits) and CommitReader over candidate
// commits a test adds (AddCommit),
// with the git store's semantics — compare-and-swap of a ref with bounded
// reruns of the caller's function on a conflict, the registry's refs,
// kinds, layouts and immutable directories refused by the same names,
// latest-only refs that keep no chain, ErrNotFound for what is absent —
// and passes the record and note half of gitstoretest. It keeps no git
// objects and replicates nothing: a test of a package above the store uses
// it where git is not what the test is about, and real git where it is.
//
// Layering: imports gitstore, gitstore/oid and refusal only; nothing in
// the product imports it.
package memstore
