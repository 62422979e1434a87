package gitstore

import (
	"context"
	"fmt"

	"github.com/nwdes/nwdes/gitstore/oid"
)

// Adopt copies into this repository the objects reachable from the commit
// head in objectsDir, the object directory of a repository nwdes does not
// trust (a job's), and points ref at head (git.Repo.Adopt says how the
// objects are read, checked and published). ref must be declared Commit,
// and must not exist or already name head (then nothing is done): Adopt is
// the one way a Commit ref is written. Past a limit of lim, or on any
// refusal of what was read, nothing is written and the error is an
// *AdoptError.
func (s *Store) Adopt(ctx context.Context, ref RefName, objectsDir string, head oid.ID, lim AdoptLimits) (*Adopted, error) {
	if err := ref.Validate(); err != nil {
		return nil, err
	}
	spec, err := s.opts.Registry.refFor(ref)
	if err != nil {
		return nil, err
	}
	if !spec.Commit {
		return nil, fmt.Errorf("adopt into %s: the ref is not declared to name a commit", ref)
	}
	return s.git.Adopt(ctx, ref, objectsDir, head, lim)
}
