package odb

import (
	"bytes"
	stdzlib "compress/zlib"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/gitstore/oid"
)

// inflateSeeds are zlib streams: made by compress/zlib at every level, by
// git itself (the loose objects of a small repository, when git is
// installed), and damaged copies of them (a flipped byte, a cut end, a
// wrong checksum, bytes after the end, a preset dictionary).
func inflateSeeds(tb testing.TB) [][]byte {
	var seeds [][]byte
	for _, level := range []int{stdzlib.NoCompression, stdzlib.BestSpeed, stdzlib.DefaultCompression, stdzlib.BestCompression, stdzlib.HuffmanOnly} {
		for _, s := range []string{"", "blob 5\x00hello", strings.Repeat("tree 40000 name\x00", 300) + string(bytes.Repeat([]byte{0xa7, 0x13}, 4000))} {
			var b bytes.Buffer
			w, _ := stdzlib.NewWriterLevel(&b, level)
			w.Write([]byte(s))
			w.Close()
			seeds = append(seeds, b.Bytes())
		}
	}
	if repo, ok := tb.(*testing.F); ok && hasGit() {
		dir := newHistoryRepo(repo, 4)
		loose, _ := filepath.Glob(filepath.Join(objectsDir(dir), "??", "*"))
		for _, p := range loose {
			if b, err := os.ReadFile(p); err == nil {
				seeds = append(seeds, b)
			}
		}
	}
	var damaged [][]byte
	for _, s := range seeds {
		if len(s) < 8 {
			continue
		}
		flip := bytes.Clone(s)
		flip[len(flip)/2] ^= 0x10
		sum := bytes.Clone(s)
		sum[len(sum)-1] ^= 1
		dict := bytes.Clone(s)
		dict[1] |= 0x20
		damaged = append(damaged, flip, s[:len(s)-3], sum, append(bytes.Clone(s), "trailing"...), dict)
	}
	return append(seeds, damaged...)
}

func hasGit() bool {
	_, err := exec.LookPath("git")
	return err == nil
}

// FuzzInflateAgreesWithCompressZlib holds DB.inflate, which decodes with
// github.com/klauspost/compress/zlib, to the same reading done with the
// standard library's compress/zlib: for any stream and declared size both
// refuse, or both return the same bytes. (TestReadAgreesWithGit holds the
// whole read to git's own objects.)
func FuzzInflateAgreesWithCompressZlib(f *testing.F) {
	for _, s := range inflateSeeds(f) {
		for _, size := range []int64{0, 5, 16, 4096} {
			f.Add(s, size)
		}
	}
	db := &DB{}
	f.Fuzz(func(t *testing.T, stream []byte, size int64) {
		if size < 0 || size > 1<<20 {
			return
		}
		got, err := db.inflate(bytes.NewReader(stream), size)
		want, wantErr := inflateStd(stream, size)
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("inflate: %v; compress/zlib: %v", err, wantErr)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("inflate made %d bytes, compress/zlib %d", len(got), len(want))
		}
	})
}

// inflateStd is DB.inflate done with compress/zlib: exactly size bytes,
// then the end of the stream, whose checksum must hold.
func inflateStd(stream []byte, size int64) ([]byte, error) {
	zr, err := stdzlib.NewReader(bytes.NewReader(stream))
	if err != nil {
		return nil, err
	}
	data, err := readExact(zr, size)
	if err != nil {
		return nil, err
	}
	var one [1]byte
	if n, err := io.ReadFull(zr, one[:]); n != 0 || err != io.EOF {
		return nil, io.ErrUnexpectedEOF
	}
	return data, nil
}

// TestInflateAgreesWithCompressZlibOnGitObjects inflates every entry of
// packs git wrote (OFS and REF deltas) and every loose object, with both
// decoders, from a pack read as DB reads it.
func TestInflateAgreesWithCompressZlibOnGitObjects(t *testing.T) {
	if !hasGit() {
		t.Skip("git not installed")
	}
	repo := newHistoryRepo(t, 30)
	git(t, repo, nil, "repack", "-q", "-a", "-d")
	db, err := Open(objectsDir(repo), oid.SHA1)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	packs, err := db.stores[0].packList()
	if err != nil || len(packs) == 0 {
		t.Fatalf("%d packs, %v", len(packs), err)
	}
	p := packs[0]
	r, size, err := p.loadData()
	if err != nil {
		t.Fatal(err)
	}
	entries := 0
	for i := range p.idx.n {
		off, err := p.idx.offset(i)
		if err != nil {
			t.Fatal(err)
		}
		e, err := db.readEntry(r, size, off, oid.SHA1)
		if err != nil {
			t.Fatalf("entry at %d: %v", off, err)
		}
		// The entry's zlib stream starts after its header; find it by
		// decoding the header again.
		raw := make([]byte, size-off)
		if err := readAt(r, raw, off); err != nil {
			t.Fatal(err)
		}
		want, err := inflateStd(raw[entryHeaderLen(raw):], int64(len(e.payload)))
		if err != nil {
			t.Fatalf("entry at %d: compress/zlib: %v", off, err)
		}
		if !bytes.Equal(want, e.payload) {
			t.Fatalf("entry at %d: the decoders differ", off)
		}
		entries++
	}
	if entries < 60 {
		t.Fatalf("only %d entries", entries)
	}
}

// entryHeaderLen is the length of a pack entry's header: the type and size
// varint, then an OFS_DELTA's offset or a REF_DELTA's base id.
func entryHeaderLen(b []byte) int {
	i := 0
	typ := (b[0] >> 4) & 7
	for b[i]&0x80 != 0 {
		i++
	}
	i++
	switch typ {
	case 6:
		for b[i]&0x80 != 0 {
			i++
		}
		i++
	case 7:
		i += 20
	}
	return i
}
