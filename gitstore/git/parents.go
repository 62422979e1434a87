package git

import (
	"time"

	"github.com/nwdes/nwdes/gitstore/oid"
)

// Parents returns a commit's parents, in order, and its committer time:
// what a history walk (a merge base, for one) needs to step and to order.
func (s *Repo) Parents(commit oid.ID) ([]oid.ID, time.Time, error) {
	if err := s.check(commit); err != nil {
		return nil, time.Time{}, err
	}
	h := commit
	ps, when, err := s.parents(h)
	return ps, when, err
}

func (s *Repo) parents(commit oid.ID) ([]oid.ID, time.Time, error) {
	c, err := s.readCommit(commit)
	if err != nil {
		return nil, time.Time{}, err
	}
	return c.Parents, c.Time, nil
}
