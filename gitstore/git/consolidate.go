package git

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/nwdes/nwdes/gitstore/oid"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Every update writes one small pack, so packs accumulate; consolidation
// keeps their number bounded.
//
// When objects/pack holds more than packLimit small packs that nwdes may
// merge, the writer that just moved its ref merges them into one pack:
//
//   - Which packs: those named like git's (pack-<40 hex>.idx), of at most
//     smallPackBytes, that have no .keep (a pack someone asked to keep as it
//     is), no .promisor (a partial clone's; its objects are treated
//     specially), no .mtimes (a cruft pack of unreachable objects, whose
//     per-object times git gc uses to expire them), no .bitmap and no .rev
//     (git 2.41 and later write a .rev beside every pack they write, so this
//     leaves their packs to git), and that no multi-pack-index names. nwdes
//     marks nothing: a .keep would be the obvious mark, but git gc and git
//     repack never consolidate a kept pack, so nwdes packs would escape git's
//     maintenance for good; any other file beside a pack is counted as
//     garbage by git count-objects and left behind by git repack.
//     Which small packs are merged is chosen geometrically, as git repack
//     --geometric=2 does: a pack at least twice the size of all the smaller
//     candidates together stays as it is, so a byte is rewritten a
//     logarithmic number of times however many updates there are.
//   - How: the chosen packs' entries are copied byte for byte (each checked
//     against the CRC-32 its index records) into a new pack; an entry that is
//     a delta (a pack git wrote) is read whole through odb and stored
//     undeltified. The new pack and its index are written to temporary
//     files, fsynced, renamed into place (.pack, then .idx) and the
//     directory fsynced, always, durable mode or not: the old packs may be
//     durable, and they are deleted next. Only then is each merged pack
//     deleted, its .idx first (so no new reader lists it), then .pack and
//     .rev. So every object a ref names is in some listed pack at every
//     instant, and only packs whose every object was copied are deleted.
//   - Against one another, nwdes writers take an exclusive flock(2) on
//     objects/pack (a writer that finds it held skips consolidation, the
//     next update tries again; the kernel drops the lock of a writer that
//     dies, so no lock file can be left behind). A writer that finds
//     git gc's gc.pid skips it too, as a second git gc does. Against git gc and git repack: they delete only packs
//     that existed when they started, after writing theirs; a pack either
//     deletes under the other is simply gone (its objects are in the other's
//     new pack), and a delete of a file already gone is not an error.
//     Readers keep the files they opened; odb rescans on a miss.
const (
	// packLimit bounds the small packs before a consolidation. git gc
	// --auto repacks everything when a repository has more than
	// gc.autoPackLimit (50) packs, which in a large product repository
	// is a long full repack triggered by an unrelated git command; staying
	// well under it keeps nwdes from causing one. A lookup that misses
	// searches every pack's index (a binary search each, well under a
	// microsecond), and consolidation costs about as much as one durable
	// update's syncs, so merging every 20 updates keeps both small.
	packLimit = 20
	// smallPackBytes: packs larger than this are left to git gc. nwdes's
	// consolidated packs grow to about this size and then stay; a git
	// pack of deltas this large would grow several-fold undeltified.
	smallPackBytes = 8 << 20
	// mergeBytes caps the packs one consolidation merges, in bytes.
	mergeBytes = 32 << 20
	// staleKeepAfter: a .keep nwdes made for a pack this old was left by
	// a writer that died before its ref moved.
	staleKeepAfter = 10 * time.Minute
)

type packCandidate struct {
	base string // path without extension
	size int64
}

// maybeConsolidate merges small packs when there are more than packLimit.
func (o *objects) maybeConsolidate() error {
	if o.writable() != nil {
		return nil
	}
	dir := filepath.Join(o.dir, "pack")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	names := make(map[string]bool, len(ents))
	var bases []string
	for _, e := range ents {
		n := e.Name()
		names[n] = true
		if b, ok := strings.CutSuffix(n, ".idx"); ok && isPackName(o.f, b) {
			bases = append(bases, b)
		}
	}
	if len(bases) <= packLimit {
		return nil
	}
	cands := o.candidates(dir, names, bases)
	if len(cands) <= packLimit {
		return nil
	}
	if gcRunning(filepath.Dir(o.dir)) {
		return nil
	}
	unlock, ok := lockConsolidation(dir)
	if !ok {
		return nil
	}
	defer unlock()
	return o.consolidate(dir, geometric(cands))
}

func isPackName(f oid.Format, b string) bool {
	h, ok := strings.CutPrefix(b, "pack-")
	return ok && IsHexID(f, h)
}

