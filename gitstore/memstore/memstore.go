package memstore

import (
	"context"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/refusal"
)

// Options are the store's limits and clock, the git store's by default.
type Options struct {
	// Registry declares the refs and kinds; nil declares every ref under
	// refs/nwdes/ merged and under refs/nwdes-local/ local, with no kinds
	// (gitstore.OpenRegistry).
	Registry *gitstore.Registry
	// MaxRecordBytes, MaxWalk and MaxAttempts are as in gitstore.Options.
	MaxRecordBytes, MaxWalk, MaxAttempts int
	// Now is the clock for commit times.
	Now func() time.Time
}

// Store keeps refs, their commits and the blobs they hold in memory. It is
// safe for concurrent use; one Store is one repository (two handles on one
// repository are one *Store).
type Store struct {
	opts Options

	mu      sync.Mutex
	refs    map[gitstore.RefName]oid.ID
	commits map[oid.ID]*commit
	blobs   map[oid.ID][]byte
	seq     uint64
	head    oid.ID // the last commit AddCommit made
}

// commit is one state of a ref: the whole tree as files by path. Never
// changed once made, so views share it.
type commit struct {
	files   map[string]file
	parents []oid.ID
	time    time.Time
	message string
	author  string // a candidate's (AddCommit); "" for the store's own
}

type file struct {
	mode uint32
	blob oid.ID
}

var (
	_ gitstore.RecordWriter = (*Store)(nil)
	_ gitstore.NoteKeeper   = (*Store)(nil)
	_ gitstore.AppendOnly   = (*Store)(nil)
	_ gitstore.Ancestry     = (*Store)(nil)
	_ gitstore.CommitReader = (*Store)(nil)
)

// New returns an empty store; it seals the registry as opening a git store
// does.
func New(opts Options) (*Store, error) {
	if opts.Registry == nil {
		opts.Registry = gitstore.MustRegistry(gitstore.OpenRegistry())
	}
	if opts.MaxRecordBytes <= 0 {
		opts.MaxRecordBytes = gitstore.DefaultMaxRecordBytes
	}
	if opts.MaxWalk <= 0 {
		opts.MaxWalk = gitstore.DefaultMaxWalk
	}
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = gitstore.DefaultMaxAttempts
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if err := opts.Registry.Seal(); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	return &Store{
		opts:    opts,
		refs:    map[gitstore.RefName]oid.ID{},
		commits: map[oid.ID]*commit{},
		blobs:   map[oid.ID][]byte{},
	}, nil
}

// Registry returns the declarations the store was made with.
func (s *Store) Registry() *gitstore.Registry { return s.opts.Registry }

// Tip implements gitstore.RecordReader.
func (s *Store) Tip(ref gitstore.RefName) (oid.ID, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refs[ref], nil
}

// Records implements gitstore.RecordReader.
func (s *Store) Records(ref gitstore.RefName) (gitstore.View, error) {
	tip, _ := s.Tip(ref)
	return s.view(ref, tip)
}

// RecordsAt implements gitstore.RecordReader.
func (s *Store) RecordsAt(ref gitstore.RefName, commit oid.ID) (gitstore.View, error) {
	return s.view(ref, commit)
}

func (s *Store) view(ref gitstore.RefName, tip oid.ID) (*view, error) {
	v := &view{s: s, ref: ref, base: tip, readOnly: true}
	if tip.IsZero() {
		return v, nil
	}
	c, err := s.commit(tip)
	if err != nil {
		return nil, fmt.Errorf("read %s at %s: %w", ref, tip, err)
	}
	v.files = c.files
	return v, nil
}

func (s *Store) commit(id oid.ID) (*commit, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.commits[id]
	if !ok {
		return nil, fmt.Errorf("commit %s: %w", id, gitstore.ErrObjectMissing)
	}
	return c, nil
}

func (s *Store) blob(id oid.ID) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.blobs[id]
	return b, ok
}

// AddBlob stores data as a blob, as git hash-object -w would, and returns
// its id: what a record's tree (Record.Tree) may then name.
func (s *Store) AddBlob(data []byte) oid.ID {
	id := gitstore.BlobID(oid.SHA1, data)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.blobs[id] = data
	return id
}

