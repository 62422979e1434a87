package odb

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/nwdes/nwdes/gitstore/oid"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

type idxEntry struct {
	id  oid.ID
	off int64
}

// buildIdx writes a version-2 index for entries the way git does: offsets
// of 2 GiB and more go to the 64-bit table, in name order.
func buildIdx(entries []idxEntry, packSum [maxHashLen]byte) []byte {
	entries = slices.Clone(entries)
	slices.SortFunc(entries, func(a, b idxEntry) int { return oid.Compare(a.id, b.id) })
	var b bytes.Buffer
	b.WriteString(idxMagic)
	binary.Write(&b, binary.BigEndian, uint32(2))
	var fanout [256]uint32
	for _, e := range entries {
		for i := int(e.id.Bytes()[0]); i < 256; i++ {
			fanout[i]++
		}
	}
	binary.Write(&b, binary.BigEndian, fanout)
	for _, e := range entries {
		b.Write(e.id.Bytes())
	}
	for range entries {
		binary.Write(&b, binary.BigEndian, uint32(0)) // crc32, unused by readers
	}
	var large []uint64
	for _, e := range entries {
		if e.off < 1<<31 {
			binary.Write(&b, binary.BigEndian, uint32(e.off))
			continue
		}
		binary.Write(&b, binary.BigEndian, uint32(len(large))|1<<31)
		large = append(large, uint64(e.off))
	}
	binary.Write(&b, binary.BigEndian, large)
	b.Write(packSum[:hashLen])
	sum := sha1.Sum(b.Bytes())
	b.Write(sum[:])
	return b.Bytes()
}

func hashOf(s string) oid.ID { sum := sha1.Sum([]byte(s)); return rawID(sum[:]...) }

func largeOffsetEntries() []idxEntry {
	return []idxEntry{
		{hashOf("a"), 12},
		{hashOf("b"), 1<<31 - 1},     // largest small offset
		{hashOf("c"), 1 << 31},       // smallest large offset
		{hashOf("d"), 5 << 32},       // beyond 32 bits entirely
		{hashOf("e"), 1<<40 + 12345}, // a terabyte in
		{hashOf("f"), 4096},
		{rawID(0x00, 1), 100},    // first fanout bucket
		{rawID(0xff, 0xff), 200}, // last fanout bucket
	}
}

func TestIdxLargeOffsets(t *testing.T) {
	entries := largeOffsetEntries()
	raw := buildIdx(entries, [maxHashLen]byte{9})
	x, err := parseIdx(bytes.NewReader(raw), int64(len(raw)), oid.SHA1)
	if err != nil {
		t.Fatalf("parseIdx: %v", err)
	}
	if x.n != int64(len(entries)) || x.nLarge != 3 || x.packSum != [maxHashLen]byte{9} {
		t.Fatalf("parsed n=%d nLarge=%d packSum=%x", x.n, x.nLarge, x.packSum)
	}
	for _, e := range entries {
		off, ok, err := x.find(e.id)
		if err != nil || !ok || off != e.off {
			t.Errorf("find(%s) = %d, %v, %v; want %d", e.id, off, ok, err, e.off)
		}
	}
	for _, h := range []oid.ID{hashOf("missing"), {}, rawID(0xff, 0xff, 0xff), rawID(0x00, 0x01, 0x01)} {
		if _, ok, err := x.find(h); ok || err != nil {
			t.Errorf("find(%s) = %v, %v; want a miss", h, ok, err)
		}
	}
}

// TestIdxNarrowing uses enough names in one fanout bucket that lookups go
// through the single-name probes before the final scan.
func TestIdxNarrowing(t *testing.T) {
	var entries []idxEntry
	for i := range 5000 {
		h := setByte(hashOf(strings.Repeat("x", i)), 0, 0x42)
		entries = append(entries, idxEntry{h, int64(12 + i)})
	}
	raw := buildIdx(entries, [maxHashLen]byte{})
	x, err := parseIdx(bytes.NewReader(raw), int64(len(raw)), oid.SHA1)
	if err != nil {
		t.Fatal(err)
	}
	x.lookups.Store(math.MinInt64 / 2) // never read whole: probe the file
	for _, e := range entries {
		if off, ok, err := x.find(e.id); off != e.off || !ok || err != nil {
			t.Fatalf("find(%s) = %d, %v, %v; want %d", e.id, off, ok, err, e.off)
		}
		miss := setByte(e.id, 19, e.id.Bytes()[19]^0xff)
		if _, ok, err := x.find(miss); ok || err != nil {
			t.Fatalf("find(%s) = %v, %v; want a miss", miss, ok, err)
		}
	}
}

