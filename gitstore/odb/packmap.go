package odb

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"unsafe"
)

// mapMinSize is the smallest pack that is mapped into memory rather than
// read with pread. A cold read of a tree deep in a delta chain walks tens
// of entries, each of which cost a pread of packEntryBuf bytes (the hook
// benchmark's fixture: about 100 preads in one judgment, an eighth of its
// processor time); a mapped pack costs one mmap and a page fault per
// fault-around window touched. nwdes writes one small pack per update,
// each read a few times: for those one pread is cheaper than a mapping.
const mapMinSize = 1 << 20

// mappedPack is a .pack file mapped read-only into memory. Its bytes are
// only ever read inside readEntry, under recoverFault, and nothing
// returned from a DB points into them: entries are inflated into memory
// of their own.
type mappedPack struct {
	b []byte
}

// ReadAt reads from the mapping, as os.File.ReadAt would from the file.
func (m *mappedPack) ReadAt(p []byte, off int64) (n int, err error) {
	defer recoverFault(m.b, &err)
	defer faultGuard()()
	if off < 0 || off > int64(len(m.b)) {
		return 0, fmt.Errorf("read at %d of a %d-byte mapping: %w", off, len(m.b), io.ErrUnexpectedEOF)
	}
	n = copy(p, m.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// recoverFault turns a fault in reading the mapping b into *err: git
// writes a pack once and renames it into place, and deleting it leaves
// the mapping whole, but a pack truncated in place by something else
// would fault (SIGBUS) where a read would have come up short. The caller
// must have set debug.SetPanicOnFault (faultGuard); any other panic goes
// on.
func recoverFault(b []byte, err *error) {
	r := recover()
	if r == nil {
		return
	}
	if f, ok := r.(interface{ Addr() uintptr }); ok {
		if _, isRuntime := r.(runtime.Error); isRuntime && inMapping(b, f.Addr()) {
			*err = fmt.Errorf("pack changed size while mapped: %w", ErrCorrupt)
			return
		}
	}
	panic(r)
}

func inMapping(b []byte, addr uintptr) bool {
	if len(b) == 0 {
		return false
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return addr >= start && addr < start+uintptr(len(b))
}

// faultGuard makes a memory fault on this goroutine a panic that
// recoverFault can turn into an error, and returns what puts the setting
// back: defer faultGuard()().
func faultGuard() func() {
	old := debug.SetPanicOnFault(true)
	return func() { debug.SetPanicOnFault(old) }
}

// openData returns what reads the pack file f of size bytes: a mapping of
// it where the platform maps files and the pack is large enough to be
// worth one, else f itself. The returned closer releases the mapping, if
// any; f is closed by the caller.
func openData(f *os.File, size int64) (io.ReaderAt, func() error) {
	if size < mapMinSize {
		return f, nil
	}
	b, err := mapFile(f, size)
	if err != nil {
		// Mapping is an economy, never a requirement: pread reads
		// the same bytes.
		return f, nil
	}
	return &mappedPack{b: b}, func() error { return unmapFile(b) }
}
