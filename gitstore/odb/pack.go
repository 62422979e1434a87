package odb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/nwdes/nwdes/gitstore/oid"
)

const (
	packHeaderLen = 12
	// packEntryBuf is how much of a pack is fetched per read while walking
	// an entry; most entries (delta links especially) fit in one.
	packEntryBuf = 8 << 10
)

// errPackGone marks a pack whose files were deleted (by git gc or repack)
// after we listed it; the lookup moves on as if the pack never existed.
var errPackGone = errors.New("pack removed")

type openState uint8

const (
	notOpened openState = iota
	opened
	gone   // files vanished before we opened them
	broken // unusable; err says why
)

// pack is one pack-*.idx/.pack pair, each opened on first need. Once open,
// a file stays open until Close, so a pack git deletes underneath us stays
// readable.
type pack struct {
	f    oid.Format
	name string // "pack-<hex>"
	dir  string // objects directory, for messages
	root *os.Root

	mu        sync.Mutex
	closed    bool
	idxState  openState
	idxErr    error
	idx       *idx
	dataState openState
	dataErr   error
	data      io.ReaderAt
	dataSize  int64
	files     []io.Closer
	// reads counts the objects read from the pack, and blocks is the
	// reader made once they passed the cache's bound (blockCache.reader).
	reads  atomic.Int64
	blocks atomic.Pointer[blockReader]
}

func (p *pack) String() string { return filepath.Join(p.dir, "pack", p.name) }

// loadIdx returns the pack's index, or nil if the pack has disappeared.
func (p *pack) loadIdx() (*idx, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errClosed()
	}
	switch p.idxState {
	case opened:
		return p.idx, nil
	case gone:
		return nil, nil
	case broken:
		return nil, p.idxErr
	}
	f, size, err := p.openFile(".idx")
	if errors.Is(err, fs.ErrNotExist) {
		p.idxState = gone
		return nil, nil
	}
	if err == nil {
		p.idx, err = parseIdx(f, size, p.f)
		if err != nil {
			f.Close()
		}
	}
	if err != nil {
		p.idxState, p.idxErr = broken, fmt.Errorf("pack index %s.idx: %w", p, err)
		return nil, p.idxErr
	}
	p.files = append(p.files, f)
	p.idxState = opened
	return p.idx, nil
}

// loadData opens the .pack and checks that it is the one the index
// describes: same object count and same trailing checksum. A mismatch can
// only come from corruption, since pack names are content hashes.
func (p *pack) loadData() (io.ReaderAt, int64, error) {
	x, err := p.loadIdx()
	if err != nil {
		return nil, 0, err
	}
	if x == nil {
		return nil, 0, errPackGone
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, 0, errClosed()
	}
	switch p.dataState {
	case opened:
		return p.data, p.dataSize, nil
	case gone:
		return nil, 0, errPackGone
	case broken:
		return nil, 0, p.dataErr
	}
	f, size, err := p.openFile(".pack")
	if errors.Is(err, fs.ErrNotExist) {
		p.dataState = gone
		return nil, 0, errPackGone
	}
	if err == nil {
		err = checkPack(f, size, x)
		if err != nil {
			f.Close()
		}
	}
	if err != nil {
		p.dataState, p.dataErr = broken, fmt.Errorf("pack %s.pack: %w", p, err)
		return nil, 0, p.dataErr
	}
	p.files = append(p.files, f)
	p.data, p.dataSize, p.dataState = f, size, opened
	return f, size, nil
}

func (p *pack) openFile(ext string) (*os.File, int64, error) {
	f, err := p.root.Open(path.Join("pack", p.name+ext))
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("not a regular file: %w", ErrCorrupt)
	}
	return f, fi.Size(), nil
}

func checkPack(r io.ReaderAt, size int64, x *idx) error {
	hashLen := x.hl
	if size < packHeaderLen+hashLen {
		return fmt.Errorf("pack too short (%d bytes): %w", size, ErrCorrupt)
	}
	var hdr [packHeaderLen]byte
	if err := readAt(r, hdr[:], 0); err != nil {
		return fmt.Errorf("read pack header: %w", err)
	}
	if string(hdr[:4]) != "PACK" {
		return fmt.Errorf("bad pack signature %q: %w", hdr[:4], ErrCorrupt)
	}
	if v := binary.BigEndian.Uint32(hdr[4:8]); v != 2 && v != 3 {
		return fmt.Errorf("pack version %d is not supported: %w", v, errors.ErrUnsupported)
	}
	if n := int64(binary.BigEndian.Uint32(hdr[8:12])); n != x.n {
		return fmt.Errorf("pack holds %d objects, its index %d: %w", n, x.n, ErrCorrupt)
	}
	var sum [maxHashLen]byte
	if err := readAt(r, sum[:hashLen], size-hashLen); err != nil {
		return fmt.Errorf("read pack trailer: %w", err)
	}
	if sum != x.packSum {
		return fmt.Errorf("pack checksum does not match its index: %w", ErrCorrupt)
	}
	return nil
}

