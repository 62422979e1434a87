package gitstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/nwdes/nwdes/gitstore/git"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/refusal"
)

// The vocabulary of replication, and the store's half of it. Moving refs
// between clones (transport through git, the swap policy, the tree merge)
// is package gitstore/remote's job, which implements Replicator; what it
// asks of the store is here: the namespaces, the options and reports of
// the role, the merge rule kinds declare (Resolver), and the two ways a
// remote's commit enters a local ref under the ref's history checks
// (Integrate) or a commit is made for a remote compare-and-swap (Prepare).

// TrackingPrefix is where fetched nwdes refs are kept, per remote.
const TrackingPrefix = "refs/nwdes-remotes/"

// LocalPrefix is where a clone keeps records that are its own: outside
// refs/nwdes/, so that push, fetch and the refspecs remote setup writes
// never carry them. fsck checks them like any other.
const LocalPrefix = "refs/nwdes-local/"

// DefaultSyncAttempts bounds Push's fetch-merge-push rounds.
const DefaultSyncAttempts = 8

// Side names one side of a merge.
type Side int

const (
	// Ours is the local ref's side.
	Ours Side = iota
	// Theirs is the remote's side.
	Theirs
)

// Resolver decides which side's record to keep when both sides changed the
// record at path differently since their merge base (a record is a
// directory holding record.json). It must be deterministic and symmetric —
// swapping ours and theirs must swap the answer — so that two clones merging
// the same pair build the same tree. The side not kept stays reachable in
// the merge commit's other parent.
type Resolver func(ref RefName, path string, ours, theirs *Record) (Side, error)

// SyncOptions configure Fetch, Push and SetupRemote (the Replicator
// role, gitstore/remote).
type SyncOptions struct {
	// Environ is the caller's environment ("KEY=value"). Only what git needs
	// for transport, SSH, credentials and configuration is passed on (see
	// GitEnv); the library never reads the process environment itself.
	Environ []string
	// MaxAttempts bounds Push's rounds when the remote keeps moving.
	MaxAttempts int
	// GitPath is the git binary; "git" (looked up on PATH) when empty.
	GitPath string
	// AfterMerge, when set, runs after the remote's refs were merged into
	// the local ones and before anything is pushed: what is derived from
	// the merged records (notes rendered from examinations) is brought up to
	// date there, so that it is pushed up to date too.
	AfterMerge func(ctx context.Context) error
}

// Fill puts defaults in the options left zero.
func (o *SyncOptions) Fill() {
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = DefaultSyncAttempts
	}
	if o.GitPath == "" {
		o.GitPath = "git"
	}
}

// Run is how git is run for these options.
func (o SyncOptions) Run() git.RunOptions {
	return git.RunOptions{Environ: o.Environ, GitPath: o.GitPath}
}

// SyncAction says what happened to one local ref.
type SyncAction string

const (
	SyncCreated     SyncAction = "created"      // the ref did not exist locally
	SyncFastForward SyncAction = "fast-forward" // local was behind the remote
	SyncMerged      SyncAction = "merged"       // both had advanced: merge commit
	SyncUpToDate    SyncAction = "up-to-date"   // same commit on both sides
	SyncAhead       SyncAction = "ahead"        // the remote is behind local
	SyncPushed      SyncAction = "pushed"       // the remote was moved to local
	SyncMirrored    SyncAction = "mirrored"     // a swap ref took the remote's value
	SyncSkipped     SyncAction = "skipped"      // no kind declares the ref: left alone
)

// RefSync is what a sync did to one ref.
type RefSync struct {
	Ref    RefName    `json:"ref"`
	Action SyncAction `json:"action"`
	// Before and After are the local ref's values around a merge, or the
	// remote's around a push; absent refs are "".
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
	// Remote is the remote's value that was merged, or pushed over.
	Remote string `json:"remote,omitempty"`
	// Resolved lists paths where both sides had changed a record or note
	// differently and a merge rule chose (records) or concatenated (notes).
	Resolved []string `json:"resolved,omitempty"`
	// Policy is the ref's declared sync policy ("" when undeclared).
	Policy SyncPolicy `json:"policy,omitempty"`
}

