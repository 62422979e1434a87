package git

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/nwdes/nwdes/gitstore/oid"
)

// The objects of one update (its blobs, trees and commit) are written as
// one pack (git's pack v2 format, objects undeltified and zlib-compressed)
// with its index (idx v2), instead of one loose file per object:
//
//  1. the pack and the index are written to tmp_pack_* and tmp_idx_* in
//     objects/pack (git's names for temporary files there: git prune removes
//     stale ones), in the background while the ref's lock is taken, and in
//     durable mode fsynced there, concurrently with the lock file's fsync;
//  2. under the ref's lock, once the ref is known to hold the expected old
//     value: pack-<hex>.keep is made (see protect), the .pack is renamed
//     into place and then the .idx (readers, git's and ours, find packs by
//     their .idx), then in durable mode objects/pack is fsynced;
//  3. the ref's lock file is renamed over the ref, in durable mode the
//     ref's directory is fsynced, and the .keep is removed.
//
// An update that loses the compare-and-swap never publishes its pack: its
// temporary files are removed. Objects already stored (loose, or in a pack
// already listed) are not written again; their file is freshened instead (its
// mtime set to now), as git does, so that a concurrent git gc does not prune
// them as old and unreachable just before the new commit makes them
// reachable.

// packObj is one object to store.
type packObj struct {
	typ  plumbing.ObjectType
	hash oid.ID
	data []byte
}

// Batch collects the objects of one update, in the order they were
// added, each once, named in one object format: Stage writes them as one
// pack, and refuses a batch of another format than the repository's. The
// zero value is an empty SHA-1 batch; NewBatch makes one of any format.
type Batch struct {
	f    oid.Format
	objs []packObj
	seen map[oid.ID]bool
}

// NewBatch returns an empty batch whose objects are named in format f
// (Repo.Format).
func NewBatch(f oid.Format) *Batch { return &Batch{f: f} }

// Format is the object format the batch names its objects in.
func (b *Batch) Format() oid.Format {
	if b.f == 0 {
		return oid.SHA1
	}
	return b.f
}

func (b *Batch) add(t plumbing.ObjectType, data []byte) oid.ID {
	h := hashOf(b.Format(), t, data)
	if b.seen == nil {
		b.seen = map[oid.ID]bool{}
	}
	if !b.seen[h] {
		b.seen[h] = true
		b.objs = append(b.objs, packObj{typ: t, hash: h, data: data})
	}
	return h
}

// packEntry is one object of a pack being built.
type packEntry struct {
	hash oid.ID
	off  uint64
	crc  uint32
}

// packBuf builds a pack and its index in memory, in one object format: ids
// in the index and both checksums are of the format's hash function (git
// writes SHA-256 packs as pack v2 and indexes as idx v2 all the same).
type packBuf struct {
	f       oid.Format
	buf     bytes.Buffer
	entries []packEntry
}

var zlibWriters = sync.Pool{New: func() any {
	w, _ := zlib.NewWriterLevel(nil, zlib.BestSpeed)
	return w
}}

func newPackBuf(f oid.Format) *packBuf {
	p := &packBuf{f: f}
	// The object count is filled in by finish.
	p.buf.Write([]byte{'P', 'A', 'C', 'K', 0, 0, 0, 2, 0, 0, 0, 0})
	return p
}

// addObject appends o, undeltified: a type-and-size header, then the
// zlib-compressed content.
func (p *packBuf) addObject(o packObj) {
	start := p.buf.Len()
	size := uint64(len(o.data))
	c := byte(o.typ)<<4 | byte(size&0x0f)
	size >>= 4
	for size > 0 {
		p.buf.WriteByte(c | 0x80)
		c = byte(size & 0x7f)
		size >>= 7
	}
	p.buf.WriteByte(c)
	zw := zlibWriters.Get().(*zlib.Writer)
	zw.Reset(&p.buf)
	zw.Write(o.data) // a bytes.Buffer does not fail
	zw.Close()
	zlibWriters.Put(zw)
	raw := p.buf.Bytes()[start:]
	p.entries = append(p.entries, packEntry{hash: o.hash, off: uint64(start), crc: crc32.ChecksumIEEE(raw)})
}

// addRaw appends an entry copied byte for byte from another pack; crc is
// its CRC-32 as that pack's index records it.
func (p *packBuf) addRaw(h oid.ID, raw []byte, crc uint32) {
	p.entries = append(p.entries, packEntry{hash: h, off: uint64(p.buf.Len()), crc: crc})
	p.buf.Write(raw)
}

