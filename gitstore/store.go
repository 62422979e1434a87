package gitstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/nwdes/nwdes/gitstore/git"

	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/refusal"
)

// Defaults for Options.
const (
	DefaultMaxRecordBytes = 1 << 20
	DefaultMaxWalk        = 100_000
	DefaultMaxAttempts    = 64
)

// Identity is the author and committer of every commit nwdes writes. It is
// fixed rather than taken from user.name so that records do not carry
// personal data and commit ids depend only on content and time.
const Identity = "nwdes <nwdes@localhost>"

// Options tune a Store. The zero value is valid: defaults are filled in.
type Options struct {
	// Durable syncs the update to disk before it returns: the files it
	// wrote (its pack and index, loose objects of a merge, the ref's lock
	// file) and their directories are fsynced before the ref's rename, the
	// ref's directory after it; never the whole file system. It is on by
	// default in the CLI (see docs/data-model.md for the measured cost).
	Durable bool
	// MaxRecordBytes caps one record: its canonical JSON plus payloads.
	MaxRecordBytes int
	// MaxWalk caps how many commits a history walk visits.
	MaxWalk int
	// MaxAttempts caps compare-and-swap retries of one Update.
	MaxAttempts int
	// Registry declares the kinds of record and the refs the store holds,
	// with each ref's sync policy and history (see Registry). Nil declares
	// every ref under refs/nwdes/ merged and under refs/nwdes-local/ local,
	// with no kinds (OpenRegistry).
	Registry *Registry
	// Now is the clock for commit times.
	Now func() time.Time
	// Sleep waits between retries; tests may shorten it.
	Sleep func(time.Duration)
	// PartialClone, when it names promisor remotes, makes a read that
	// misses ask them for the object, as git's reads do (gitstore/git's promisor.go).
	PartialClone PartialClone
	// Config is the repository's git configuration as read in process
	// (gitrepo.ReadConfig) when the store was opened. GitConfig answers
	// from it instead of starting git config, which costs more than a
	// pre-push hook's whole check, unless it is Conditional (git's answer
	// could differ). Nil: GitConfig always asks git, and sees changes
	// made since the store was opened.
	Config *gitrepo.Config
}

