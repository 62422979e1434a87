package sandbox

// Jobs makes job directories in the wall, for a caller that fills one
// before running in it (a gate exports the candidate's tree into Work):
// what Runner, which makes a fresh one per run, does not offer. NewJob is
// safe for concurrent use; each Job is its caller's to Close.
type Jobs interface {
	NewJob() (*Job, error)
}

var _ Jobs = (*Wall)(nil)