// Log implements gitstore.RecordReader.
func (s *Store) Log(ref gitstore.RefName, fn func(gitstore.Entry) bool) error {
	h, _ := s.Tip(ref)
	for n := 0; !h.IsZero(); n++ {
		if n >= s.opts.MaxWalk {
			return refusal.New(refusal.WalkLimit,
				"narrow the walk, or raise nwdes.maxWalk",
				"history of %s is longer than the walk limit of %d commits", ref, s.opts.MaxWalk)
		}
		c, err := s.commit(h)
		if err != nil {
			return err
		}
		if !fn(gitstore.Entry{Commit: h, Parents: c.parents, Time: c.time, Message: c.message}) {
			return nil
		}
		if len(c.parents) == 0 {
			return nil
		}
		h = c.parents[0]
	}
	return nil
}

// Change implements gitstore.RecordWriter.
func (s *Store) Change(ctx context.Context, ref gitstore.RefName, message string, fn func(gitstore.Edit) error, opts ...gitstore.UpdateOption) (oid.ID, error) {
	spec, err := s.opts.Registry.Writable(ref)
	if err != nil {
		return oid.Zero, err
	}
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return oid.Zero, err
		}
		tip, _ := s.Tip(ref)
		v, err := s.view(ref, tip)
		if err != nil {
			return oid.Zero, err
		}
		v.readOnly, v.spec = false, spec
		if err := fn(v); err != nil {
			return oid.Zero, err
		}
		if !v.changed || (!tip.IsZero() && sameFiles(v.base0(), v.files)) {
			return tip, nil
		}
		if err := v.checkLayout(); err != nil {
			return oid.Zero, err
		}
		if err := v.checkImmutable(); err != nil {
			return oid.Zero, err
		}
		next, err := s.publish(v, tip, message)
		if err == nil {
			return next, nil
		}
		if !gitstore.Retries(opts...) {
			return oid.Zero, refusal.New(refusal.Conflict,
				"read the new state and try again",
				"%s moved while updating it: %v", ref, err).Wrap(err)
		}
		if attempt >= s.opts.MaxAttempts {
			return oid.Zero, refusal.New(refusal.Conflict,
				"too many writers at once; try again",
				"%s kept moving: gave up after %d attempts", ref, attempt).Wrap(err)
		}
		// Let the writer that won finish before rereading its tip.
		runtime.Gosched()
	}
}

// publish commits v's files and moves its ref from tip, or returns a
// *ConflictError when the ref has moved.
func (s *Store) publish(v *view, tip oid.ID, message string) (oid.ID, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur := s.refs[v.ref]; cur != tip {
		return oid.Zero, &gitstore.ConflictError{Ref: v.ref, Expected: tip, Actual: cur}
	}
	var parents []oid.ID
	if !tip.IsZero() && v.spec.History != gitstore.HistoryLatest {
		parents = []oid.ID{tip}
	}
	s.seq++
	id, err := s.newID(fmt.Sprintf("%s %s %s", v.ref, tip, message))
	if err != nil {
		return oid.Zero, err
	}
	for bid, b := range v.blobs {
		s.blobs[bid] = b
	}
	if !strings.HasSuffix(message, "\n") {
		// As git's commit object ends its message.
		message += "\n"
	}
	s.commits[id] = &commit{files: v.files, parents: parents, time: s.opts.Now(), message: message}
	s.refs[v.ref] = id
	return id, nil
}

// newID is a fresh commit id (s.mu held, s.seq advanced): unique, not
// git's, since the store writes no commit objects.
func (s *Store) newID(what string) (oid.ID, error) {
	h := sha1.New()
	fmt.Fprintf(h, "memstore commit %s\n", what)
	binary.Write(h, binary.BigEndian, s.seq)
	return oid.FromBytes(h.Sum(nil))
}

func sameFiles(a, b map[string]file) bool {
	if len(a) != len(b) {
		return false
	}
	for k, f := range a {
		if b[k] != f {
			return false
		}
	}
	return true
}