func (o *Options) fill() {
	if o.MaxRecordBytes <= 0 {
		o.MaxRecordBytes = DefaultMaxRecordBytes
	}
	if o.MaxWalk <= 0 {
		o.MaxWalk = DefaultMaxWalk
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = DefaultMaxAttempts
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Sleep == nil {
		o.Sleep = time.Sleep
	}
	if o.Registry == nil {
		o.Registry = MustRegistry(OpenRegistry())
	}
}

// Store keeps typed records in git objects under refs, moved only by
// compare-and-swap. A Store is safe for concurrent use by goroutines, and
// separate processes (nwdes or git) exclude one another through git's lock
// files.
type Store struct {
	opts Options
	git  *git.Repo // objects, refs, history: the git layer
	refs *Refs     // git.Refs()
	// cpRefs moves the checkpoints of append-only refs (history.go).
	cpRefs *Refs
	// trees keeps the trees history checks decoded, and records the
	// envelopes of the records read and fsck checked, by blob id
	// (dirtrees.go).
	trees   *generations[oid.ID, dirEntries]
	records *generations[oid.ID, *envelope]
	// compared keeps what alteredTrees found for two trees (history.go).
	compared *generations[comparison, alteration]
}

// Close releases what the store's repository holds open (git.Repo.Close:
// pack files and their maps, index maps, commit-graph files). A
// long-running process that opens stores for hours (a supervisor) holds
// no more descriptors than one store needs. Nothing may be read or
// written through the store afterwards.
func (s *Store) Close() error { return s.git.Close() }

// Open returns a Store for the repository at loc.
func Open(loc gitrepo.Location, opts Options) (*Store, error) {
	opts.fill()
	if err := opts.Registry.freeze(); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	r, err := git.Open(loc, git.Options{Durable: opts.Durable, MaxWalk: opts.MaxWalk, Now: opts.Now, PartialClone: opts.PartialClone})
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	return &Store{opts: opts, git: r, refs: r.Refs(), cpRefs: checkpointRefs(loc.CommonDir, opts.Now),
		trees:    newGenerations[oid.ID](decodedTreeBytes, decodedTreeCost),
		records:  newGenerations[oid.ID](decodedRecordBytes, func(e *envelope) int { return 96 + len(e.Body) + len(e.Kind) }),
		compared: newGenerations[comparison](comparedTreesBytes, func(a alteration) int { return 160 + len(a.path) })}, nil
}

// Location returns where the repository lives.
func (s *Store) Location() gitrepo.Location { return s.git.Location() }

// Options returns the options the store was opened with, defaults filled.
func (s *Store) Options() Options { return s.opts }

// Tip returns a ref's current commit, zero when the ref does not exist.
func (s *Store) Tip(ref RefName) (oid.ID, error) { return s.refs.Read(ref) }

// view is a read-only view of ref at its current tip.
func (s *Store) view(ref RefName) (*Tx, error) {
	tip, err := s.refs.Read(ref)
	if err != nil {
		return nil, err
	}
	return s.viewAt(ref, tip, true)
}

func (s *Store) viewAt(ref RefName, tip oid.ID, ro bool) (*Tx, error) {
	return s.viewWith(ref, tip, ro, nil)
}

// viewWith is viewAt reading trees through trees when it is not nil
// (fsck's trees of the commit it checks).
func (s *Store) viewWith(ref RefName, tip oid.ID, ro bool, trees treeCache) (*Tx, error) {
	tx := &Tx{s: s, ref: ref, base: tip, readOnly: ro, root: &node{}, trees: trees}
	if tip.IsZero() {
		tx.root.loaded = true
		tx.root.entries = map[string]*entry{}
		return tx, nil
	}
	c, err := s.git.ReadCommit(tip)
	if err != nil {
		return nil, fmt.Errorf("read %s at %s: %w", ref, tip, err)
	}
	tx.root.ID, tx.baseTree = c.Tree, c.Tree
	if s.layout(ref) != nil {
		if err := tx.load(tx.root); err != nil {
			return nil, fmt.Errorf("read %s at %s: %w", ref, tip, err)
		}
		if what := s.layoutProblem(ref, tx.root); what != "" {
			return nil, refusal.NewUnreadable(refusal.RefUnreadable,
				"restore the ref to a commit nwdes wrote (git nwdes fetch from a good clone, or git update-ref to its previous tip from the reflog)",
				"%s at %s is not a tree of nwdes records: %s", ref, tip.String()[:12], what)
		}
	}
	return tx, nil
}

// layoutProblem says what is wrong with the top level of a ref's tree, or "".
func (s *Store) layoutProblem(ref RefName, root *node) string {
	allowed := s.layout(ref)
	for _, name := range sortedEntryNames(root.entries) {
		e := root.entries[name]
		if e.Mode != ModeTree {
			return fmt.Sprintf("%q is a file at the top level", name)
		}
		if !containsString(allowed, name) {
			return fmt.Sprintf("%q is not one of its directories (%s)", name, strings.Join(allowed, ", "))
		}
	}
	return ""
}

// checkLayout refuses an update that would leave the ref's tree outside its
// declared layout: every later read would refuse the ref (RefUnreadable),
// so the write is refused instead.
func (s *Store) checkLayout(tx *Tx) error {
	if tx.spec.Layout == nil {
		return nil
	}
	if err := tx.load(tx.root); err != nil {
		return err
	}
	if what := s.layoutProblem(tx.ref, tx.root); what != "" {
		return refusal.New(refusal.PathInvalid, "write under one of the ref's declared directories",
			"%s: %s", tx.ref, what)
	}
	return nil
}

// layout is the declared top level of ref's tree, nil when not checked.
func (s *Store) layout(ref RefName) []string {
	spec, _ := s.opts.Registry.Ref(ref)
	return spec.Layout
}

// Registry returns the declarations the store was opened with.
func (s *Store) Registry() *Registry { return s.opts.Registry }

func sortedEntryNames(m map[string]*entry) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// UpdateOption changes how one Update behaves.
type UpdateOption func(*updateConfig)

type updateConfig struct{ noRetry bool }

// NoRetry makes Update refuse with Conflict instead of retrying when the ref
// moved underneath it.
func NoRetry() UpdateOption { return func(c *updateConfig) { c.noRetry = true } }

// updateTx is Change on the concrete view (see Change).
func (s *Store) updateTx(ctx context.Context, ref RefName, message string, fn func(*Tx) error, opts ...UpdateOption) (oid.ID, error) {
	h, err := s.update(ctx, ref, message, fn, opts...)
	if err != nil && (errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS)) {
		if _, named := refusal.As(err); !named {
			return h, refusal.New(refusal.StoreNotWritable,
				"run as a user who may write the repository's .git, or on a writable file system",
				"cannot write %s: %v", ref, err).Wrap(err)
		}
	}
	return h, err
}