// finish returns the pack, its index and the pack's name (pack-<hex of the
// pack's trailing checksum>, as git names packs).
func (p *packBuf) finish() (pack, idx []byte, name string) {
	b := p.buf.Bytes()
	binary.BigEndian.PutUint32(b[8:12], uint32(len(p.entries)))
	hl := p.f.Size()
	h := newChecksum(p.f)
	h.Write(b)
	sum := h.Sum(nil)
	p.buf.Write(sum)
	pack = p.buf.Bytes()

	es := append([]packEntry(nil), p.entries...)
	sort.Slice(es, func(i, j int) bool { return oid.Compare(es[i].hash, es[j].hash) < 0 })
	var x bytes.Buffer
	x.Grow(8 + 256*4 + len(es)*(hl+4+4) + 2*hl)
	x.Write([]byte{0xff, 't', 'O', 'c', 0, 0, 0, 2})
	var fan [256]uint32
	for _, e := range es {
		raw := e.hash.Raw()
		fan[raw[0]]++
	}
	var n uint32
	var u [8]byte
	for i := range fan {
		n += fan[i]
		binary.BigEndian.PutUint32(u[:4], n)
		x.Write(u[:4])
	}
	for _, e := range es {
		raw := e.hash.Raw()
		x.Write(raw[:hl])
	}
	for _, e := range es {
		binary.BigEndian.PutUint32(u[:4], e.crc)
		x.Write(u[:4])
	}
	var large []uint64
	for _, e := range es {
		v := uint32(e.off)
		if e.off >= 1<<31 {
			v = 1<<31 | uint32(len(large))
			large = append(large, e.off)
		}
		binary.BigEndian.PutUint32(u[:4], v)
		x.Write(u[:4])
	}
	for _, off := range large {
		binary.BigEndian.PutUint64(u[:], off)
		x.Write(u[:])
	}
	x.Write(sum)
	ih := newChecksum(p.f)
	ih.Write(x.Bytes())
	x.Write(ih.Sum(nil))
	return pack, x.Bytes(), "pack-" + hex.EncodeToString(sum)
}

// stagedPack is a pack written to temporary files and not yet published.
// The files are written in the background (stageAsync): creating a file is
// the dearest step of an update on a busy journalling file system, and the
// two temporary files are created concurrently with each other and with
// the ref's lock file, which swap creates meanwhile.
type stagedPack struct {
	dir        string // objects/pack
	name       string // pack-<hex>
	createdDir bool   // objects/pack did not exist: objects/ needs a sync too

	keep   string        // the .keep protect made, until unprotect
	ready  chan struct{} // closed once the files are written (or failed)
	err    error
	synced bool // the files were fsynced when written
	packF  *os.File
	idxF   *os.File
}

// writeTemp writes data to a new tmp_<kind>_* file in dir and returns it
// open (for a later fsync). The file is created read-only, as git leaves its
// packs and objects, in the same call (no separate chmod).
func writeTemp(dir, kind string, data []byte) (*os.File, error) {
	var f *os.File
	var err error
	for try := 0; try < 100; try++ {
		p := filepath.Join(dir, "tmp_"+kind+"_"+strconv.FormatUint(rand.Uint64(), 36))
		f, err = os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o444)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return f, nil
}

// stageAsync starts writing pack and idx to temporary files in
// objects/pack, each in its own goroutine, fsyncing them when durable.
func stageAsync(objDir string, pack, idx []byte, name string, durable bool) *stagedPack {
	dir := filepath.Join(objDir, "pack")
	sp := &stagedPack{dir: dir, name: name, ready: make(chan struct{}), synced: durable}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o777); err != nil {
			sp.err = fmt.Errorf("write pack: %w", err)
			close(sp.ready)
			return sp
		}
		sp.createdDir = true
	}
	write := func(kind string, data []byte, f **os.File, errp *error) {
		w, err := writeTemp(dir, kind, data)
		if err == nil && durable {
			if err = w.Sync(); err != nil {
				w.Close()
				os.Remove(w.Name())
				w = nil
			}
		}
		if err != nil {
			*errp = fmt.Errorf("write pack: %w", err)
			return
		}
		*f = w
	}
	go func() {
		defer close(sp.ready)
		var perr, xerr error
		done := make(chan struct{})
		go func() {
			defer close(done)
			write("idx", idx, &sp.idxF, &xerr)
		}()
		write("pack", pack, &sp.packF, &perr)
		<-done
		sp.err = errors.Join(perr, xerr)
	}()
	return sp
}

// stage writes pack and idx to temporary files and waits for them.
func stage(objDir string, pack, idx []byte, name string) (*stagedPack, error) {
	sp := stageAsync(objDir, pack, idx, name, false)
	<-sp.ready
	if sp.err != nil {
		sp.discard()
		return nil, sp.err
	}
	return sp, nil
}

// keepSource is the file in the git directory that every nwdes .keep is a
// hard link to (see protect).
const keepSource = "nwdes-keep"

