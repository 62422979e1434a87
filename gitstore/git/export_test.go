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

// SetRaceHooks sets the functions the ref mover calls between a scan's
// walk of the loose refs and its read of packed-refs, and between a
// delete's rewrite of packed-refs and its removal of the loose file, so
// that a test can run git pack-refs at exactly those instants.
func (r *Refs) SetRaceHooks(betweenScans, beforeLooseRemove func()) {
	r.betweenScans, r.beforeLooseRemove = betweenScans, beforeLooseRemove
}
