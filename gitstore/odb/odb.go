package odb

import (
	"bufio"
	"crypto/sha1"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/klauspost/compress/zlib"

	"github.com/nwdes/nwdes/gitstore/oid"
)

var (
	// ErrNotFound is wrapped by errors reporting that no store holds the
	// requested object.
	ErrNotFound = errors.New("object not found")
	// ErrCorrupt is wrapped by errors reporting malformed on-disk data: a bad
	// index or pack, an object whose inflated size or hash does not match,
	// an unresolvable delta.
	ErrCorrupt = errors.New("corrupt object data")
	// ErrFormat is wrapped by errors reporting an id of another object
	// format than the DB's (a SHA-256 id asked of a SHA-1 repository).
	ErrFormat = errors.New("object id of another format")
)

const (
	// maxDeltaDepth bounds delta chains so that a crafted pack (REF_DELTA
	// objects naming each other) fails instead of looping. git itself writes
	// chains of at most a few thousand.
	maxDeltaDepth = 10000
	// maxAlternateDepth matches git's limit on alternates of alternates.
	maxAlternateDepth = 5
)

// DB reads objects from a git objects directory. It is safe for concurrent
// use; Close must not race with other calls.
type DB struct {
	f         oid.Format // the object format: every id, index and pack is of it
	mu        sync.Mutex
	stores    []*store // stores[0] is the directory passed to Open
	extra     []string // alternates given by the environment, searched first
	altLoaded bool
	closed    bool
	// maxSize, when over 0, bounds every object read and every delta
	// applied on the way to one (OpenIsolated): a larger one is refused
	// (ErrTooLarge) before it is inflated.
	maxSize int64
	// bases keeps objects resolved from packs (basecache.go); nil keeps
	// none.
	bases *baseCache
	// blocks keeps pack bytes for bulk readers (blockcache.go); nil
	// keeps none.
	blocks    *blockCache
	zlibPool  sync.Pool // zlib readers; each holds ~40 KiB of window state
	bufioPool sync.Pool // bufio.Readers used to walk pack entries
	loosePool sync.Pool // bufio.Readers used to parse loose headers
}