// find returns the offset of h in the pack. A pack whose files have gone
// simply does not have h.
func (p *pack) find(h oid.ID) (int64, bool, error) {
	x, err := p.loadIdx()
	if err != nil || x == nil {
		return 0, false, err
	}
	off, ok, err := x.find(h)
	if err != nil {
		return 0, false, fmt.Errorf("pack index %s.idx: %w", p, err)
	}
	return off, ok, nil
}

func (p *pack) close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	var errs []error
	for _, f := range p.files {
		errs = append(errs, f.Close())
	}
	p.files, p.idx, p.data = nil, nil, nil
	return errors.Join(errs...)
}

// entry is one pack entry with its payload inflated: a whole object for the
// base types, a delta otherwise.
type entry struct {
	typ      plumbing.ObjectType
	payload  []byte
	baseOff  int64  // OFS_DELTA
	baseHash oid.ID // REF_DELTA
}

// readPacked returns the object at off in p, applying any delta chain,
// and the number of delta links that made it. depth is the number of delta
// links already followed by callers, so that chains crossing packs through
// REF_DELTA are bounded as a whole.
//
// The walk down the chain stops at the first object the DB's base cache
// holds; on the way back up the base and the result are kept there, and
// the links between from a chain's second walk on (or once the DB has
// made 256 walks; see basecache.go), and the caller gets a copy:
// cached bytes are shared and never handed out. A cached object carries
// the links that made it, so the bound on a chain is the same whether or
// not part of it was cached.
func (db *DB) readPacked(p *pack, off int64, depth int) (plumbing.ObjectType, []byte, int, error) {
	r, size, err := p.loadData()
	if err != nil {
		return plumbing.InvalidObject, nil, 0, err
	}
	r = db.blocks.reader(p, r, size)
	var (
		deltas [][]byte
		offs   []int64 // offs[i]: the offset of the entry holding deltas[i]
		typ    plumbing.ObjectType
		obj    []byte
		links  int  // the delta links that made obj
		shared bool // obj is the cache's
		// keep: keep every link resolved, not only the result; set
		// when the walk meets a link an earlier walk passed
		// (baseCache.pass).
		keep = db.bases.walk()
	)
	tooLong := func() error {
		return fmt.Errorf("pack %s.pack: delta chain longer than %d: %w", p, maxDeltaDepth, ErrCorrupt)
	}
walk:
	for {
		t, b, n, ok, passed := db.bases.get(baseKey{p, off})
		if ok {
			if depth+len(deltas)+n > maxDeltaDepth {
				return plumbing.InvalidObject, nil, 0, tooLong()
			}
			typ, obj, links, shared = t, b, n, true
			break walk
		}
		keep = keep || passed
		if depth+len(deltas) > maxDeltaDepth {
			return plumbing.InvalidObject, nil, 0, tooLong()
		}
		e, err := db.readEntry(r, size, off, p.f)
		if err != nil {
			return plumbing.InvalidObject, nil, 0, fmt.Errorf("pack %s.pack offset %d: %w", p, off, err)
		}
		switch e.typ {
		case plumbing.OFSDeltaObject:
			deltas, offs = append(deltas, e.payload), append(offs, off)
			off = e.baseOff
		case plumbing.REFDeltaObject:
			deltas, offs = append(deltas, e.payload), append(offs, off)
			boff, ok, err := p.find(e.baseHash)
			if err != nil {
				return plumbing.InvalidObject, nil, 0, err
			}
			if ok {
				off = boff
				continue
			}
			// Packs written by git keep REF_DELTA bases in the same
			// pack, but nothing in the format requires it.
			typ, obj, links, err = db.lookup(e.baseHash, depth+len(deltas))
			if errors.Is(err, ErrNotFound) {
				return plumbing.InvalidObject, nil, 0, fmt.Errorf("pack %s.pack offset %d: delta base %s missing: %w", p, off, e.baseHash, ErrCorrupt)
			}
			if err != nil {
				return plumbing.InvalidObject, nil, 0, err
			}
			break walk
		default:
			typ, obj = e.typ, e.payload
			shared = db.bases.put(baseKey{p, off}, typ, obj, 0)
			break walk
		}
	}
	if err := db.checkDeltas(deltas); err != nil {
		return plumbing.InvalidObject, nil, 0, fmt.Errorf("pack %s.pack: %w", p, err)
	}
	// A link not kept is resolved into one of two buffers taken in
	// turn: the one its source is not in.
	var scratch [2][]byte
	var passed []baseKey
	for i := len(deltas) - 1; i >= 0; i-- {
		if i > 0 && !keep {
			scratch[i%2], err = applyDeltaInto(scratch[i%2][:0], obj, deltas[i])
			obj = scratch[i%2]
			passed = append(passed, baseKey{p, offs[i]})
		} else {
			obj, err = applyDelta(obj, deltas[i])
		}
		if err != nil {
			return plumbing.InvalidObject, nil, 0, fmt.Errorf("pack %s.pack: apply delta: %w: %w", p, ErrCorrupt, err)
		}
		links++
		if i > 0 && !keep {
			shared = false
			continue
		}
		shared = db.bases.put(baseKey{p, offs[i]}, typ, obj, links)
	}
	db.bases.pass(passed)
	if shared {
		obj = bytes.Clone(obj)
	}
	return typ, obj, links, nil
}

