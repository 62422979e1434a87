package odb

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"github.com/nwdes/nwdes/gitstore/oid"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// packBuilder writes packs by hand, for entries git never produces (deltas
// against an empty base, delta cycles) and for fuzz seeds.
type packBuilder struct {
	buf     bytes.Buffer
	entries []idxEntry
	zw      *zlib.Writer // reused: a fresh writer allocates ~1 MiB
}

func newPackBuilder() *packBuilder {
	b := &packBuilder{}
	b.buf.WriteString("PACK")
	binary.Write(&b.buf, binary.BigEndian, uint32(2))
	binary.Write(&b.buf, binary.BigEndian, uint32(0)) // count, set by finish
	return b
}

// add appends an entry named id and returns its offset. ofsBase (for
// OFS_DELTA) is the base's offset; refBase (for REF_DELTA) its id.
func (b *packBuilder) add(id oid.ID, typ plumbing.ObjectType, payload []byte, ofsBase int64, refBase oid.ID) int64 {
	off := int64(b.buf.Len())
	size := len(payload)
	c := byte(typ)<<4 | byte(size&0x0f)
	size >>= 4
	for size > 0 {
		b.buf.WriteByte(c | 0x80)
		c = byte(size & 0x7f)
		size >>= 7
	}
	b.buf.WriteByte(c)
	switch typ {
	case plumbing.OFSDeltaObject:
		rel := uint64(off - ofsBase)
		var enc [10]byte
		pos := len(enc) - 1
		enc[pos] = byte(rel & 0x7f)
		for rel >>= 7; rel > 0; rel >>= 7 {
			rel--
			pos--
			enc[pos] = 0x80 | byte(rel&0x7f)
		}
		b.buf.Write(enc[pos:])
	case plumbing.REFDeltaObject:
		b.buf.Write(refBase.Bytes())
	}
	if b.zw == nil {
		b.zw = zlib.NewWriter(&b.buf)
	} else {
		b.zw.Reset(&b.buf)
	}
	b.zw.Write(payload)
	b.zw.Close()
	b.entries = append(b.entries, idxEntry{id, off})
	return off
}

func (b *packBuilder) finish() (pack, idx []byte) {
	pack = bytes.Clone(b.buf.Bytes())
	binary.BigEndian.PutUint32(pack[8:], uint32(len(b.entries)))
	sum := sha1.Sum(pack)
	pack = append(pack, sum[:]...)
	var packSum [maxHashLen]byte
	copy(packSum[:], sum[:])
	return pack, buildIdx(b.entries, packSum)
}

// install writes the pack into objects dir under git's naming scheme.
func installPack(t *testing.T, dir string, pack, idx []byte) {
	t.Helper()
	name := filepath.Join(dir, "pack", "pack-"+hex.EncodeToString(pack[len(pack)-hashLen:]))
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name+".pack", pack, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name+".idx", idx, 0o644); err != nil {
		t.Fatal(err)
	}
}

func leb128(b []byte, v int) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// delta builds a delta from a base of srcLen bytes out of ops: a string op
// inserts its bytes, a [2]int op copies [offset, size] from the base.
func delta(srcLen int, ops ...any) []byte {
	var out []byte
	dst := 0
	var body []byte
	for _, op := range ops {
		switch op := op.(type) {
		case string:
			body = append(body, byte(len(op)))
			body = append(body, op...)
			dst += len(op)
		case [2]int:
			cmd := byte(0x80)
			var args []byte
			for i := range 4 {
				if v := byte(op[0] >> (8 * i)); v != 0 {
					cmd |= 1 << i
					args = append(args, v)
				}
			}
			for i := range 3 {
				if v := byte(op[1] >> (8 * i)); v != 0 {
					cmd |= 0x10 << i
					args = append(args, v)
				}
			}
			body = append(append(body, cmd), args...)
			dst += op[1]
		}
	}
	out = leb128(out, srcLen)
	out = leb128(out, dst)
	return append(out, body...)
}

type handPack struct {
	pack, idx []byte
	want      map[oid.ID]string // readable objects and their content
	cycle     oid.ID            // REF_DELTA naming itself
	deep      oid.ID            // OFS_DELTA chain longer than allowed
	badBase   oid.ID            // REF_DELTA to an absent base
}

func blobID(s string) oid.ID { return hashObject(oid.SHA1, plumbing.BlobObject, []byte(s)) }

