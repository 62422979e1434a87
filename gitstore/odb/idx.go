package odb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/nwdes/nwdes/gitstore/oid"
)

// Version-2 pack index layout (gitformat-pack(5)):
//
//	magic "\377tOc", version 2
//	fanout   256 × uint32: number of objects whose first byte is <= i
//	names    N × 20 bytes (32 in a SHA-256 repository), sorted
//	crc32    N × uint32
//	offsets  N × uint32; MSB set means "index into the large table"
//	large    L × uint64
//	trailer  pack checksum, index checksum (each of the format's size)
//
// Nothing in the file says which format it is of: git writes version 2
// for SHA-256 repositories too, and the repository's extensions.objectFormat
// decides how its names are read.
const (
	idxHeaderLen = 8
	idxFanoutLen = 256 * 4
	idxNamesOff  = idxHeaderLen + idxFanoutLen
	// maxHashLen is the longest id, SHA-256's.
	maxHashLen = 32
	// idxScanMax is the largest run of names fetched with one read; wider
	// ranges are first narrowed by single-name probes so that a lookup
	// reads a few KiB even in an index of millions of objects.
	idxScanMax = 128
	// idxLoadAfter is the number of lookups in one index after which its
	// names and offsets are read into memory whole: a cold read makes a
	// few lookups, each a few small reads, while a bulk reader (fsck, a
	// history check, a merge) makes thousands, each of which would cost
	// a dozen pread calls. idxLoadMax bounds what is kept.
	idxLoadAfter = 256
	idxLoadMax   = 64 << 20
)

const idxMagic = "\xfftOc"

// idx answers lookups from an open index file without loading it: only the
// fanout table and trailer are kept in memory.
type idx struct {
	r       io.ReaderAt
	size    int64
	hl      int64 // bytes per name: the format's id size
	fanout  [256]uint32
	n       int64            // number of objects
	nLarge  int64            // entries in the 64-bit offset table
	packSum [maxHashLen]byte // its first hl bytes

	lookups atomic.Int64
	load    sync.Once
	tables  atomic.Pointer[idxTables] // set once loaded (idxLoadAfter)

	// runs holds the buffers lookups read runs of names into
	// (*idxRun): handed to an io.ReaderAt a buffer escapes, and a fresh
	// 4 KiB for each lookup was, in a cold process, a fresh page and a
	// page fault each (31 of the hook's 813).
	runs sync.Pool
}

type idxRun [idxScanMax * maxHashLen]byte

// idxTables are an index's names and 32-bit offsets, read whole.
type idxTables struct {
	names, offs []byte
}

// loaded returns the index's tables in memory, reading them at the
// idxLoadAfter-th lookup; nil before, or when they could not be read (the
// lookup then reads the file as before, and names what is wrong).
func (x *idx) loaded() *idxTables {
	if t := x.tables.Load(); t != nil {
		return t
	}
	if x.lookups.Add(1) < idxLoadAfter || x.n*(x.hl+4) > idxLoadMax {
		return nil
	}
	x.load.Do(func() {
		t := &idxTables{names: make([]byte, x.n*x.hl), offs: make([]byte, x.n*4)}
		if readAt(x.r, t.names, idxNamesOff) == nil && readAt(x.r, t.offs, x.offsOff()) == nil {
			x.tables.Store(t)
		}
	})
	return x.tables.Load()
}

func (x *idx) crcOff() int64   { return idxNamesOff + x.n*x.hl }
func (x *idx) trailer() int64  { return 2 * x.hl }
func (x *idx) offsOff() int64  { return x.crcOff() + x.n*4 }
func (x *idx) largeOff() int64 { return x.offsOff() + x.n*4 }

// parseIdx validates the header, fanout and overall size of an index and
// reads the pack checksum from its trailer. Everything a later lookup will
// index into is bounds-checked here against size. f is the repository's
// object format, which sizes the names and checksums.
func parseIdx(r io.ReaderAt, size int64, f oid.Format) (*idx, error) {
	hl := int64(f.Size())
	var head [idxNamesOff]byte
	if size < idxHeaderLen {
		return nil, fmt.Errorf("index too short (%d bytes): %w", size, ErrCorrupt)
	}
	if err := readAt(r, head[:idxHeaderLen], 0); err != nil {
		return nil, fmt.Errorf("read index header: %w", err)
	}
	if string(head[:4]) != idxMagic {
		// Version 1 has no header and starts straight with the fanout.
		return nil, fmt.Errorf("index version 1 (no magic) is not supported, run git index-pack to rewrite it: %w", errors.ErrUnsupported)
	}
	if v := binary.BigEndian.Uint32(head[4:8]); v != 2 {
		return nil, fmt.Errorf("index version %d is not supported: %w", v, errors.ErrUnsupported)
	}
	if size < idxNamesOff+2*hl {
		return nil, fmt.Errorf("index too short (%d bytes): %w", size, ErrCorrupt)
	}
	if err := readAt(r, head[idxHeaderLen:], idxHeaderLen); err != nil {
		return nil, fmt.Errorf("read index fanout: %w", err)
	}
	x := &idx{r: r, size: size, hl: hl}
	var prev uint32
	for i := range x.fanout {
		v := binary.BigEndian.Uint32(head[idxHeaderLen+4*i:])
		if v < prev {
			return nil, fmt.Errorf("index fanout not monotonic at %d: %w", i, ErrCorrupt)
		}
		x.fanout[i], prev = v, v
	}
	x.n = int64(x.fanout[255])
	want := x.largeOff() + x.trailer()
	if size < want {
		return nil, fmt.Errorf("index of %d objects truncated to %d bytes: %w", x.n, size, ErrCorrupt)
	}
	extra := size - want
	if extra%8 != 0 || extra/8 > x.n {
		return nil, fmt.Errorf("index of %d objects has unexpected size %d: %w", x.n, size, ErrCorrupt)
	}
	x.nLarge = extra / 8
	if err := readAt(r, x.packSum[:hl], size-x.trailer()); err != nil {
		return nil, fmt.Errorf("read index trailer: %w", err)
	}
	return x, nil
}