// Open returns a DB for objectsDir (normally .git/objects) of a repository
// whose objects are named in format f (its extensions.objectFormat). It
// only checks that objectsDir is a directory; packs, indexes and alternates
// are read on first use.
func Open(objectsDir string, f oid.Format) (*DB, error) {
	if !f.Valid() {
		return nil, fmt.Errorf("odb: open %s: object format %v", objectsDir, f)
	}
	abs, err := filepath.Abs(objectsDir)
	if err != nil {
		return nil, fmt.Errorf("odb: open %s: %w", objectsDir, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("odb: open: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("odb: open %s: not a directory", abs)
	}
	return &DB{f: f, stores: []*store{{dir: abs, f: f}}, bases: newBaseCache(defaultBaseCacheBytes), blocks: newBlockCache(defaultBlockCacheBytes, blockCacheAfter)}, nil
}

// OpenWithAlternates is Open with more object directories to search after
// objectsDir and before its info/alternates, as git searches
// GIT_ALTERNATE_OBJECT_DIRECTORIES (how a server-side hook sees both the
// quarantined objects of a push and the repository's own).
func OpenWithAlternates(objectsDir string, f oid.Format, alternates []string) (*DB, error) {
	db, err := Open(objectsDir, f)
	if err != nil {
		return nil, err
	}
	for _, a := range alternates {
		if a = filepath.Clean(a); filepath.IsAbs(a) {
			db.extra = append(db.extra, a)
		}
	}
	return db, nil
}

// emptyTree is the id of the tree with no entries in the DB's format. git
// knows this tree without storing it (find_cached_object in its
// object-file.c): git commit-tree 4b825dc…, the usual way to make an empty
// root commit, leaves a commit whose tree no store holds, and git reads that
// tree all the same. It is parsed when a lookup misses, not into a package
// map at the program's start, which every verb paid for (issue 26).
func (db *DB) emptyTree() oid.ID {
	if db.f == oid.SHA256 {
		return oid.MustParse("6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321")
	}
	return oid.MustParse("4b825dc642cb6eb9a060e54bf8d69288fbee4904")
}

// Format is the object format the DB reads.
func (db *DB) Format() oid.Format { return db.f }

// check refuses an id of another format than the DB's: it names no object
// here, and cutting or padding it would name another one.
func (db *DB) check(h oid.ID) error {
	if h.IsZero() {
		return fmt.Errorf("the zero id names no object: %w", ErrNotFound)
	}
	if h.Format() != db.f {
		return fmt.Errorf("object id %s is %s, the repository's objects are named by %s: %w", h, h.Format(), db.f, ErrFormat)
	}
	return nil
}

// Read returns the type and content of the object h. The error wraps
// ErrNotFound if no store has it and ErrCorrupt if it is present but
// unreadable. The empty tree is read whether or not a store holds it, as
// git reads it.
func (db *DB) Read(h oid.ID) (plumbing.ObjectType, []byte, error) {
	if err := db.check(h); err != nil {
		return plumbing.InvalidObject, nil, fmt.Errorf("odb: read: %w", err)
	}
	typ, data, err := db.read(h)
	if err != nil {
		return plumbing.InvalidObject, nil, fmt.Errorf("odb: read %s: %w", h, err)
	}
	if got := hashObject(db.f, typ, data); got != h {
		return plumbing.InvalidObject, nil, fmt.Errorf("odb: read %s: content hashes to %s: %w", h, got, ErrCorrupt)
	}
	return typ, data, nil
}

// Has reports whether some store holds h, without inflating it. Like git
// cat-file -e, it reports the empty tree present even where no store holds
// it, since Read reads it.
func (db *DB) Has(h oid.ID) (bool, error) {
	if h.IsZero() {
		return false, nil
	}
	if err := db.check(h); err != nil {
		return false, fmt.Errorf("odb: has: %w", err)
	}
	found, err := db.has(h)
	if err == nil && !found {
		// Same reasoning as in read: a repack may have happened since
		// the pack directory was listed.
		if err = db.rescan(); err == nil {
			found, err = db.has(h)
		}
	}
	if err != nil {
		return false, fmt.Errorf("odb: has %s: %w", h, err)
	}
	return found || h == db.emptyTree(), nil
}

// Close releases every open index and pack. Reads after Close fail.
func (db *DB) Close() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return nil
	}
	db.closed = true
	db.bases.reset()
	db.blocks.reset()
	var errs []error
	for _, s := range db.stores {
		errs = append(errs, s.close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("odb: close: %w", err)
	}
	return nil
}

func (db *DB) read(h oid.ID) (plumbing.ObjectType, []byte, error) {
	typ, data, _, err := db.lookup(h, 0)
	if err == nil || !errors.Is(err, ErrNotFound) {
		return typ, data, err
	}
	// Between our listing of the pack directory and now, git gc/repack
	// may have packed the object (and deleted the loose copy) or replaced
	// the pack it lived in. One rescan closes that window; git does the
	// same in reprepare_packed_git.
	if err := db.rescan(); err != nil {
		return plumbing.InvalidObject, nil, err
	}
	typ, data, _, err = db.lookup(h, 0)
	if errors.Is(err, ErrNotFound) && h == db.emptyTree() {
		return plumbing.TreeObject, []byte{}, nil
	}
	return typ, data, err
}

// lookup searches every store once, without rescanning. depth counts the
// delta links already followed by the caller; the links that made the
// object are returned with it (none for a loose object).
func (db *DB) lookup(h oid.ID, depth int) (plumbing.ObjectType, []byte, int, error) {
	var skipped []error
	for i := 0; ; i++ {
		s, err := db.store(i)
		if err != nil {
			return plumbing.InvalidObject, nil, 0, err
		}
		if s == nil {
			break
		}
		packs, err := s.packList()
		if err != nil {
			return plumbing.InvalidObject, nil, 0, err
		}
		for _, p := range packs {
			off, ok, err := p.find(h)
			if err != nil {
				// A broken index must not hide objects held
				// elsewhere; it is reported only if nothing else
				// has the object.
				skipped = append(skipped, err)
				continue
			}
			if !ok {
				continue
			}
			typ, data, links, err := db.readPacked(p, off, depth)
			if errors.Is(err, errPackGone) {
				continue
			}
			if err != nil {
				return plumbing.InvalidObject, nil, 0, err
			}
			return typ, data, links, nil
		}
		typ, data, err := db.readLoose(s, h)
		if err == nil {
			return typ, data, 0, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return plumbing.InvalidObject, nil, 0, err
		}
	}
	if len(skipped) > 0 {
		return plumbing.InvalidObject, nil, 0, fmt.Errorf("%w (skipped unreadable packs: %w)", ErrNotFound, errors.Join(skipped...))
	}
	return plumbing.InvalidObject, nil, 0, ErrNotFound
}

func (db *DB) has(h oid.ID) (bool, error) {
	var skipped []error
	for i := 0; ; i++ {
		s, err := db.store(i)
		if err != nil {
			return false, err
		}
		if s == nil {
			// As lookup: a broken index does not hide an object held
			// elsewhere, and is the answer only when none has it.
			if len(skipped) > 0 {
				return false, fmt.Errorf("look up %s (skipped unreadable packs): %w", h, errors.Join(skipped...))
			}
			return false, nil
		}
		packs, err := s.packList()
		if err != nil {
			return false, err
		}
		for _, p := range packs {
			_, ok, err := p.find(h)
			if err != nil {
				skipped = append(skipped, err)
				continue
			}
			if ok {
				return true, nil
			}
		}
		ok, err := s.hasLoose(h)
		if err != nil || ok {
			return ok, err
		}
	}
}

// store returns the i-th store, loading alternates when the caller first
// looks past the primary directory, so a DB whose objects are all local
// never opens objects/info/alternates. It returns nil past the last store.
func (db *DB) store(i int) (*store, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return nil, errClosed()
	}
	if i > 0 && !db.altLoaded && len(db.stores) > 0 {
		for _, d := range db.extra {
			if fi, err := os.Stat(d); err == nil && fi.IsDir() && d != db.stores[0].dir {
				db.stores = append(db.stores, &store{dir: d, f: db.f})
			}
		}
		alts, err := loadAlternates(db.stores[0])
		if err != nil {
			return nil, err
		}
		db.stores = append(db.stores, alts...)
		db.altLoaded = true
	}
	if i >= len(db.stores) {
		return nil, nil
	}
	return db.stores[i], nil
}

