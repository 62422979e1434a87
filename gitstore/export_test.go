package gitstore

// UnsupportedSyntax lets the external differential tests ask which revision
// syntax Resolve refuses up front, instead of keeping a copy of the list.
var UnsupportedSyntax = unsupportedSyntax

// WriteRaw stages any bytes at any path, a record.json included, as another
// program (or damage) could: fsck's tests write what Put refuses.
var WriteRaw = (*Tx).writeBlob

// WalkVisits is how many commit objects the store's history walks have
// read so far, for tests that bound a walk's cost.
func (s *Store) WalkVisits() int64 { return s.gens.visits.Load() }

// UsesCommitGraph reports whether the store reads generations from a
// commit-graph (opening it if it has not yet).
func (s *Store) UsesCommitGraph() bool { return s.currentGraph() != nil }
