package odb

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/nwdes/nwdes/gitstore/oid"
)

func TestBaseCacheKeepsTheMostRecentlyUsedWithinItsBound(t *testing.T) {
	obj := func(n int) []byte { return bytes.Repeat([]byte{'x'}, n) }
	key := func(off int64) baseKey { return baseKey{off: off} }
	tests := []struct {
		name  string
		limit int64
		run   func(c *baseCache)
		held  []int64
		gone  []int64
	}{
		{
			name:  "entries that fit are all held",
			limit: 8 * (100 + baseEntryOverhead),
			run: func(c *baseCache) {
				for off := range int64(3) {
					c.put(key(off), plumbing.BlobObject, obj(100), 0)
				}
			},
			held: []int64{0, 1, 2},
		},
		{
			name:  "the least recently used goes first",
			limit: 8 * (100 + baseEntryOverhead),
			run: func(c *baseCache) {
				for off := range int64(8) {
					c.put(key(off), plumbing.BlobObject, obj(100), 0)
				}
				c.get(key(0))
				c.put(key(8), plumbing.BlobObject, obj(100), 0)
			},
			held: []int64{0, 2, 7, 8},
			gone: []int64{1},
		},
		{
			name:  "an object over an eighth of the bound is not kept",
			limit: 8 * (100 + baseEntryOverhead),
			run: func(c *baseCache) {
				c.put(key(0), plumbing.BlobObject, obj(101), 0)
				c.put(key(1), plumbing.BlobObject, obj(100), 0)
			},
			held: []int64{1},
			gone: []int64{0},
		},
		{
			name:  "a second put at one key replaces the first",
			limit: 8 * (100 + baseEntryOverhead),
			run: func(c *baseCache) {
				c.put(key(0), plumbing.BlobObject, obj(100), 0)
				c.put(key(0), plumbing.BlobObject, obj(10), 3)
			},
			held: []int64{0},
		},
		{
			name:  "reset drops everything",
			limit: 8 * (100 + baseEntryOverhead),
			run: func(c *baseCache) {
				c.put(key(0), plumbing.BlobObject, obj(100), 0)
				c.reset()
			},
			gone: []int64{0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newBaseCache(tt.limit)
			tt.run(c)
			var size int64
			for _, it := range c.items {
				size += int64(len(it.data)) + baseEntryOverhead
			}
			if size != c.size || c.size > c.limit {
				t.Errorf("size %d counted, %d held, bound %d", c.size, size, c.limit)
			}
			n := 0
			for it := c.lru.next; it != &c.lru; it = it.next {
				if c.items[it.key] != it {
					t.Errorf("offset %d is in the list and not the map", it.key.off)
				}
				n++
			}
			if n != len(c.items) {
				t.Errorf("%d entries listed, %d mapped", n, len(c.items))
			}
			for _, off := range tt.held {
				if _, _, _, ok, _ := c.get(key(off)); !ok {
					t.Errorf("offset %d is not held", off)
				}
			}
			for _, off := range tt.gone {
				if _, _, _, ok, _ := c.get(key(off)); ok {
					t.Errorf("offset %d is still held", off)
				}
			}
		})
	}
}

func TestReadResultsAreTheCallersToModify(t *testing.T) {
	requireGit(t)
	repo := newHistoryRepo(t, 60)
	git(t, repo, nil, "gc", "-q", "--aggressive", "--prune=now")
	db := openDB(t, objectsDir(repo))
	objs := allObjects(t, repo)
	for _, o := range objs {
		for range 2 {
			_, data, err := db.Read(o.id)
			if err != nil {
				t.Fatalf("Read(%s): %v", o.id, err)
			}
			if !bytes.Equal(data, o.data) {
				t.Fatalf("Read(%s) after its last result was modified: %d bytes differ from git's", o.id, len(data))
			}
			for i := range data {
				data[i] = 'X'
			}
		}
	}
	if len(db.bases.items) == 0 {
		t.Fatal("nothing was cached: the test proves nothing")
	}
}