// TestIdxReadWholeAnswersAsTheFile holds the lookups an index answers
// from its tables in memory (after idxLoadAfter lookups) to those it
// answers by reading the file: every name, large offsets included, and
// misses in every bucket.
func TestIdxReadWholeAnswersAsTheFile(t *testing.T) {
	entries := largeOffsetEntries()
	for i := range 3000 {
		entries = append(entries, idxEntry{hashOf(fmt.Sprint("y", i)), int64(12 + 7*i)})
	}
	raw := buildIdx(entries, [maxHashLen]byte{})
	file, err := parseIdx(bytes.NewReader(raw), int64(len(raw)), oid.SHA1)
	if err != nil {
		t.Fatal(err)
	}
	file.lookups.Store(math.MinInt64 / 2)
	whole, err := parseIdx(bytes.NewReader(raw), int64(len(raw)), oid.SHA1)
	if err != nil {
		t.Fatal(err)
	}
	whole.lookups.Store(idxLoadAfter)
	asked := []oid.ID{oid.Zero, rawID(0xff, 0xff, 0xff), hashOf("missing")}
	for _, e := range entries {
		miss := setByte(e.id, 19, e.id.Bytes()[19]^0xff)
		asked = append(asked, e.id, miss)
	}
	for _, h := range asked {
		o1, ok1, err1 := file.find(h)
		o2, ok2, err2 := whole.find(h)
		if o1 != o2 || ok1 != ok2 || (err1 == nil) != (err2 == nil) {
			t.Fatalf("find(%s): file %d %v %v, whole %d %v %v", h, o1, ok1, err1, o2, ok2, err2)
		}
	}
	if whole.tables.Load() == nil || file.tables.Load() != nil {
		t.Fatal("the tables were not read whole where asked, or were where not")
	}
}

func TestIdxRejects(t *testing.T) {
	good := buildIdx(largeOffsetEntries(), [maxHashLen]byte{})
	mutate := func(f func(b []byte) []byte) []byte { return f(slices.Clone(good)) }
	tests := []struct {
		name string
		raw  []byte
		want error
	}{
		{"empty", nil, ErrCorrupt},
		{"v1", mutate(func(b []byte) []byte { return b[8:] }), errors.ErrUnsupported},
		{"v3", mutate(func(b []byte) []byte { b[7] = 3; return b }), errors.ErrUnsupported},
		{"header only", good[:8], ErrCorrupt},
		{"truncated", good[:len(good)-1], ErrCorrupt},
		{"extra bytes", append(slices.Clone(good), 0), ErrCorrupt},
		{"fanout decreasing", mutate(func(b []byte) []byte { b[8+4*10+3] = 0xff; return b }), ErrCorrupt},
		{"object count beyond size", mutate(func(b []byte) []byte {
			binary.BigEndian.PutUint32(b[8+4*255:], 0xffffffff)
			return b
		}), ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseIdx(bytes.NewReader(tt.raw), int64(len(tt.raw)), oid.SHA1)
			if !errors.Is(err, tt.want) {
				t.Fatalf("parseIdx error = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestIdxLargeOffsetOutOfRange(t *testing.T) {
	entries := []idxEntry{{hashOf("a"), 1 << 31}}
	raw := buildIdx(entries, [maxHashLen]byte{})
	// Point the only entry at large-table slot 1 of 1.
	offs := idxNamesOff + hashLen + 4
	binary.BigEndian.PutUint32(raw[offs:], 1<<31|1)
	x, err := parseIdx(bytes.NewReader(raw), int64(len(raw)), oid.SHA1)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := x.find(entries[0].id); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("find through bad large offset: %v, want ErrCorrupt", err)
	}
}

// TestIdxVersion1FromGit makes git write a version-1 index and checks that
// the DB names the problem rather than misreading it.
func TestIdxVersion1FromGit(t *testing.T) {
	requireGit(t)
	repo := newHistoryRepo(t, 20)
	git(t, repo, nil, "repack", "-q", "-a", "-d")
	dir := objectsDir(repo)
	idxs, _ := filepath.Glob(filepath.Join(dir, "pack", "*.idx"))
	pack := strings.TrimSuffix(idxs[0], ".idx") + ".pack"
	os.Remove(idxs[0])
	git(t, repo, nil, "index-pack", "--index-version=1", "-o", idxs[0], pack)

	db := openDB(t, dir)
	head := oid.MustParse(strings.TrimSpace(string(git(t, repo, nil, "rev-parse", "main"))))
	_, _, err := db.Read(head)
	if !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), "version 1") {
		t.Fatalf("Read with a v1 index = %v, want an unsupported-version error", err)
	}
}

// TestIdxLookupReusesItsRunBuffer: a lookup that reads the file reads its
// run of names into a buffer the index keeps, not a fresh 4 KiB each time
// (in a cold process each was a page fault).
func TestIdxLookupReusesItsRunBuffer(t *testing.T) {
	var entries []idxEntry
	for i := range 5000 {
		entries = append(entries, idxEntry{setByte(hashOf(strings.Repeat("y", i)), 0, 0x42), int64(12 + i)})
	}
	raw := buildIdx(entries, [maxHashLen]byte{})
	x, err := parseIdx(bytes.NewReader(raw), int64(len(raw)), oid.SHA1)
	if err != nil {
		t.Fatal(err)
	}
	x.lookups.Store(math.MinInt64 / 2) // never read whole: probe the file
	const lookups = 200
	allocs := testing.AllocsPerRun(lookups, func() {
		if _, ok, err := x.find(entries[1234].id); !ok || err != nil {
			t.Fatal(ok, err)
		}
	})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range lookups {
		x.find(entries[4321].id)
	}
	runtime.ReadMemStats(&after)
	if perLookup := (after.TotalAlloc - before.TotalAlloc) / lookups; perLookup >= idxScanMax*hashLen {
		t.Fatalf("a lookup allocates %d bytes (%v allocations); a run of names is %d", perLookup, allocs, idxScanMax*hashLen)
	}
}
