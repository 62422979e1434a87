package gitstore

import (
	"context"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

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
func (s *Store) SwapRemote(ctx context.Context, remote string, ref RefName, old plumbing.Hash, message string, fn func(*Tx) error, o SyncOptions) (plumbing.Hash, error) {
	return s.swapRemote(ctx, remote, ref, old, message, fn, false, o)
}

// DeleteRemote deletes a PolicySwap ref on remote if it still holds old
// (SwapRemote's compare-and-swap, with nothing as the new value).
func (s *Store) DeleteRemote(ctx context.Context, remote string, ref RefName, old plumbing.Hash, o SyncOptions) error {
	_, err := s.swapRemote(ctx, remote, ref, old, "", nil, true, o)
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
		return plumbing.ZeroHash, refusal.New(refusal.RefNotDeclared,
			"move it with git nwdes push (its policy decides how it travels)",
			"%s is declared %s, not swap: it does not move by a compare-and-swap on the remote", ref, spec.Policy)
	}
	if err := s.checkRemote(ctx, remote, o); err != nil {
		return plumbing.ZeroHash, err
	}
	var next plumbing.Hash
	if !del {
		tx, err := s.viewAt(ref, old, false)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		tx.spec = spec
		if err := fn(tx); err != nil {
			return plumbing.ZeroHash, err
		}
		if !tx.changed {
			return old, nil
		}
		tree, err := tx.writeTrees()
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if next, err = s.commit(tx, tree, message); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	spec2 := next.String() + ":" + string(ref)
	if del {
		spec2 = ":" + string(ref)
	}
	out, err := s.git(ctx, o, "push", "--no-verify", "--atomic", "--porcelain", "--no-recurse-submodules",
		"--force-with-lease="+string(ref)+":"+hexOrEmpty(old), remote, spec2)
	if err != nil {
		if !pushRaced(out) {
			return plumbing.ZeroHash, transportRefusal("push", remote, err)
		}
		actual, ferr := s.fetchOne(ctx, remote, ref, o)
		if ferr != nil {
			return plumbing.ZeroHash, ferr
		}
		return plumbing.ZeroHash, &ConflictError{Ref: ref, Expected: old, Actual: actual}
	}
	s.settle(ref, TrackingRef(remote, ref), next)
	return next, nil
}

// fetchOne brings the remote's current value of one ref into its tracking
// ref, mirrors it onto the local ref, and returns it (zero when absent).
func (s *Store) fetchOne(ctx context.Context, remote string, ref RefName, o SyncOptions) (plumbing.Hash, error) {
	out, err := s.git(ctx, o, "ls-remote", "--refs", remote, string(ref))
	if err != nil {
		return plumbing.ZeroHash, transportRefusal("ls-remote", remote, err)
	}
	var actual plumbing.Hash
	for _, line := range strings.Split(string(out), "\n") {
		id, name, ok := strings.Cut(line, "\t")
		if ok && name == string(ref) && isHex40(id) {
			actual = plumbing.NewHash(id)
		}
	}
	tracking := TrackingRef(remote, ref)
	if !actual.IsZero() {
		if _, err := s.git(ctx, o, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules",
			remote, "+"+string(ref)+":"+string(tracking)); err != nil {
			return plumbing.ZeroHash, transportRefusal("fetch", remote, err)
		}
	}
	s.settle(ref, tracking, actual)
	return actual, nil
}

// settle points the local and tracking refs of a swap ref at what the
// remote holds. Both are caches of the remote, so a writer that moved
// them meanwhile is left to the next fetch, never fought.
func (s *Store) settle(ref, tracking RefName, to plumbing.Hash) {
	for _, r := range []RefName{tracking, ref} {
		cur, err := s.refs.Read(r)
		if err != nil || cur == to {
			continue
		}
		// A failure leaves only a cache stale: the remote holds the truth,
		// and the next fetch mirrors it.
		_ = s.refs.CompareAndSwap(r, cur, to)
	}
}