// find returns the pack offset of h, or ok=false. h is of the index's
// format (DB.check).
func (x *idx) find(id oid.ID) (off int64, ok bool, err error) {
	raw := id.Raw()
	h := raw[:x.hl]
	hashLen := x.hl
	lo := int64(0)
	if h[0] > 0 {
		lo = int64(x.fanout[h[0]-1])
	}
	hi := int64(x.fanout[h[0]])
	if t := x.loaded(); t != nil {
		i, j := lo, hi
		for i < j {
			m := i + (j-i)/2
			switch c := bytes.Compare(h, t.names[m*hashLen:(m+1)*hashLen]); {
			case c == 0:
				off, err := x.offsetOf(m, binary.BigEndian.Uint32(t.offs[4*m:]))
				return off, err == nil, err
			case c < 0:
				j = m
			default:
				i = m + 1
			}
		}
		return 0, false, nil
	}
	buf, _ := x.runs.Get().(*idxRun)
	if buf == nil {
		buf = new(idxRun)
	}
	defer x.runs.Put(buf)
	name := buf[:hashLen]
	for hi-lo > idxScanMax {
		mid := lo + (hi-lo)/2
		if err := readAt(x.r, name, idxNamesOff+mid*hashLen); err != nil {
			return 0, false, fmt.Errorf("read index name %d: %w", mid, err)
		}
		switch c := bytes.Compare(h, name); {
		case c == 0:
			off, err := x.offset(mid)
			return off, err == nil, err
		case c < 0:
			hi = mid
		default:
			lo = mid + 1
		}
	}
	if lo >= hi {
		return 0, false, nil
	}
	run := buf[:(hi-lo)*hashLen]
	if err := readAt(x.r, run, idxNamesOff+lo*hashLen); err != nil {
		return 0, false, fmt.Errorf("read index names %d..%d: %w", lo, hi, err)
	}
	i, j := 0, int(hi-lo)
	for i < j {
		m := i + (j-i)/2
		switch c := bytes.Compare(h, run[int64(m)*hashLen:int64(m+1)*hashLen]); {
		case c == 0:
			off, err := x.offset(lo + int64(m))
			return off, err == nil, err
		case c < 0:
			j = m
		default:
			i = m + 1
		}
	}
	return 0, false, nil
}

// offset returns the pack offset of the i-th object, following the large
// offset table for packs over 2 GiB.
func (x *idx) offset(i int64) (int64, error) {
	if i < 0 || i >= x.n {
		return 0, fmt.Errorf("index entry %d out of range: %w", i, ErrCorrupt)
	}
	var b [8]byte
	if err := readAt(x.r, b[:4], x.offsOff()+4*i); err != nil {
		return 0, fmt.Errorf("read offset %d: %w", i, err)
	}
	return x.offsetOf(i, binary.BigEndian.Uint32(b[:4]))
}

// offsetOf resolves the i-th object's 32-bit offset entry v.
func (x *idx) offsetOf(i int64, v uint32) (int64, error) {
	var b [8]byte
	if v&0x80000000 == 0 {
		return int64(v), nil
	}
	k := int64(v & 0x7fffffff)
	if k >= x.nLarge {
		return 0, fmt.Errorf("offset %d refers to large offset %d of %d: %w", i, k, x.nLarge, ErrCorrupt)
	}
	if err := readAt(x.r, b[:], x.largeOff()+8*k); err != nil {
		return 0, fmt.Errorf("read large offset %d: %w", k, err)
	}
	big := binary.BigEndian.Uint64(b[:])
	if big > 1<<62 {
		return 0, fmt.Errorf("large offset %d out of range: %w", big, ErrCorrupt)
	}
	return int64(big), nil
}

// name returns the i-th object id; used by tests and the fuzzer to walk an
// index.
func (x *idx) name(i int64) (oid.ID, error) {
	if i < 0 || i >= x.n {
		return oid.Zero, fmt.Errorf("index entry %d out of range: %w", i, ErrCorrupt)
	}
	var b [maxHashLen]byte
	if err := readAt(x.r, b[:x.hl], idxNamesOff+i*x.hl); err != nil {
		return oid.Zero, fmt.Errorf("read index name %d: %w", i, err)
	}
	return oid.FromBytes(b[:x.hl])
}

// readAt fills b from r at off. io.ReaderAt may report io.EOF alongside a
// full read at the end of the input; only a short read is an error here.
func readAt(r io.ReaderAt, b []byte, off int64) error {
	n, err := r.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}
