//go:build unix

package odb

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestMappedPackTruncatedInPlaceIsCorrupt: a mapped pack cut short in
// place after it was opened (git never does this; another program might)
// makes a read of an entry past the new end fail with ErrCorrupt, where
// touching the mapping there raises SIGBUS, which would end the process.
func TestMappedPackTruncatedInPlaceIsCorrupt(t *testing.T) {
	requireGit(t)
	repo := newHistoryRepo(t, 4)
	commitFiles(t, repo, "a pack worth mapping", map[string][]byte{"mapped.bin": noise(9, mapMinSize)})
	git(t, repo, nil, "repack", "-q", "-a", "-d")
	git(t, repo, nil, "prune-packed")

	db := openDB(t, objectsDir(repo))
	packs, err := db.stores[0].packList()
	if err != nil || len(packs) != 1 {
		t.Fatalf("%d packs, %v", len(packs), err)
	}
	p := packs[0]
	r, size, err := p.loadData()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.(*mappedPack); !ok {
		t.Fatal("the pack is not mapped")
	}
	// The entry at the highest offset, and the first object read to
	// check that reads work before the cut.
	var offs []int64
	for i := range p.idx.n {
		off, err := p.idx.offset(i)
		if err != nil {
			t.Fatal(err)
		}
		offs = append(offs, off)
	}
	last := slices.Max(offs)
	if last < 2*pageSize() {
		t.Fatalf("the last entry is at %d", last)
	}
	if _, _, _, err := db.readPacked(p, slices.Min(offs), 0); err != nil {
		t.Fatal(err)
	}

	packFile := filepath.Join(objectsDir(repo), "pack", p.name+".pack")
	if err := os.Chmod(packFile, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(packFile, pageSize()); err != nil {
		t.Fatal(err)
	}
	_, data, _, err := db.readPacked(p, last, 0)
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("read of the entry at %d of a pack mapped at %d bytes and cut to %d: %d bytes, %v; want ErrCorrupt", last, size, pageSize(), len(data), err)
	}
	buf := make([]byte, 16)
	if _, err := r.ReadAt(buf, last); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("ReadAt past the cut: %v; want ErrCorrupt", err)
	}
}

func pageSize() int64 { return int64(os.Getpagesize()) }