// buildHandPack builds a pack of hand-made entries; deep adds a chain one
// link longer than maxDeltaDepth (10k entries, too big for a fuzz seed).
func buildHandPack(deep bool) handPack {
	b := newPackBuilder()
	hp := handPack{want: map[oid.ID]string{}}

	base := strings.Repeat("0123456789", 30)
	baseID := blobID(base)
	baseOff := b.add(baseID, plumbing.BlobObject, []byte(base), 0, oid.Zero)
	hp.want[baseID] = base

	// OFS_DELTA on the base, then REF_DELTA on that.
	v2 := base[:100] + "CHANGED" + base[150:]
	v2ID := blobID(v2)
	b.add(v2ID, plumbing.OFSDeltaObject, delta(len(base), [2]int{0, 100}, "CHANGED", [2]int{150, 150}), baseOff, oid.Zero)
	hp.want[v2ID] = v2
	v3 := "prefix " + v2
	v3ID := blobID(v3)
	b.add(v3ID, plumbing.REFDeltaObject, delta(len(v2), "prefix ", [2]int{0, len(v2)}), 0, v2ID)
	hp.want[v3ID] = v3

	// A delta against the empty blob, which packfile.PatchDelta refuses.
	emptyID := blobID("")
	emptyOff := b.add(emptyID, plumbing.BlobObject, nil, 0, oid.Zero)
	hp.want[emptyID] = ""
	fromEmpty := "built from nothing"
	fromEmptyID := blobID(fromEmpty)
	b.add(fromEmptyID, plumbing.OFSDeltaObject, delta(0, fromEmpty), emptyOff, oid.Zero)
	hp.want[fromEmptyID] = fromEmpty

	// A delta whose result is empty: a tree, since the empty blob is
	// taken. The base need not parse as a tree; this layer never looks.
	// git applies a delta of 4 bytes at least, and every command makes a
	// byte or more, so the one empty result it applies is the two sizes
	// and a last command that does not fit (a copy of one byte), which
	// patch_delta reads and leaves.
	treeBase := "not really a tree"
	treeOff := b.add(hashObject(oid.SHA1, plumbing.TreeObject, []byte(treeBase)), plumbing.TreeObject, []byte(treeBase), 0, oid.Zero)
	b.add(hashObject(oid.SHA1, plumbing.TreeObject, nil), plumbing.OFSDeltaObject, append(delta(len(treeBase)), 0x90, 0x01), treeOff, oid.Zero)

	hp.cycle = hashOf("cycle")
	b.add(hp.cycle, plumbing.REFDeltaObject, delta(1, "x"), 0, hp.cycle)

	hp.badBase = hashOf("bad base")
	b.add(hp.badBase, plumbing.REFDeltaObject, delta(1, "x"), 0, hashOf("nowhere"))

	hp.pack, hp.idx = b.finish()
	if !deep {
		return hp
	}
	// maxDeltaDepth+1 OFS links, each inserting nothing new.
	prev := b.add(hashOf("deep base"), plumbing.BlobObject, []byte("d"), 0, oid.Zero)
	for i := range maxDeltaDepth + 1 {
		id := hashOf("deep " + strconv.Itoa(i))
		if i == maxDeltaDepth {
			id = hashOf("deep")
		}
		prev = b.add(id, plumbing.OFSDeltaObject, delta(1, [2]int{0, 1}), prev, oid.Zero)
	}
	hp.deep = hashOf("deep")

	hp.pack, hp.idx = b.finish()
	return hp
}

func TestHandBuiltPack(t *testing.T) {
	hp := buildHandPack(true)
	dir := t.TempDir()
	installPack(t, dir, hp.pack, hp.idx)
	db := openDB(t, dir)
	for id, want := range hp.want {
		typ, data, err := db.Read(id)
		if err != nil || typ != plumbing.BlobObject || string(data) != want {
			t.Errorf("Read(%s) = %v, %q, %v; want blob %q", id, typ, data, err, want)
		}
	}
	emptyTree := hashObject(oid.SHA1, plumbing.TreeObject, nil)
	if typ, data, err := db.Read(emptyTree); err != nil || typ != plumbing.TreeObject || len(data) != 0 {
		t.Errorf("Read(empty tree) = %v, %q, %v", typ, data, err)
	}
	for name, id := range map[string]oid.ID{"cycle": hp.cycle, "deep": hp.deep, "missing base": hp.badBase} {
		_, _, err := db.Read(id)
		if !errors.Is(err, ErrCorrupt) || errors.Is(err, ErrNotFound) {
			t.Errorf("%s: Read = %v, want ErrCorrupt", name, err)
		}
	}
}

func TestPackIdxMismatch(t *testing.T) {
	hp := buildHandPack(false)
	other := newPackBuilder()
	other.add(blobID("x"), plumbing.BlobObject, []byte("x"), 0, oid.Zero)
	_, otherIdx := other.finish()

	dir := t.TempDir()
	installPack(t, dir, hp.pack, otherIdx)
	db := openDB(t, dir)
	_, _, err := db.Read(blobID("x"))
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Read with mismatched idx = %v, want ErrCorrupt", err)
	}
}
