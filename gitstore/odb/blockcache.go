package odb

import (
	"errors"
	"io"
	"sync"
)

const (
	// packBlockSize is the unit in which a bulk reader's pack bytes are
	// read and kept: one pread brings in the entries of a few hundred
	// small records, and a block is still a small object for Go's
	// allocator.
	packBlockSize = 32 << 10
	// defaultBlockCacheBytes bounds the pack bytes a DB keeps. git maps
	// whole packs (core.packedGitLimit); nwdes copies, so it keeps a
	// window's worth, enough for the packs its own writes make and the
	// hot part of a gc'd one.
	defaultBlockCacheBytes = 16 << 20
	// blockCacheAfter is the number of object reads from one pack after
	// which its bytes are read and kept in blocks. Before, each entry is
	// read with its own pread of packEntryBuf bytes into a pooled buffer:
	// a cold reader (the hook, a brief read) reads a few dozen entries
	// scattered over a large pack and would only pay for fresh blocks'
	// page faults. A bulk reader (fsck, ledger verify, a history check)
	// reads thousands of entries lying next to one another, and without
	// blocks made one pread per entry, about forty times the bytes of
	// the pack (13,000 preads for a 2 MiB pack in `fsck` of a
	// 1,000-observation draft), where git reads its mapped pack with none.
	blockCacheAfter = 256
)

// blockCache keeps blocks of pack data, keyed by pack and block number,
// bounded in bytes and evicting the least recently used. A block is
// never written after it is kept, so its bytes are copied out without the
// lock. A pack's files never change under their name (a pack is named by
// its content), so a kept block answers as the file would; a block read
// short at the pack's end is kept short, and a read past it gets io.EOF,
// as from the file. Safe for concurrent use.
type blockCache struct {
	limit int64
	after int64 // blockCacheAfter, or what a test sets

	mu    sync.Mutex
	size  int64
	items map[blockKey]*blockItem
	lru   blockItem // sentinel of a ring: lru.next is the most recently used
}

type blockKey struct {
	p *pack
	n int64 // block number: the block holds bytes from n*packBlockSize
}

type blockItem struct {
	key        blockKey
	data       []byte
	prev, next *blockItem
}

func newBlockCache(limit, after int64) *blockCache {
	c := &blockCache{limit: limit, after: after, items: map[blockKey]*blockItem{}}
	c.lru.next, c.lru.prev = &c.lru, &c.lru
	return c
}

// reader returns r, the data of p (size bytes), or, once p has been read
// from more than c.after times, a reader of the same bytes that keeps them
// in c. A nil cache always returns r.
func (c *blockCache) reader(p *pack, r io.ReaderAt, size int64) io.ReaderAt {
	if c == nil || p.reads.Add(1) <= c.after {
		return r
	}
	// r is p's data: an *os.File or a *bytes.Reader, both comparable.
	if br := p.blocks.Load(); br != nil && br.c == c && br.r == r {
		return br
	}
	br := &blockReader{c: c, p: p, r: r, size: size}
	p.blocks.Store(br)
	return br
}

func (c *blockCache) reset() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.items, c.size = map[blockKey]*blockItem{}, 0
	c.lru.next, c.lru.prev = &c.lru, &c.lru
}

// block returns block n of p, reading it from r when it is not kept.
func (c *blockCache) block(p *pack, r io.ReaderAt, size, n int64) ([]byte, error) {
	k := blockKey{p, n}
	c.mu.Lock()
	if it, ok := c.items[k]; ok {
		c.unlink(it)
		c.front(it)
		c.mu.Unlock()
		return it.data, nil
	}
	c.mu.Unlock()

	start := n * packBlockSize
	buf := make([]byte, min(packBlockSize, size-start))
	got, err := r.ReadAt(buf, start)
	if got < len(buf) {
		if err == nil || errors.Is(err, io.EOF) {
			// Shorter than its size said: keep what is there, and let
			// the reader meet the end where the file has it.
			buf = buf[:got]
		} else {
			return nil, err
		}
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if it, ok := c.items[k]; ok { // read meanwhile by another goroutine
		return it.data, nil
	}
	it := &blockItem{key: k, data: buf}
	c.items[k] = it
	c.front(it)
	c.size += int64(cap(buf))
	for c.size > c.limit && c.lru.prev != it {
		old := c.lru.prev
		c.unlink(old)
		delete(c.items, old.key)
		c.size -= int64(cap(old.data))
	}
	return buf, nil
}

func (c *blockCache) unlink(it *blockItem) {
	it.prev.next, it.next.prev = it.next, it.prev
}

func (c *blockCache) front(it *blockItem) {
	it.prev, it.next = &c.lru, c.lru.next
	c.lru.next.prev = it
	c.lru.next = it
}

// blockReader reads a pack's data through a blockCache.
type blockReader struct {
	c    *blockCache
	p    *pack
	r    io.ReaderAt
	size int64
}

// ReadAt follows io.ReaderAt: a read that reaches past the data returns
// what there is and io.EOF.
func (b *blockReader) ReadAt(dst []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("odb: negative offset")
	}
	n := 0
	for n < len(dst) {
		pos := off + int64(n)
		if pos >= b.size {
			return n, io.EOF
		}
		bn := pos / packBlockSize
		blk, err := b.c.block(b.p, b.r, b.size, bn)
		if err != nil {
			return n, err
		}
		at := pos - bn*packBlockSize
		if at >= int64(len(blk)) {
			return n, io.EOF
		}
		n += copy(dst[n:], blk[at:])
	}
	return n, nil
}