const keepText = "nwdes: the pack of an update whose ref is about to move\n"

// protect makes pack-<hex>.keep before the pack is published, as git
// receive-pack does for an incoming pack until its refs are updated: git gc
// and git repack leave a kept pack alone, so a repack that starts between
// the pack's rename and the ref's cannot delete the objects the ref is
// about to name while they are still unreachable. (Without it, the stress
// test of eight writers beside a git gc loop lost a commit now and then:
// repack -A -d deleted the new pack and did not loosen its objects.) The
// .keep is a hard link to <git dir>/nwdes-keep, which costs a directory
// entry but no new inode; where links fail, it is a file of its own.
// unprotect removes it once the ref has moved.
func (sp *stagedPack) protect() error {
	keep := filepath.Join(sp.dir, sp.name+".keep")
	src := filepath.Join(filepath.Dir(filepath.Dir(sp.dir)), keepSource)
	err := os.Link(src, keep)
	if errors.Is(err, fs.ErrNotExist) {
		if werr := os.WriteFile(src, []byte(keepText), 0o444); werr == nil || errors.Is(werr, fs.ErrExist) {
			err = os.Link(src, keep)
		}
	}
	if errors.Is(err, fs.ErrExist) {
		// Another writer is publishing the same pack, and removes it.
		return nil
	}
	if err != nil {
		f, cerr := os.OpenFile(keep, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
		if errors.Is(cerr, fs.ErrExist) {
			return nil
		}
		if cerr != nil {
			return fmt.Errorf("protect pack: %w", cerr)
		}
		f.WriteString(keepText)
		f.Close()
	}
	sp.keep = keep
	return nil
}

// unprotect removes the .keep protect made.
func (sp *stagedPack) unprotect() {
	if sp.keep != "" {
		os.Remove(sp.keep)
		sp.keep = ""
	}
}

// publish renames the pack and then its index into place; when durable,
// both files are synced first (unless stageAsync did) and the directory
// after. With keep, the pack is protected first (see protect).
func (sp *stagedPack) publish(durable, keep bool) error {
	<-sp.ready
	if sp.err != nil {
		return sp.err
	}
	if durable && !sp.synced {
		if err := syncFiles(sp.packF, sp.idxF); err != nil {
			return err
		}
	}
	tp, ti := sp.packF.Name(), sp.idxF.Name()
	if err := sp.closeFiles(); err != nil {
		return fmt.Errorf("write pack: %w", err)
	}
	if keep {
		if err := sp.protect(); err != nil {
			os.Remove(tp)
			os.Remove(ti)
			return err
		}
	}
	base := filepath.Join(sp.dir, sp.name)
	if err := os.Rename(tp, base+".pack"); err != nil {
		os.Remove(tp)
		os.Remove(ti)
		sp.unprotect()
		return fmt.Errorf("publish pack: %w", err)
	}
	if err := os.Rename(ti, base+".idx"); err != nil {
		os.Remove(ti)
		sp.unprotect()
		return fmt.Errorf("publish pack index: %w", err)
	}
	if durable {
		if err := syncDir(sp.dir); err != nil {
			return err
		}
		if sp.createdDir {
			if err := syncDir(filepath.Dir(sp.dir)); err != nil {
				return err
			}
		}
	}
	return nil
}

func (sp *stagedPack) closeFiles() error {
	var errs []error
	for _, f := range []**os.File{&sp.packF, &sp.idxF} {
		if *f != nil {
			errs = append(errs, (*f).Close())
			*f = nil
		}
	}
	return errors.Join(errs...)
}

// discard removes a pack that will not be published.
func (sp *stagedPack) discard() {
	<-sp.ready
	for _, f := range []*os.File{sp.packF, sp.idxF} {
		if f != nil {
			os.Remove(f.Name())
		}
	}
	sp.closeFiles()
}

// syncFiles fsyncs files concurrently: a journalling file system commits
// them together rather than one journal commit after another.
func syncFiles(files ...*os.File) error {
	if len(files) == 1 {
		if err := files[0].Sync(); err != nil {
			return fmt.Errorf("sync %s: %w", files[0].Name(), err)
		}
		return nil
	}
	errs := make([]error, len(files))
	var wg sync.WaitGroup
	for i, f := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f.Sync(); err != nil {
				errs[i] = fmt.Errorf("sync %s: %w", f.Name(), err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// syncPaths opens and fsyncs each path (files or directories), at most
// eight at a time.
func syncPaths(paths []string) error {
	errs := make([]error, len(paths))
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i, p := range paths {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			f, err := os.Open(p)
			if err != nil {
				errs[i] = err
				return
			}
			defer f.Close()
			if err := f.Sync(); err != nil {
				errs[i] = fmt.Errorf("sync %s: %w", p, err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