// candidates returns the packs consolidation may merge (see above).
func (o *objects) candidates(dir string, names map[string]bool, bases []string) []packCandidate {
	var midx []byte
	if b, err := os.ReadFile(filepath.Join(dir, "multi-pack-index")); err == nil {
		midx = b
	}
	if ents, err := os.ReadDir(filepath.Join(dir, "multi-pack-index.d")); err == nil {
		for _, e := range ents {
			if b, err := os.ReadFile(filepath.Join(dir, "multi-pack-index.d", e.Name())); err == nil {
				midx = append(midx, b...)
			}
		}
	}
	var out []packCandidate
	src, _ := os.Stat(filepath.Join(filepath.Dir(o.dir), keepSource))
next:
	for _, b := range bases {
		if names[b+".keep"] && staleKeep(filepath.Join(dir, b), src) {
			delete(names, b+".keep")
		}
		for _, ext := range []string{".keep", ".promisor", ".mtimes", ".bitmap", ".rev"} {
			if names[b+ext] {
				continue next
			}
		}
		if !names[b+".pack"] || bytes.Contains(midx, []byte(b)) {
			continue
		}
		fi, err := os.Stat(filepath.Join(dir, b+".pack"))
		if err != nil || fi.Size() > smallPackBytes {
			continue
		}
		out = append(out, packCandidate{base: filepath.Join(dir, b), size: fi.Size()})
	}
	return out
}

// staleKeep removes the .keep of the pack at base and reports true when it
// is one nwdes made (a link to <git dir>/nwdes-keep, or where links fail a
// file holding the same text) for a pack written more than staleKeepAfter
// ago: its writer died between publishing the pack and moving its ref (a
// live writer removes it within moments).
func staleKeep(base string, src os.FileInfo) bool {
	k, err := os.Stat(base + ".keep")
	if err != nil {
		return false
	}
	if src == nil || !os.SameFile(k, src) {
		b, err := os.ReadFile(base + ".keep")
		if err != nil || string(b) != keepText {
			return false
		}
	}
	p, err := os.Stat(base + ".pack")
	if err != nil || time.Since(p.ModTime()) < staleKeepAfter {
		return false
	}
	return os.Remove(base+".keep") == nil
}

// geometric returns the packs to merge: all candidates but those, from the
// largest down, that are at least twice the size of every smaller one
// together, and of those no more than mergeBytes.
func geometric(c []packCandidate) []packCandidate {
	sort.Slice(c, func(i, j int) bool { return c[i].size < c[j].size })
	var total int64
	for _, p := range c {
		total += p.size
	}
	j := len(c)
	for j > 1 {
		rest := total - c[j-1].size
		if c[j-1].size < 2*rest {
			break
		}
		total = rest
		j--
	}
	// Smallest first, at most mergeBytes in all (a consolidation holds
	// what it merges in memory); the rest waits for the next update.
	var sum int64
	k := 0
	for k < j && (k < 2 || sum+c[k].size <= mergeBytes) {
		sum += c[k].size
		k++
	}
	return c[:k]
}

// gcRunning reports whether git gc holds gc.pid in the git directory
// (gitDir, the parent of the objects directory): git gc keeps a second gc
// from running beside it that way, and consolidation defers to it in the
// same way. git takes a gc.pid older than 12 hours to be stale.
func gcRunning(gitDir string) bool {
	fi, err := os.Stat(filepath.Join(gitDir, "gc.pid"))
	return err == nil && time.Since(fi.ModTime()) < 12*time.Hour
}

// lockConsolidation takes an exclusive flock(2) on the pack directory, or
// reports that another writer (process or goroutine: flock locks belong to
// an open file) holds it. Where flock is not supported it falls back to
// <git dir>/nwdes-pack.lock. The kernel releases it when its holder dies, so a
// writer killed mid-consolidation leaves no lock behind; git takes no flock
// and is not excluded by it.
func lockConsolidation(dir string) (func(), bool) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, false
	}
	err = unix.Flock(int(d.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if err == nil {
		return func() { d.Close() }, true
	}
	d.Close()
	if errors.Is(err, unix.EWOULDBLOCK) || errors.Is(err, unix.EINTR) {
		return nil, false
	}
	// No flock here (some network file systems): a lock file beside the
	// refs instead, taken to be a dead writer's after staleKeepAfter.
	p := filepath.Join(filepath.Dir(filepath.Dir(dir)), "nwdes-pack.lock")
	for attempt := 0; attempt < 2; attempt++ {
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if err == nil {
			f.Close()
			return func() { os.Remove(p) }, true
		}
		fi, serr := os.Stat(p)
		if !errors.Is(err, fs.ErrExist) || serr != nil || time.Since(fi.ModTime()) < staleKeepAfter {
			return nil, false
		}
		os.Remove(p)
	}
	return nil, false
}

// consolidate merges the packs sel into one new pack and then deletes them.
func (o *objects) consolidate(dir string, sel []packCandidate) error {
	if len(sel) < 2 {
		return nil
	}
	pb := newPackBuf(o.f)
	seen := map[oid.ID]bool{}
	var merged []string
	for _, c := range sel {
		ok, err := o.copyPack(pb, seen, c.base)
		if err != nil {
			return err
		}
		if ok {
			merged = append(merged, c.base)
		}
	}
	if len(merged) < 2 {
		return nil
	}
	pack, idx, name := pb.finish()
	sp, err := stage(o.dir, pack, idx, name)
	if err != nil {
		return err
	}
	if err := sp.publish(true, false); err != nil {
		sp.discard()
		return err
	}
	keep := filepath.Join(dir, name)
	for _, b := range merged {
		if b == keep {
			continue
		}
		for _, ext := range []string{".idx", ".pack", ".rev"} {
			if err := os.Remove(b + ext); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("remove merged pack: %w", err)
			}
		}
	}
	if db, err := o.reader(); err == nil {
		db.Rescan()
	}
	return nil
}