// readEntry parses the entry header at off (type and size varint, then the
// base reference of a delta) and inflates its payload.
func (db *DB) readEntry(r io.ReaderAt, size, off int64, f oid.Format) (entry, error) {
	end := size - int64(f.Size())
	if off < packHeaderLen || off >= end {
		return entry{}, fmt.Errorf("offset outside pack data: %w", ErrCorrupt)
	}
	br := db.bufioReader(io.NewSectionReader(r, off, end-off), &db.bufioPool, packEntryBuf)
	defer db.bufioPool.Put(br)
	bad := func(what string, err error) (entry, error) {
		if err != nil {
			return entry{}, fmt.Errorf("%s: %w: %w", what, ErrCorrupt, noEOF(err))
		}
		return entry{}, fmt.Errorf("%s: %w", what, ErrCorrupt)
	}

	c, err := br.ReadByte()
	if err != nil {
		return bad("read entry header", err)
	}
	e := entry{typ: plumbing.ObjectType((c >> 4) & 7)}
	n := int64(c & 0x0f)
	for shift := 4; c&0x80 != 0; shift += 7 {
		if shift > 56 {
			return bad("entry size overflows", nil)
		}
		if c, err = br.ReadByte(); err != nil {
			return bad("read entry header", err)
		}
		n |= int64(c&0x7f) << shift
	}

	switch e.typ {
	case plumbing.CommitObject, plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject:
	case plumbing.OFSDeltaObject:
		// The distance is big-endian base-128 with an implicit +1 per
		// continuation byte, so every distance has one encoding.
		if c, err = br.ReadByte(); err != nil {
			return bad("read delta base offset", err)
		}
		rel := int64(c & 0x7f)
		for c&0x80 != 0 {
			if rel >= 1<<55 {
				return bad("delta base offset overflows", nil)
			}
			if c, err = br.ReadByte(); err != nil {
				return bad("read delta base offset", err)
			}
			rel = (rel+1)<<7 | int64(c&0x7f)
		}
		// Requiring the base to lie strictly before the delta makes
		// OFS_DELTA chains terminate on their own.
		if rel <= 0 || rel > off-packHeaderLen {
			return bad(fmt.Sprintf("delta base distance %d out of range", rel), nil)
		}
		e.baseOff = off - rel
	case plumbing.REFDeltaObject:
		var b [maxHashLen]byte
		if _, err := io.ReadFull(br, b[:f.Size()]); err != nil {
			return bad("read delta base id", err)
		}
		if e.baseHash, err = oid.FromBytes(b[:f.Size()]); err != nil || e.baseHash.IsZero() {
			return bad("delta base id is zero", err)
		}
	default:
		return bad(fmt.Sprintf("invalid entry type %d", e.typ), nil)
	}
	if err := db.checkSize(n); err != nil {
		return entry{}, err
	}
	if e.payload, err = db.inflate(br, n); err != nil {
		return entry{}, err
	}
	return e, nil
}
