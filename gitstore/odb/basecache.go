package odb

import (
	"sync"
	"sync/atomic"

	"github.com/go-git/go-git/v5/plumbing"
)

// defaultBaseCacheBytes bounds the objects a DB keeps resolved. git keeps
// 96 MiB (core.deltaBaseCacheLimit); nwdes's objects are records and the
// trees holding them, small beside a source tree's blobs, so a third of
// that is the bound chosen (not measured against other bounds).
const defaultBaseCacheBytes = 32 << 20

// baseEntryOverhead is what an entry costs beyond its bytes (the map slot,
// the entry and its list links), counted so that many tiny objects cannot
// grow the cache past its bound.
const baseEntryOverhead = 96

// baseCache keeps objects resolved from packs, keyed by pack and offset,
// so that reading many objects of one delta chain (the versions of a tree
// along a history) resolves each link once, as git's delta_base_cache
// does, instead of inflating and patching the whole chain again for every
// object. It is bounded in bytes and evicts the least recently used entry.
//
// Its bytes are shared by every read that finds them: they are only ever
// read (as the source of a delta, or copied out), never handed to a
// caller of the DB. Safe for concurrent use.
//
// The links between a chain's base and the object read are kept only once
// the chain is walked a second time, or once the cache has seen keepAfter
// walks: before, a walk keeps the base and the result and notes the links
// it passed (passed, their keys alone); a walk that meets a noted link
// keeps every link, as every walk did before. A short-lived reader (the
// hook reads two trees, each at the end of a chain of 30 to 50 links,
// once) then resolves the links in two reused buffers instead of keeping
// each one in fresh memory: a hundred page faults, 0.1-0.4 ms of a cold
// hook's processor time. A bulk reader keeps every link from its
// keepAfter-th walk on, as before.
type baseCache struct {
	limit int64 // at most this many bytes (with overhead) are held

	mu     sync.Mutex
	size   int64
	items  map[baseKey]*baseItem
	lru    baseItem // sentinel of a ring: lru.next is the most recently used
	passed map[baseKey]struct{}
	walks  atomic.Int64 // walks begun (walk), for keepAfter
}

// maxPassed bounds the links a cache notes without keeping: past it the
// notes start again (the walks that meet none keep only their ends).
const maxPassed = 1 << 16

// keepAfter is the number of walks after which a cache keeps every link of
// every walk, noted or not: a cold read makes a few dozen walks, a bulk
// reader thousands, and for those a second walk of each chain cost about
// 5% (BenchmarkLedgerVerifyInProcess) for memory a long run reuses anyway.
const keepAfter = 256

type baseKey struct {
	p   *pack
	off int64
}

type baseItem struct {
	key        baseKey
	typ        plumbing.ObjectType
	data       []byte
	links      int // the delta links applied to resolve it
	prev, next *baseItem
}

func newBaseCache(limit int64) *baseCache {
	c := &baseCache{limit: limit, items: map[baseKey]*baseItem{}}
	c.lru.next, c.lru.prev = &c.lru, &c.lru
	return c
}

// get returns the object resolved at k, and how many delta links made it.
// The bytes must not be modified. A nil cache holds nothing. When it does
// not hold k, passed reports whether an earlier walk noted k as a link it
// passed without keeping it (pass).
func (c *baseCache) get(k baseKey) (typ plumbing.ObjectType, data []byte, links int, ok, passed bool) {
	if c == nil {
		return plumbing.InvalidObject, nil, 0, false, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	it, ok := c.items[k]
	if !ok {
		_, passed = c.passed[k]
		return plumbing.InvalidObject, nil, 0, false, passed
	}
	c.unlink(it)
	c.pushFront(it)
	return it.typ, it.data, it.links, true, false
}

// walk counts a walk down a chain and reports whether it is past the
// first keepAfter, and so keeps every link it resolves.
func (c *baseCache) walk() bool {
	return c != nil && c.walks.Add(1) > keepAfter
}

// pass notes links a walk resolved without keeping them, so that the next
// walk through any of them keeps its links.
func (c *baseCache) pass(keys []baseKey) {
	if c == nil || len(keys) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.passed == nil || len(c.passed)+len(keys) > maxPassed {
		c.passed = make(map[baseKey]struct{}, len(keys))
	}
	for _, k := range keys {
		c.passed[k] = struct{}{}
	}
}

// put keeps data as the object resolved at k and reports whether it did;
// if so the cache owns data from now on, and nobody may modify it. An
// object bigger than an eighth of the bound is not kept: it would evict
// most of what the cache holds for one read.
func (c *baseCache) put(k baseKey, typ plumbing.ObjectType, data []byte, links int) bool {
	if c == nil {
		return false
	}
	cost := int64(len(data)) + baseEntryOverhead
	if cost > c.limit/8 {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.items[k]; ok {
		c.remove(old)
	}
	it := &baseItem{key: k, typ: typ, data: data, links: links}
	c.items[k] = it
	c.pushFront(it)
	c.size += cost
	for c.size > c.limit {
		c.remove(c.lru.prev)
	}
	return true
}

// reset drops every entry.
func (c *baseCache) reset() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.items)
	c.passed = nil
	c.lru.next, c.lru.prev = &c.lru, &c.lru
	c.size = 0
}

func (c *baseCache) remove(it *baseItem) {
	c.unlink(it)
	delete(c.items, it.key)
	c.size -= int64(len(it.data)) + baseEntryOverhead
}

func (c *baseCache) unlink(it *baseItem) {
	it.prev.next, it.next.prev = it.next, it.prev
	it.prev, it.next = nil, nil
}

func (c *baseCache) pushFront(it *baseItem) {
	it.prev, it.next = &c.lru, c.lru.next
	c.lru.next.prev = it
	c.lru.next = it
}