func (db *DB) rescan() error {
	db.mu.Lock()
	stores := append([]*store(nil), db.stores...)
	closed := db.closed
	db.mu.Unlock()
	if closed {
		return errClosed()
	}
	for _, s := range stores {
		if err := s.rescan(); err != nil {
			return err
		}
	}
	return nil
}

func errClosed() error { return fmt.Errorf("db closed: %w", os.ErrClosed) }

// hashObject computes the object id the way git does, by the format's hash
// function; crypto/sha1 is enough here because we compare against an id we
// already trust rather than deriving ids from attacker-chosen content.
func hashObject(f oid.Format, typ plumbing.ObjectType, data []byte) oid.ID {
	var h hash.Hash
	if f == oid.SHA256 {
		h = sha256.New()
	} else {
		h = sha1.New()
	}
	h.Write(typ.Bytes())
	h.Write([]byte{' '})
	h.Write(strconv.AppendInt(nil, int64(len(data)), 10))
	h.Write([]byte{0})
	h.Write(data)
	var sum [sha256.Size]byte
	id, _ := oid.FromBytes(h.Sum(sum[:0])) // 20 or 32 bytes
	return id
}

// zlibReader is what klauspost/compress/zlib.NewReader returns.
type zlibReader interface {
	io.ReadCloser
	zlib.Resetter
}

// zlibReader returns a reader inflating r, recycling decompressor state
// from earlier reads; a cold read inflates every link of a delta chain, and
// allocating a fresh window for each link dominates the profile otherwise.
func (db *DB) zlibReader(r io.Reader) (zlibReader, error) {
	if zr, ok := db.zlibPool.Get().(zlibReader); ok {
		if err := zr.Reset(r, nil); err != nil {
			db.zlibPool.Put(zr)
			return nil, err
		}
		return zr, nil
	}
	zr, err := zlib.NewReader(r)
	if err != nil {
		return nil, err
	}
	if z, ok := zr.(zlibReader); ok {
		return z, nil
	}
	return nil, errors.New("the zlib reader cannot be reset")
}

func (db *DB) putZlib(zr zlibReader) {
	db.zlibPool.Put(zr)
}

func (db *DB) bufioReader(r io.Reader, pool *sync.Pool, size int) *bufio.Reader {
	if br, ok := pool.Get().(*bufio.Reader); ok {
		br.Reset(r)
		return br
	}
	return bufio.NewReaderSize(r, size)
}

// inflate reads exactly size bytes from the zlib stream in r and requires
// the stream to end there; the trailing read is what makes the zlib reader
// check the adler32 checksum.
func (db *DB) inflate(r io.Reader, size int64) ([]byte, error) {
	zr, err := db.zlibReader(r)
	if err != nil {
		return nil, fmt.Errorf("inflate: %w: %w", ErrCorrupt, err)
	}
	defer db.putZlib(zr)
	data, err := readExact(zr, size)
	if err != nil {
		return nil, fmt.Errorf("inflate %d bytes: %w: %w", size, ErrCorrupt, err)
	}
	var one [1]byte
	n, err := io.ReadFull(zr, one[:])
	if n != 0 {
		return nil, fmt.Errorf("inflate: object longer than its declared %d bytes: %w", size, ErrCorrupt)
	}
	if err != io.EOF {
		return nil, fmt.Errorf("inflate: %w: %w", ErrCorrupt, err)
	}
	return data, nil
}

// readExact reads exactly size bytes. Sizes come from untrusted headers,
// so beyond a first small buffer memory grows by doubling as data actually
// arrives rather than being committed up front.
func readExact(r io.Reader, size int64) ([]byte, error) {
	const first = 64 << 10
	if size < 0 {
		return nil, fmt.Errorf("negative size %d", size)
	}
	if size <= first {
		b := make([]byte, size)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, noEOF(err)
		}
		return b, nil
	}
	b := make([]byte, 0, first)
	for int64(len(b)) < size {
		if len(b) == cap(b) {
			b = slices.Grow(b, int(min(size-int64(len(b)), int64(cap(b)))))
		}
		n, err := io.ReadFull(r, b[len(b):min(int64(cap(b)), size)])
		b = b[:len(b)+n]
		if err != nil {
			return nil, noEOF(err)
		}
	}
	return b, nil
}

// noEOF turns a clean EOF into ErrUnexpectedEOF: any EOF before the declared
// size is a truncated object, not a normal end.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