// SyncReport is what Fetch or Push did.
type SyncReport struct {
	Remote string `json:"remote"`
	// Merged is the fetch-and-merge of every tracked ref (the last round's).
	Merged []RefSync `json:"merged"`
	// Pushed lists the refs moved on the remote (Push only).
	Pushed []RefSync `json:"pushed"`
	// Attempts is how many fetch-merge-push rounds Push took.
	Attempts int `json:"attempts"`
}

// TrackingRef is where the remote's value of a local nwdes ref is kept.
func TrackingRef(remote string, ref RefName) RefName {
	return RefName(TrackingPrefix + remote + "/" + strings.TrimPrefix(string(ref), "refs/"))
}

// DefaultResolve keeps the record whose canonical record.json sorts last
// byte-wise, then the one whose payloads (by name) sort last. It knows
// nothing of kinds: packages whose records are rewritten in place (an
// index, a draft) give a Resolver that knows which one is newer.
func DefaultResolve(_ RefName, _ string, ours, theirs *Record) (Side, error) {
	eo, err := ours.encode()
	if err != nil {
		return Ours, err
	}
	et, err := theirs.encode()
	if err != nil {
		return Ours, err
	}
	c := bytes.Compare(eo, et)
	if c == 0 {
		c = comparePayloads(ours.Payloads, theirs.Payloads)
	}
	if c < 0 {
		return Theirs, nil
	}
	return Ours, nil
}

func comparePayloads(a, b map[string][]byte) int {
	names := map[string][]byte{}
	maps.Copy(names, a)
	maps.Copy(names, b)
	for _, n := range slices.Sorted(maps.Keys(names)) {
		x, inA := a[n]
		y, inB := b[n]
		switch {
		case inA && !inB:
			return 1
		case inB && !inA:
			return -1
		}
		if c := bytes.Compare(x, y); c != 0 {
			return c
		}
	}
	return 0
}

// RefFor is the declaration of ref, refused by name when nothing declares
// it (RefNotDeclared): how replication looks a ref's policy up.
func (r *Registry) RefFor(ref RefName) (RefSpec, error) { return r.refFor(ref) }

// GitConfig returns every value of key as git itself reads it (see
// git.Repo.Config), from Options.Config when it was given and is not
// Conditional.
func (s *Store) GitConfig(ctx context.Context, key string, o SyncOptions) ([]string, error) {
	if c := s.opts.Config; c != nil && !c.Conditional {
		return c.Printed(key), nil
	}
	o.Fill()
	return s.git.Config(ctx, key, o.Run())
}

// Merge computes the commit that merges theirs into ours over their merge
// base (zero when they share none) for ref, and the paths where a rule
// chose between both sides. gitstore/remote gives the tree merge.
type Merge func(ref RefName, ours, theirs, base oid.ID, message string) (commit oid.ID, resolved []string, err error)

