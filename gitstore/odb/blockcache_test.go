package odb

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/nwdes/nwdes/gitstore/oid"
)

// countingReader counts the reads that reach the file.
type countingReader struct {
	r     io.ReaderAt
	reads atomic.Int64
}

func (c *countingReader) ReadAt(b []byte, off int64) (int, error) {
	c.reads.Add(1)
	return c.r.ReadAt(b, off)
}

// A block reader answers every read as the file under it does, short
// reads and io.EOF past the end included, while blocks are evicted under
// it.
func TestBlockReaderReadsAsTheFile(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{0, 1, packBlockSize - 1, packBlockSize, 3*packBlockSize + 517} {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		file := bytes.NewReader(data)
		c := newBlockCache(2*packBlockSize, 0) // two blocks: reads evict
		p := &pack{name: "pack-test"}
		br := c.reader(p, file, int64(size))
		if _, ok := br.(*blockReader); !ok {
			t.Fatalf("size %d: reader is %T, want a block reader past the bound", size, br)
		}
		for range 2000 {
			off := rng.Int64N(int64(size) + 2*packBlockSize)
			// An empty read has no one answer (bytes.Reader says EOF
			// past the end, os.File nil), and a pack never asks one.
			n := 1 + rng.IntN(2*packBlockSize)
			if rng.IntN(4) == 0 {
				n = 1 + rng.IntN(64)
			}
			want := make([]byte, n)
			wn, werr := file.ReadAt(want, off)
			got := make([]byte, n)
			gn, gerr := br.ReadAt(got, off)
			if gn != wn || !errors.Is(gerr, werr) && gerr != werr || !bytes.Equal(got[:gn], want[:wn]) {
				t.Fatalf("size %d: ReadAt(%d bytes, %d) = %d, %v; the file gives %d, %v", size, n, off, gn, gerr, wn, werr)
			}
		}
		if c.size > c.limit {
			t.Fatalf("size %d: cache holds %d bytes, bound %d", size, c.size, c.limit)
		}
	}
	if _, err := newBlockCache(packBlockSize, 0).reader(&pack{}, bytes.NewReader(nil), 0).ReadAt(make([]byte, 1), -1); err == nil {
		t.Fatal("a negative offset was read")
	}
}

// A file that turns out shorter than its size: the block is kept short
// and a read past what the file has meets io.EOF, as from the file.
func TestBlockReaderShortFile(t *testing.T) {
	data := bytes.Repeat([]byte("x"), 1000)
	br := newBlockCache(1<<20, 0).reader(&pack{}, bytes.NewReader(data), 5000)
	b := make([]byte, 100)
	if n, err := br.ReadAt(b, 950); n != 50 || err != io.EOF {
		t.Fatalf("read across the file's real end: %d, %v; want 50, EOF", n, err)
	}
	if n, err := br.ReadAt(b, 100); n != 100 || err != nil {
		t.Fatalf("read inside: %d, %v", n, err)
	}
}

// A read error is returned, and nothing is kept for it.
func TestBlockReaderError(t *testing.T) {
	boom := errors.New("boom")
	c := newBlockCache(1<<20, 0)
	br := c.reader(&pack{}, failingReader{boom}, 100)
	if _, err := br.ReadAt(make([]byte, 10), 0); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	if len(c.items) != 0 {
		t.Fatalf("kept %d blocks of a failed read", len(c.items))
	}
}

type failingReader struct{ err error }

func (f failingReader) ReadAt([]byte, int64) (int, error) { return 0, f.err }

// A bulk reader of a git-written pack reads the same objects with blocks
// as without, and past the bound reads each block of the file once; a
// short reader never makes blocks.
func TestBulkReadsKeepBlocks(t *testing.T) {
	requireGit(t)
	repo := newHistoryRepo(t, 300)
	git(t, repo, nil, "repack", "-q", "-a", "-d")
	objs := allObjects(t, repo)
	idxs, _ := filepath.Glob(filepath.Join(objectsDir(repo), "pack", "*.idx"))
	if len(idxs) != 1 {
		t.Fatalf("%d packs, want 1", len(idxs))
	}
	// readAll reads every object twice and returns the reads of the
	// pack file the second pass made, and the blocks kept. The delta-base
	// cache is off, so that every object read reads its entries.
	readAll := func(blocks *blockCache) (int64, int) {
		db, err := Open(objectsDir(repo), oid.SHA1)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		db.bases, db.blocks = nil, blocks
		if _, _, err := db.Read(objs[0].id); err != nil { // opens the pack
			t.Fatal(err)
		}
		p := db.stores[0].packs[0]
		cr := &countingReader{r: p.data}
		p.data = cr
		var first int64
		for pass := range 2 {
			for _, o := range objs {
				typ, data, err := db.Read(o.id)
				if err != nil {
					t.Fatalf("read %s: %v", o.id, err)
				}
				if typ != o.typ || !bytes.Equal(data, o.data) {
					t.Fatalf("read %s: %v of %d bytes; git has %v of %d", o.id, typ, len(data), o.typ, len(o.data))
				}
			}
			if pass == 0 {
				first = cr.reads.Load()
			}
		}
		kept := 0
		if blocks != nil {
			kept = len(blocks.items)
		}
		return cr.reads.Load() - first, kept
	}
	plain, _ := readAll(nil)
	if len(objs) <= blockCacheAfter {
		t.Fatalf("only %d objects: the test needs more than the bound", len(objs))
	}
	blocks := int(p0size(t, idxs[0])/packBlockSize) + 1
	kept, n := readAll(newBlockCache(defaultBlockCacheBytes, blockCacheAfter))
	if kept != 0 || n != blocks {
		t.Fatalf("%d objects: the second pass read the pack %d times with blocks (%d of %d kept), %d without; want 0 and every block", len(objs), kept, n, blocks, plain)
	}
	short, n := readAll(newBlockCache(defaultBlockCacheBytes, int64(len(objs))*4))
	if n != 0 || short != plain {
		t.Fatalf("under the bound: %d blocks kept, %d reads (%d without blocks)", n, short, plain)
	}
}

// p0size is the size of the pack of index ip.
func p0size(t *testing.T, ip string) int64 {
	t.Helper()
	fi, err := os.Stat(strings.TrimSuffix(ip, ".idx") + ".pack")
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
