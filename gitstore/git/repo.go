package git

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/refusal"
)

// DefaultMaxWalk is Options.MaxWalk when it is not set.
const DefaultMaxWalk = 100_000

// Options tune a Repo. The zero value is valid: defaults are filled in.
type Options struct {
	// Durable syncs what a ref move publishes before the ref's rename (see
	// MoveRef), and the ref's directory after it.
	Durable bool
	// MaxWalk caps how many commits a history walk visits.
	MaxWalk int
	// Now is the clock for the times refs are locked and written.
	Now func() time.Time
	// PartialClone, when it names promisor remotes, makes a read that
	// misses ask them for the object, as git's reads do (promisor.go).
	PartialClone PartialClone
}

func (o *Options) fill() {
	if o.MaxWalk <= 0 {
		o.MaxWalk = DefaultMaxWalk
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// Repo is a git repository as nwdes reads and writes it: its objects
// (read through odb, written as packs and loose files of nwdes's own),
// its refs (moved with git's lock protocol), and the algorithms that read
// its history (revisions, merge bases with the commit-graph, parents,
// commit metadata). It knows nothing of records. A Repo is safe for
// concurrent use by goroutines; separate processes (nwdes or git) exclude
// one another through git's lock files.
type Repo struct {
	loc    gitrepo.Location
	format oid.Format // extensions.objectFormat: every id of the repository is of it
	opts   Options
	refs   *Refs
	obj    *objects

	shallowOnce sync.Once
	shallowSet  map[oid.ID]bool // the clone's shallow commits
	shallowErr  error           // why shallow could not be read

	gens genState // commit-graph and derived generations (commitgraph.go)

	lazy lazyState // what lazy fetches did not bring (promisor.go)
}

// Open returns the Repo at loc, of the object format its config names
// (SHA-1 or SHA-256).
func Open(loc gitrepo.Location, opts Options) (*Repo, error) {
	opts.fill()
	if _, err := os.Stat(loc.CommonDir); err != nil {
		return nil, fmt.Errorf("open repository: %w", err)
	}
	f, err := gitrepo.ObjectFormat(loc.CommonDir)
	if err != nil {
		return nil, err
	}
	refs := newRefs(loc.CommonDir, f)
	refs.Now = opts.Now
	refs.Durable = opts.Durable
	r := &Repo{loc: loc, format: f, opts: opts, refs: refs, obj: newObjects(loc, f)}
	r.obj.missing = r.onMissing
	return r, nil
}

// Close releases what the repository holds open: pack files and their
// maps, index maps, commit-graph files, and the temporary files of packs
// staged and never published. A long-running process that opens
// repositories for hours (a supervisor) holds no more descriptors than one
// needs. Nothing may be read or written through it afterwards.
func (s *Repo) Close() error { return errors.Join(s.obj.close(), s.closeGraphs()) }

// Location returns where the repository lives.
func (s *Repo) Location() gitrepo.Location { return s.loc }

// Refs returns the ref mover the repository uses.
func (s *Repo) Refs() *Refs { return s.refs }

// MaxWalk is the bound of history walks.
func (s *Repo) MaxWalk() int { return s.opts.MaxWalk }

func (s *Repo) readCommit(h oid.ID) (commitInfo, error) {
	t, b, err := s.obj.read(h)
	if err != nil {
		return commitInfo{}, err
	}
	if t != plumbing.CommitObject {
		return commitInfo{}, fmt.Errorf("object %s is a %s, expected a commit", h, t)
	}
	return decodeCommit(h, b)
}

// ReadCommit reads and decodes a commit.
func (s *Repo) ReadCommit(id oid.ID) (Commit, error) {
	c, err := s.readCommitID(id)
	return c.export(), err
}

// readCommitID is readCommit of an id from outside, refused when it is
// of another format than the repository's (checkID).
func (s *Repo) readCommitID(id oid.ID) (commitInfo, error) {
	if err := s.check(id); err != nil {
		return commitInfo{}, err
	}
	return s.readCommit(id)
}

// Read returns an object's type and content. A missing object is an error
// wrapping ErrObjectMissing (in a partial clone, after asking the promisor
// remotes), never ErrNotFound.
func (s *Repo) Read(id oid.ID) (ObjectType, []byte, error) {
	if err := s.check(id); err != nil {
		return 0, nil, err
	}
	t, b, err := s.obj.read(id)
	return ObjectType(t), b, err
}

// Has reports whether the object database holds id, without reading it:
// one lookup in each pack index and the loose directory. It does not ask a
// partial clone's promisor remotes; an error is an unreadable database,
// never "absent".
func (s *Repo) Has(id oid.ID) (bool, error) {
	if err := s.check(id); err != nil {
		return false, err
	}
	return s.obj.has(id)
}

// ReadTree reads and decodes a tree (see DecodeTree).
func (s *Repo) ReadTree(id oid.ID) ([]TreeEntry, error) {
	t, b, err := s.Read(id)
	if err != nil {
		return nil, err
	}
	if t != TreeObject {
		return nil, fmt.Errorf("object %s is a %s, expected a tree", id, t)
	}
	return DecodeTree(id, b)
}

// Write stores one object as a loose file and returns its id (an object
// already stored is freshened instead). A durable MoveRef syncs the loose
// files written before it.
func (s *Repo) Write(t ObjectType, data []byte) (oid.ID, error) {
	return s.obj.write(plumbing.ObjectType(t), data)
}

// Freshen reports whether id is stored, and if so sets its file's mtime
// to now, as git does before deciding not to write an object again, so
// that a concurrent git gc does not prune it before a ref reaches it.
func (s *Repo) Freshen(id oid.ID) bool {
	return !id.IsZero() && s.check(id) == nil && s.obj.freshen(id)
}

// Stage starts writing the objects of b that are not already stored as
// one pack, to temporary files (fsynced in durable mode), held for commit:
// MoveRef to commit publishes it under the ref's lock, or discards it when
// the compare-and-swap fails.
func (s *Repo) Stage(b *Batch, commit oid.ID) error {
	if err := s.check(commit); err != nil {
		return err
	}
	if b.Format() != s.format {
		return refusal.New(refusal.UnsupportedRepository,
			"make the batch with NewBatch(Repo.Format())",
			"a batch of %s objects cannot be written to a %s repository", b.Format(), s.format)
	}
	h := commit
	sp, err := s.obj.stagePack(b, s.opts.Durable)
	if err != nil {
		return err
	}
	if sp != nil {
		s.obj.hold(h, sp)
	}
	return nil
}

// MoveRef moves ref from old to next by compare-and-swap (a zero old: the
// ref must not exist; a zero next deletes it). Under the ref's lock, once
// the ref is known to hold old, the pack Stage wrote for next is protected
// by a .keep and renamed into place (the .pack, then the .idx); the .keep
// goes once the ref has moved. In durable mode, before the ref's rename:
// the pack and its index are fsynced (as they are written, concurrently
// with the lock file's creation and fsync), then objects/pack; loose
// objects written since the last durable move (a merge's) are fsynced with
// their directories; after the rename the ref's directory is fsynced. Only
// the files the update wrote are synced, never the whole file system, so
// after a power loss the ref never names an object that was not written,
// and concurrent writers do not wait on one another's data. After a
// successful move, small packs are consolidated when there are too many
// (consolidate.go).
func (s *Repo) MoveRef(ref RefName, old, next oid.ID) error {
	if err := s.check(old, next); err != nil {
		return err
	}
	return s.moveRef(ref, old, next)
}

func (s *Repo) moveRef(ref RefName, old, next oid.ID) error {
	sp := s.obj.take(next)
	durable := s.opts.Durable
	published := false
	var hook func() error
	if sp != nil || durable {
		hook = func() error {
			if durable {
				if err := s.obj.syncLoose(); err != nil {
					return err
				}
			}
			if sp != nil {
				if err := sp.publish(durable, true); err != nil {
					return err
				}
				published = true
			}
			return nil
		}
	}
	err := s.refs.compareAndSwap(ref, old, next, hook)
	if sp != nil && !published {
		sp.discard()
	}
	if published {
		// The ref names the pack's objects now (or never will): git gc
		// may consolidate it like any other.
		sp.unprotect()
	}
	var nd *NotDurableError
	if published && (err == nil || errors.As(err, &nd)) {
		s.obj.added(sp.name)
		// Best effort: the update is done whatever happens here, and
		// the next writer tries again.
		_ = s.obj.maybeConsolidate()
	}
	return err
}

// Publish renames the pack Stage wrote for commit into place without
// moving any ref (git push reads the objects from the repository), kept
// by a .keep from a concurrent git gc; done removes the .keep once a ref
// names the commit or never will. With nothing staged for commit it does
// nothing.
func (s *Repo) Publish(commit oid.ID) (done func(), err error) {
	if err := s.check(commit); err != nil {
		return nil, err
	}
	h := commit
	sp := s.obj.take(h)
	if sp == nil {
		return func() {}, nil
	}
	if err := sp.publish(s.opts.Durable, true); err != nil {
		sp.discard()
		return nil, err
	}
	s.obj.added(sp.name)
	return sp.unprotect, nil
}

// Writable refuses (StoreNotWritable) an object directory nwdes does not
// write: one other than <git dir>/objects (a server's quarantine).
func (s *Repo) Writable() error { return s.obj.writable() }
