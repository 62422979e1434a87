package remote

import (
	"context"
	"errors"
	"github.com/nwdes/nwdes/gitstore"
	"strings"

	"github.com/nwdes/nwdes/gitstore/git"

	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/refusal"
)

// SwapRemote is the one way a ref declared gitstore.PolicySwap moves between
// clones: a compare-and-swap on the remote itself. It applies fn to a view
// of ref at old (the value the caller last saw on the remote: the tracking
// ref after a fetch, zero for "must not exist there"), writes the result as
// one commit (parentless when the ref keeps no history), and pushes it in
// one atomic `git push --force-with-lease=<ref>:<old>`. Nothing is merged.
//
// On success the local ref and its tracking ref take the new value, which
// is returned. When the remote no longer holds old — another supervisor
// took the lease first — nothing is written there and the answer is a
// *gitstore.ConflictError (errors.Is gitstore.ErrConflict) carrying the remote's current
// value, which the local and tracking refs then mirror: losing the race is
// an answer, not a failure to retry. fn returning an error, or staging
// nothing, pushes nothing.
func (s *Replicator) SwapRemote(ctx context.Context, remote string, ref gitstore.RefName, old oid.ID, message string, fn func(gitstore.Edit) error, o gitstore.SyncOptions) (oid.ID, error) {
	next, err := s.swapRemote(ctx, remote, ref, (old), message, fn, false, o)
	return (next), err
}

// DeleteRemote deletes a gitstore.PolicySwap ref on remote if it still holds old
// (SwapRemote's compare-and-swap, with nothing as the new value).
func (s *Replicator) DeleteRemote(ctx context.Context, remote string, ref gitstore.RefName, old oid.ID, o gitstore.SyncOptions) error {
	_, err := s.swapRemote(ctx, remote, ref, (old), "", nil, true, o)
	return err
}

func (s *Replicator) swapRemote(ctx context.Context, remote string, ref gitstore.RefName, old oid.ID, message string, fn func(gitstore.Edit) error, del bool, o gitstore.SyncOptions) (oid.ID, error) {
	o.Fill()
	if err := ref.Validate(); err != nil {
		return oid.Zero, err
	}
	spec, err := s.Registry().RefFor(ref)
	if err != nil {
		return oid.Zero, err
	}
	if spec.Policy != gitstore.PolicySwap {
		return oid.Zero, refusal.New(refusal.PolicyRefused,
			"move it with git nwdes push (its policy decides how it travels)",
			"%s is declared %s, not swap: it does not move by a compare-and-swap on the remote", ref, spec.Policy)
	}
	if err := s.checkRemote(ctx, remote, o); err != nil {
		return oid.Zero, err
	}
	var next oid.ID
	if !del {
		if next, err = s.Prepare(ref, old, message, fn); err != nil {
			return oid.Zero, err
		}
		if next.IsZero() {
			return oid.Zero, gitstore.ErrNothingStaged
		}
		// git push reads the objects from the repository: publish the
		// update's pack now, kept (.keep) from a concurrent git gc until
		// the local ref names it or the swap is lost.
		done, err := s.Git().Publish(next)
		if err != nil {
			return oid.Zero, err
		}
		defer done()
	}
	tracking := gitstore.TrackingRef(remote, ref)
	trackedBefore, err := s.Refs().Read(tracking)
	if err != nil {
		return oid.Zero, err
	}
	localBefore, err := s.Refs().Read(ref)
	if err != nil {
		return oid.Zero, err
	}
	dst := next.String() + ":" + string(ref)
	if del {
		dst = ":" + string(ref)
	}
	out, err := s.run(ctx, o, "push", "--no-verify", "--atomic", "--porcelain", "--no-recurse-submodules",
		"--force-with-lease="+string(ref)+":"+gitstore.HexOrEmpty(old), remote, dst)
	if err == nil && !upToDate(out) {
		// gitstore.Ours now; the caches follow from the values they had, never
		// over a newer one another writer put there meanwhile.
		s.settle(tracking, trackedBefore, next)
		if localBefore == old {
			s.settle(ref, localBefore, next)
		}
		return next, nil
	}
	if err != nil && !pushRaced(out) {
		return oid.Zero, git.TransportRefusal("push", remote, err)
	}
	// Lost: another writer holds the ref. git also reports a push whose
	// value the remote already holds as up to date without checking the
	// lease, which is no win either.
	actual, ferr := s.fetchOne(ctx, remote, ref, o)
	if ferr != nil {
		return oid.Zero, ferr
	}
	return oid.Zero, &gitstore.ConflictError{Ref: ref, Expected: (old), Actual: (actual)}
}

// upToDate reports a porcelain line for a ref git did not update because
// the remote already held the value ('='): git skips the lease check then.
func upToDate(porcelain []byte) bool {
	for _, line := range strings.Split(string(porcelain), "\n") {
		if strings.HasPrefix(line, "=\t") {
			return true
		}
	}
	return false
}

// fetchOne brings the remote's current value of one ref, with every object
// it reaches (also in a partial clone), into its tracking ref, mirrors it
// onto the local ref, and returns it (zero when the remote has no such
// ref). The value is taken from what the fetch wrote, so a ref never names
// an object that was not fetched.
func (s *Replicator) fetchOne(ctx context.Context, remote string, ref gitstore.RefName, o gitstore.SyncOptions) (oid.ID, error) {
	tracking := gitstore.TrackingRef(remote, ref)
	_, err := s.fetchGit(ctx, remote, o, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules",
		remote, "+"+string(ref)+":"+string(tracking))
	var ge *git.GitError
	switch {
	case errors.As(err, &ge) && strings.Contains(ge.Stderr, "couldn't find remote ref"):
		// The remote has no such ref: forget what the caches said.
		if cur, rerr := s.Refs().Read(tracking); rerr == nil && !cur.IsZero() {
			s.settle(tracking, cur, oid.Zero)
		}
	case err != nil:
		return oid.Zero, err
	}
	actual, err := s.Refs().Read(tracking)
	if err != nil {
		return oid.Zero, err
	}
	if !actual.IsZero() {
		if err := s.Git().FetchMissingFrom(ctx, remote, []oid.ID{actual}, true, o.Run()); err != nil {
			return oid.Zero, err
		}
	}
	if _, err := s.mirror(ref, actual); err != nil {
		return oid.Zero, err
	}
	return actual, nil
}

// settle moves a cache of the remote (a swap ref or its tracking ref) from
// the value it had to the one the remote now holds. If another writer moved
// it meanwhile, theirs is as recent as ours and stays: the next fetch
// mirrors the remote again.
func (s *Replicator) settle(ref gitstore.RefName, from, to oid.ID) {
	if from == to {
		return
	}
	_ = s.Git().MoveRef(ref, from, to)
}
