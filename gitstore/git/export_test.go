package git

// UnsupportedSyntax lets the external differential tests ask which revision
// syntax Resolve refuses up front, instead of keeping a copy of the list.
var UnsupportedSyntax = unsupportedSyntax

// WalkVisits is how many commit objects the repository's history walks
// have read so far, for tests that bound a walk's cost.
func (s *Repo) WalkVisits() int64 { return s.gens.visits.Load() }

// UsesCommitGraph reports whether the repository reads generations from a
// commit-graph (opening it if it has not yet).
func (s *Repo) UsesCommitGraph() bool { return s.currentGraph() != nil }