func (s *Store) update(ctx context.Context, ref RefName, message string, fn func(*Tx) error, opts ...UpdateOption) (oid.ID, error) {
	var cfg updateConfig
	for _, o := range opts {
		o(&cfg)
	}
	if err := ref.Validate(); err != nil {
		return oid.Zero, err
	}
	spec, err := s.opts.Registry.refFor(ref)
	if err != nil {
		return oid.Zero, err
	}
	if spec.Policy == PolicySwap {
		return oid.Zero, refusal.New(refusal.PolicyRefused,
			"move it with SwapRemote (a compare-and-swap on the remote); a fetch mirrors the remote's value here",
			"%s is declared swap: it is decided on the remote, never by a local update", ref)
	}
	if strings.HasPrefix(string(ref), CheckpointPrefix) {
		return oid.Zero, refusal.New(refusal.PolicyRefused,
			"checkpoints move only when a history check passes (Store.CheckHistory)",
			"%s is a checkpoint, not a ref of records", ref)
	}
	wait := time.Millisecond
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return oid.Zero, err
		}
		tip, err := s.refs.Read(ref)
		if err != nil {
			return oid.Zero, err
		}
		// Nothing is written on top of a state that could not be read whole.
		cp, err := s.checkHistory(ref, spec, tip)
		if err != nil {
			return oid.Zero, err
		}
		next, err := s.prepare(ref, spec, tip, message, fn)
		if err != nil {
			return oid.Zero, err
		}
		if next.IsZero() {
			s.advanceCheckpoint(ref, cp, tip)
			return tip, nil
		}
		err = s.git.MoveRef(ref, tip, next)
		var nd *NotDurableError
		if err == nil || errors.As(err, &nd) {
			// With a NotDurableError the update is applied: the new tip is
			// returned with it, and nothing is retried.
			if appendOnly(spec) {
				s.advanceCheckpoint(ref, cp, next)
			}
			return next, err
		}
		if !errors.Is(err, ErrConflict) {
			return oid.Zero, err
		}
		if cfg.noRetry {
			return oid.Zero, refusal.New(refusal.Conflict,
				"read the new state and try again",
				"%s moved while updating it: %v", ref, err).Wrap(err)
		}
		if attempt >= s.opts.MaxAttempts {
			return oid.Zero, refusal.New(refusal.Conflict,
				"too many writers at once; try again",
				"%s kept moving: gave up after %d attempts", ref, attempt).Wrap(err)
		}
		s.opts.Sleep(git.Jitter(wait))
		if wait < 50*time.Millisecond {
			wait *= 2
		}
	}
}

// prepare runs fn on a writable view of ref at tip and stages what it
// changed as one commit (see commit); zero when fn staged nothing, or
// staged edits that put back what was there (no empty commit: the ref does
// not move).
func (s *Store) prepare(ref RefName, spec RefSpec, tip oid.ID, message string, fn func(*Tx) error) (oid.ID, error) {
	tx, err := s.viewAt(ref, tip, false)
	if err != nil {
		return oid.Zero, err
	}
	tx.spec = spec
	if err := fn(tx); err != nil {
		return oid.Zero, err
	}
	if !tx.changed {
		return oid.Zero, nil
	}
	if err := s.checkLayout(tx); err != nil {
		return oid.Zero, err
	}
	if err := tx.checkImmutable(); err != nil {
		return oid.Zero, err
	}
	tree, err := tx.writeTrees()
	if err != nil || (!tip.IsZero() && tree == tx.baseTree) {
		return oid.Zero, err
	}
	return s.commit(tx, tree, message)
}

// commit adds the commit of one update to the objects writeTrees collected
// and starts writing them all as one pack to temporary files (in the
// background, while swap takes the ref's lock; fsynced there in durable
// mode): swap publishes it under the ref's lock, or discards it when the
// compare-and-swap fails. Its parent is the tip the update started from,
// except on a ref that keeps no history (HistoryLatest), whose every commit
// stands alone so that no walk grows with its updates.
func (s *Store) commit(tx *Tx, tree oid.ID, message string) (oid.ID, error) {
	var parents []oid.ID
	if !tx.base.IsZero() && tx.spec.History != HistoryLatest {
		parents = []oid.ID{tx.base}
	}
	b := tx.batch
	if b == nil {
		b = git.NewBatch(s.git.Format())
	}
	c, err := git.EncodeCommit(tree, parents, Identity, s.opts.Now(), message)
	if err != nil {
		return oid.Zero, err
	}
	h := b.Add(git.CommitObject, c)
	if err := s.git.Stage(b, h); err != nil {
		return oid.Zero, err
	}
	return h, nil
}

// Entry is one commit of a ref's history.
type Entry struct {
	Commit  oid.ID
	Parents []oid.ID
	Time    time.Time
	Message string
}

// Log walks ref's first-parent history from its tip, newest first, calling
// fn for each commit until fn returns false. The walk is bounded by
// MaxWalk; passing the bound is refused with WalkLimit.
func (s *Store) Log(ref RefName, fn func(Entry) bool) error {
	h, err := s.refs.Read(ref)
	if err != nil {
		return err
	}
	for n := 0; !h.IsZero(); n++ {
		if n >= s.opts.MaxWalk {
			return refusal.New(refusal.WalkLimit,
				"narrow the walk, or raise nwdes.maxWalk",
				"history of %s is longer than the walk limit of %d commits", ref, s.opts.MaxWalk)
		}
		c, err := s.git.ReadCommit(h)
		if err != nil {
			return fmt.Errorf("walk %s at %s: %w", ref, h, err)
		}
		if !fn(Entry{Commit: h, Parents: c.Parents, Time: c.Time, Message: c.Message}) {
			return nil
		}
		if len(c.Parents) == 0 {
			break
		}
		h = c.Parents[0]
	}
	return nil
}