// Integrate moves ref towards theirs by its policy (merge or fast-forward),
// by compare-and-swap, recomputing when another writer moved it meanwhile
// (bounded by MaxAttempts): created when absent, fast-forwarded when
// behind, left when theirs is contained; otherwise a merge ref gets a merge
// commit and a fast-forward ref is refused (ChainDiverged). On an
// append-only ref, the local tip must pass CheckHistory and every commit
// theirs brings must keep its parents' immutable records (VerifyHistory's
// check): a remote history that drops or changes one is refused
// (HistoryRewritten), never merged.
func (s *Store) Integrate(ctx context.Context, ref RefName, policy SyncPolicy, theirs oid.ID, from string, merge Merge) (RefSync, error) {
	spec, err := s.opts.Registry.refFor(ref)
	if err != nil {
		return RefSync{}, err
	}
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return RefSync{}, err
		}
		ours, err := s.refs.Read(ref)
		if err != nil {
			return RefSync{}, err
		}
		cp, err := s.checkHistory(ref, spec, ours)
		if err != nil {
			return RefSync{}, err
		}
		rs := RefSync{Ref: ref, Before: HexOrEmpty(ours), After: HexOrEmpty(ours), Remote: HexOrEmpty(theirs)}
		var next oid.ID
		switch {
		case theirs.IsZero() || ours == theirs:
			rs.Action = SyncUpToDate
			return rs, nil
		case ours.IsZero():
			rs.Action, next = SyncCreated, theirs
		default:
			base, err := s.mergeBase(ours, theirs)
			if err != nil {
				return RefSync{}, err
			}
			switch base {
			case theirs:
				rs.Action = SyncAhead
				return rs, nil
			case ours:
				rs.Action, next = SyncFastForward, theirs
			default:
				if policy != PolicyMerge {
					return RefSync{}, Diverged(ref, ours, theirs)
				}
				var resolved []string
				next, resolved, err = merge(ref, ours, theirs, base, fmt.Sprintf("merge %s from %s", ref, from))
				if err != nil {
					return RefSync{}, err
				}
				rs.Action, rs.Resolved = SyncMerged, resolved
			}
		}
		if appendOnly(spec) {
			// theirs' own commits, then the merge commit written here.
			if err := s.verifyIncoming(ref, spec, []oid.ID{ours}, theirs, from); err != nil {
				return RefSync{}, err
			}
			if next != theirs {
				if err := s.verifyIncoming(ref, spec, []oid.ID{ours, theirs}, next, from); err != nil {
					return RefSync{}, err
				}
			}
		}
		err = s.git.MoveRef(ref, ours, next)
		if err == nil {
			if appendOnly(spec) {
				s.advanceCheckpoint(ref, cp, next)
			}
			rs.After = next.String()
			return rs, nil
		}
		if !errors.Is(err, ErrConflict) {
			return RefSync{}, err
		}
		if attempt >= s.opts.MaxAttempts {
			return RefSync{}, refusal.New(refusal.Conflict, "too many writers at once; try again",
				"%s kept moving while merging %s: gave up after %d attempts", ref, from, attempt).Wrap(err)
		}
		s.opts.Sleep(git.Jitter(time.Millisecond))
	}
}

// HexOrEmpty is an id as a report shows it: "" for none.
func HexOrEmpty(h oid.ID) string {
	if h.IsZero() {
		return ""
	}
	return h.String()
}

// mergeBase returns a best common ancestor of a and b, zero when the two
// histories share nothing (as when two clones each created a ref). After
// criss-cross merges any best base serves: the merge is a union with
// deterministic rules, so the choice cannot lose a record.
func (s *Store) mergeBase(a, b oid.ID) (oid.ID, error) {
	best, err := s.git.MergeBases(a, b)
	if err != nil {
		return oid.Zero, fmt.Errorf("merge base of %s and %s: %w", a, b, err)
	}
	if len(best) == 0 {
		return oid.Zero, nil
	}
	return best[0], nil
}

// Diverged is the refusal (ChainDiverged) of a fast-forward ref whose
// local and remote tips each hold commits the other lacks.
func Diverged(ref RefName, ours, theirs oid.ID) error {
	return refusal.New(refusal.ChainDiverged,
		"find which chain is right (git log both tips); a ledger is never merged: reset the wrong side to the other (git update-ref) after keeping what it holds",
		"%s has diverged: local %s and remote %s each hold commits the other lacks", ref, ours.String()[:12], theirs.String()[:12])
}

// Prepare writes the commit of fn's edits of ref on base (zero: on
// nothing) as Change would, without moving any ref: a commit for a
// compare-and-swap on a remote (gitstore/remote's SwapRemote). Its objects
// are staged (git.Repo.Stage) for git.Repo.Publish or MoveRef. Zero when
// fn staged nothing.
func (s *Store) Prepare(ref RefName, base oid.ID, message string, fn func(Edit) error) (oid.ID, error) {
	if err := ref.Validate(); err != nil {
		return oid.Zero, err
	}
	spec, err := s.opts.Registry.refFor(ref)
	if err != nil {
		return oid.Zero, err
	}
	return s.prepare(ref, spec, base, message, func(tx *Tx) error { return fn(tx) })
}
