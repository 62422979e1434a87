package git

import (
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/nwdes/nwdes/gitstore/oid"
)

// Parents returns a commit's parents, in order, and its committer time:
// what a history walk (a merge base, for one) needs to step and to order.
func (s *Repo) Parents(commit oid.ID) ([]oid.ID, time.Time, error) {
	h, err := toHash(commit)
	if err != nil {
		return nil, time.Time{}, err
	}
	ps, when, err := s.parents(h)
	return toIDs(ps), when, err
}

func (s *Repo) parents(commit plumbing.Hash) ([]plumbing.Hash, time.Time, error) {
	c, err := s.readCommit(commit)
	if err != nil {
		return nil, time.Time{}, err
	}
	return c.Parents, c.Time, nil
}