// copyPack appends every object of the pack at base to pb (those not in
// seen). It reports false, copying nothing, when the pack has gone (a
// concurrent git gc deleted it), and an error when it is damaged: that is
// for git fsck to report, and nothing is deleted.
func (o *objects) copyPack(pb *packBuf, seen map[oid.ID]bool, base string) (bool, error) {
	// Looked at again under the lock: a listing of a large directory is
	// not one snapshot, and a pack whose update is in flight (its .keep
	// made before its .idx appeared) must not be merged before its ref
	// names it.
	if _, err := os.Lstat(base + ".keep"); err == nil {
		return false, nil
	}
	idx, err := os.ReadFile(base + ".idx")
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	pack, err := os.ReadFile(base + ".pack")
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	es, err := parseIdxV2(o.f, idx, pack)
	if err != nil {
		return false, fmt.Errorf("consolidate %s: %w", filepath.Base(base), err)
	}
	sort.Slice(es, func(i, j int) bool { return es[i].off < es[j].off })
	end := uint64(len(pack) - o.f.Size())
	for i, e := range es {
		stop := end
		if i+1 < len(es) {
			stop = es[i+1].off
		}
		if e.off < 12 || e.off >= stop || stop > end {
			return false, fmt.Errorf("consolidate %s: bad offset %d", filepath.Base(base), e.off)
		}
		if seen[e.hash] {
			continue
		}
		raw := pack[e.off:stop]
		if crc32.ChecksumIEEE(raw) != e.crc {
			return false, fmt.Errorf("consolidate %s: object %s fails its CRC", filepath.Base(base), e.hash)
		}
		seen[e.hash] = true
		switch t := raw[0] >> 4 & 7; t {
		case 1, 2, 3, 4:
			pb.addRaw(e.hash, raw, e.crc)
		default:
			// A delta: store it whole.
			typ, data, err := o.read(e.hash)
			if err != nil {
				return false, fmt.Errorf("consolidate %s: %w", filepath.Base(base), err)
			}
			pb.addObject(packObj{typ: typ, hash: e.hash, data: data})
		}
	}
	return true, nil
}

// parseIdxV2 returns the entries of a version 2 pack index, checking it
// against its pack's header and trailer.
func parseIdxV2(f oid.Format, idx, pack []byte) ([]packEntry, error) {
	const head = 8 + 256*4
	hl := uint64(f.Size())
	if uint64(len(idx)) < head+2*hl || !bytes.Equal(idx[:8], []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}) {
		return nil, errors.New("not a version 2 pack index")
	}
	n := uint64(binary.BigEndian.Uint32(idx[head-4 : head]))
	names, crcs := uint64(head), uint64(head)+hl*n
	offs := crcs + 4*n
	large := offs + 4*n
	if uint64(len(idx)) < large+2*hl {
		return nil, errors.New("pack index too short")
	}
	if uint64(len(pack)) < 12+hl || string(pack[:4]) != "PACK" || uint64(binary.BigEndian.Uint32(pack[8:12])) != n ||
		!bytes.Equal(pack[uint64(len(pack))-hl:], idx[uint64(len(idx))-2*hl:uint64(len(idx))-hl]) {
		return nil, errors.New("pack does not match its index")
	}
	es := make([]packEntry, n)
	for i := uint64(0); i < n; i++ {
		e := &es[i]
		id, ok := fromRaw(f, idx[names+hl*i:names+hl*(i+1)])
		if !ok {
			return nil, errors.New("pack index name of a bad size")
		}
		e.hash = id
		e.crc = binary.BigEndian.Uint32(idx[crcs+4*i:])
		v := binary.BigEndian.Uint32(idx[offs+4*i:])
		if v&(1<<31) == 0 {
			e.off = uint64(v)
			continue
		}
		k := large + 8*uint64(v&^(1<<31))
		if k+8 > uint64(len(idx))-2*hl {
			return nil, errors.New("pack index large offset out of range")
		}
		e.off = binary.BigEndian.Uint64(idx[k:])
	}
	return es, nil
}
