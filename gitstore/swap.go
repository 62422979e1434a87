package gitstore

import (
	"context"
	"errors"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/refusal"
)

// SwapRemote is the one way a ref declared PolicySwap moves between
// clones: a compare-and-swap on the remote itself. It applies fn to a view
// of ref at old (the value the caller last saw on the remote: the tracking
// ref after a fetch, zero for "must not exist there"), writes the result as
// one commit (parentless when the ref keeps no history), and pushes it in
// one atomic `git push --force-with-lease=<ref>:<old>`. Nothing is merged.
//
// On success the local ref and its tracking ref take the new value, which
// is returned. When the remote no longer holds old — another supervisor
// took the lease first — nothing is written there and the answer is a
// *ConflictError (errors.Is ErrConflict) carrying the remote's current
// value, which the local and tracking refs then mirror: losing the race is
// an answer, not a failure to retry. fn returning an error, or staging
// nothing, pushes nothing.
func (s *Store) SwapRemote(ctx context.Context, remote string, ref RefName, old oid.ID, message string, fn func(*Tx) error, o SyncOptions) (oid.ID, error) {
	next, err := s.swapRemote(ctx, remote, ref, toHash(old), message, fn, false, o)
	return toID(next), err
}

// DeleteRemote deletes a PolicySwap ref on remote if it still holds old
// (SwapRemote's compare-and-swap, with nothing as the new value).
func (s *Store) DeleteRemote(ctx context.Context, remote string, ref RefName, old oid.ID, o SyncOptions) error {
	_, err := s.swapRemote(ctx, remote, ref, toHash(old), "", nil, true, o)
	return err
}

func (s *Store) swapRemote(ctx context.Context, remote string, ref RefName, old plumbing.Hash, message string, fn func(*Tx) error, del bool, o SyncOptions) (plumbing.Hash, error) {
	o.fill()
	if err := ref.Validate(); err != nil {
		return plumbing.ZeroHash, err
	}
	spec, err := s.opts.Registry.refFor(ref)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if spec.Policy != PolicySwap {
		return plumbing.ZeroHash, refusal.New(refusal.PolicyRefused,
			"move it with git nwdes push (its policy decides how it travels)",
			"%s is declared %s, not swap: it does not move by a compare-and-swap on the remote", ref, spec.Policy)
	}
	if err := s.checkRemote(ctx, remote, o); err != nil {
		return plumbing.ZeroHash, err
	}
	var next plumbing.Hash
	if !del {
		if next, err = s.prepare(ref, spec, old, message, fn); err != nil {
			return plumbing.ZeroHash, err
		}
		if next.IsZero() {
			return plumbing.ZeroHash, ErrNothingStaged
		}
		// git push reads the objects from the repository: publish the
		// update's pack now, kept (.keep) from a concurrent git gc until
		// the local ref names it or the swap is lost.
		sp := s.obj.take(next)
		if sp != nil {
			if err := sp.publish(s.opts.Durable, true); err != nil {
				sp.discard()
				return plumbing.ZeroHash, err
			}
			s.obj.added(sp.name)
			defer sp.unprotect()
		}
	}
	tracking := TrackingRef(remote, ref)
	trackedBefore, err := s.refs.read(tracking)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	localBefore, err := s.refs.read(ref)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	dst := next.String() + ":" + string(ref)
	if del {
		dst = ":" + string(ref)
	}
	out, err := s.git(ctx, o, "push", "--no-verify", "--atomic", "--porcelain", "--no-recurse-submodules",
		"--force-with-lease="+string(ref)+":"+hexOrEmpty(old), remote, dst)
	if err == nil && !upToDate(out) {
		// Ours now; the caches follow from the values they had, never
		// over a newer one another writer put there meanwhile.
		s.settle(tracking, trackedBefore, next)
		if localBefore == old {
			s.settle(ref, localBefore, next)
		}
		return next, nil
	}
	if err != nil && !pushRaced(out) {
		return plumbing.ZeroHash, transportRefusal("push", remote, err)
	}
	// Lost: another writer holds the ref. git also reports a push whose
	// value the remote already holds as up to date without checking the
	// lease, which is no win either.
	actual, ferr := s.fetchOne(ctx, remote, ref, o)
	if ferr != nil {
		return plumbing.ZeroHash, ferr
	}
	return plumbing.ZeroHash, &ConflictError{Ref: ref, Expected: toID(old), Actual: toID(actual)}
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
func (s *Store) fetchOne(ctx context.Context, remote string, ref RefName, o SyncOptions) (plumbing.Hash, error) {
	tracking := TrackingRef(remote, ref)
	_, err := s.fetchGit(ctx, remote, o, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules",
		remote, "+"+string(ref)+":"+string(tracking))
	var ge *GitError
	switch {
	case errors.As(err, &ge) && strings.Contains(ge.Stderr, "couldn't find remote ref"):
		// The remote has no such ref: forget what the caches said.
		if cur, rerr := s.refs.read(tracking); rerr == nil && !cur.IsZero() {
			s.settle(tracking, cur, plumbing.ZeroHash)
		}
	case err != nil:
		return plumbing.ZeroHash, err
	}
	actual, err := s.refs.read(tracking)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if !actual.IsZero() {
		if err := s.fetchMissingOf(ctx, remote, []plumbing.Hash{actual}, true, o); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	if _, err := s.mirror(ref, actual); err != nil {
		return plumbing.ZeroHash, err
	}
	return actual, nil
}

// settle moves a cache of the remote (a swap ref or its tracking ref) from
// the value it had to the one the remote now holds. If another writer moved
// it meanwhile, theirs is as recent as ours and stays: the next fetch
// mirrors the remote again.
func (s *Store) settle(ref RefName, from, to plumbing.Hash) {
	if from == to {
		return
	}
	_ = s.swap(ref, from, to)
}