func TestDeltaChainBoundHoldsThroughACachedBase(t *testing.T) {
	hp := buildHandPack(true)
	dir := t.TempDir()
	installPack(t, dir, hp.pack, hp.idx)
	for _, cached := range []bool{false, true} {
		t.Run(fmt.Sprintf("cached=%v", cached), func(t *testing.T) {
			db := openDB(t, dir)
			if !cached {
				db.bases = nil
			}
			// One link short of the bound resolves, and leaves every
			// link below it cached.
			if _, _, links, err := db.lookup(hashOf(fmt.Sprintf("deep %d", maxDeltaDepth-1)), 0); err != nil || links != maxDeltaDepth {
				t.Fatalf("the chain of %d links: %d links, %v", maxDeltaDepth, links, err)
			}
			if _, _, _, err := db.lookup(hp.deep, 0); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("the chain of %d links: %v, want ErrCorrupt", maxDeltaDepth+1, err)
			}
		})
	}
}

func TestIsolatedReadsKeepNoBases(t *testing.T) {
	db, err := OpenIsolated(t.TempDir(), hashOf("").Format(), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if db.bases != nil {
		t.Fatal("an isolated DB keeps delta bases: its refusals would depend on what it read before")
	}
}

// TestAChainsLinksAreKeptFromItsSecondWalk: the first read through a
// chain keeps its base and its result, not the links between; a read that
// walks through a link an earlier read passed keeps every link it
// resolves, so a reader of many versions finds them from then on, and so
// does every walk of a cache past keepAfter walks. Every read returns the
// right bytes throughout.
func TestAChainsLinksAreKeptFromItsSecondWalk(t *testing.T) {
	const n = 6
	b := newPackBuilder()
	version := func(i int) string {
		return fmt.Sprintf("version %d of a file that changes by one line\n%s", i, strings.Repeat("same\n", 40))
	}
	ids := make([]oid.ID, n)
	offs := make([]int64, n)
	for i := range n {
		v := version(i)
		ids[i] = blobID(v)
		if i == 0 {
			offs[i] = b.add(ids[i], plumbing.BlobObject, []byte(v), 0, oid.Zero)
			continue
		}
		prev := version(i - 1)
		offs[i] = b.add(ids[i], plumbing.OFSDeltaObject, delta(len(prev), fmt.Sprintf("version %d", i), [2]int{len("version 0"), len(v) - len("version 0")}), offs[i-1], oid.Zero)
	}
	pk, ix := b.finish()
	dir := t.TempDir()
	installPack(t, dir, pk, ix)
	db := openDB(t, dir)
	read := func(i int) {
		t.Helper()
		typ, data, err := db.Read(ids[i])
		if err != nil || typ != plumbing.BlobObject || string(data) != version(i) {
			t.Fatalf("Read(version %d) = %v, %q, %v", i, typ, data, err)
		}
	}
	packs, err := db.stores[0].packList()
	if err != nil || len(packs) != 1 {
		t.Fatal(len(packs), err)
	}
	kept := func() (held []int) {
		for i := range n {
			if _, _, _, ok, _ := db.bases.get(baseKey{packs[0], offs[i]}); ok {
				held = append(held, i)
			}
		}
		return held
	}

	read(n - 1)
	if got := kept(); !slices.Equal(got, []int{0, n - 1}) {
		t.Fatalf("after the first walk the cache holds versions %v; want the base and the result, [0 %d]", got, n-1)
	}
	read(n - 2) // through links the first walk passed
	if got := kept(); !slices.Equal(got, []int{0, 1, 2, 3, 4, 5}) {
		t.Fatalf("after the second walk the cache holds versions %v; want every one", got)
	}
	for i := range n {
		read(i)
	}

	// A cache past keepAfter walks keeps every link of a first walk.
	db = openDB(t, dir)
	if packs, err = db.stores[0].packList(); err != nil || len(packs) != 1 {
		t.Fatal(len(packs), err)
	}
	db.bases.walks.Store(keepAfter)
	read(n - 1)
	if got := kept(); !slices.Equal(got, []int{0, 1, 2, 3, 4, 5}) {
		t.Fatalf("a first walk after %d walks left versions %v cached; want every one", keepAfter, got)
	}
}
