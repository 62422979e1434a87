package gitstore

import (
	"slices"
	"strings"
	"sync"

	"github.com/nwdes/nwdes/gitstore/git"
	"github.com/nwdes/nwdes/gitstore/oid"
)

// dirEntries is a decoded tree's entries in the byte order of their names
// (the order the history check reports the first change in; git's own
// order sorts a directory as if its name ended in "/"). One value is
// shared by every reader through the store's tree cache: read only.
type dirEntries []git.TreeEntry

// lookup returns the entry named name, found false (and the zero entry)
// when there is none.
func (d dirEntries) lookup(name string) (git.TreeEntry, bool) {
	if i, ok := slices.BinarySearchFunc(d, name, byName); ok {
		return d[i], true
	}
	return git.TreeEntry{}, false
}

// get is lookup's entry alone: the zero entry (mode 0) when there is none.
func (d dirEntries) get(name string) git.TreeEntry {
	e, _ := d.lookup(name)
	return e
}

func byName(e git.TreeEntry, name string) int { return strings.Compare(e.Name, name) }

// hasRecord reports whether the tree is a record's directory: it holds a
// file record.json.
func (d dirEntries) hasRecord() bool {
	e, ok := d.lookup("record.json")
	return ok && !e.IsTree()
}

// decodedTreeBytes bounds the trees a store keeps decoded (counted by
// decodedTreeCost), decodedRecordBytes the records (by their envelope's
// size), and comparedTreesBytes the comparisons of two trees it keeps
// the answer of (history.go).
const (
	decodedTreeBytes   = 16 << 20
	decodedRecordBytes = 16 << 20
	comparedTreesBytes = 4 << 20
)

// generations keeps values decoded from objects, by the object's id, so
// that what several readers decode is decoded once: a walk comparing each
// commit with its parent (each tree read twice: as the newer side, then as
// the older one), a second walk over the same commits (ledger.Verify, then
// CheckHistory), a record fsck checked and then renders a note from. It
// holds two generations: a value is added to the current one, and when
// that is full the previous is dropped and the current becomes it; a
// value found in the previous generation moves back to the current one.
// So what is in use stays, and at most limit (as cost counts) is held.
// The values are shared: read only. Safe for concurrent use.
type generations[K comparable, V any] struct {
	limit int
	cost  func(V) int

	mu        sync.Mutex
	cur, prev map[K]V
	curCost   int
}

func newGenerations[K comparable, V any](limit int, cost func(V) int) *generations[K, V] {
	return &generations[K, V]{limit: limit, cost: cost}
}

// get returns the value kept for id, found false when there is none.
func (c *generations[K, V]) get(id K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.cur[id]; ok {
		return v, true
	}
	v, ok := c.prev[id]
	if ok {
		delete(c.prev, id)
		c.addLocked(id, v)
	}
	return v, ok
}

// put keeps v for id; nobody may modify v afterwards.
func (c *generations[K, V]) put(id K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.cur[id]; !ok {
		c.addLocked(id, v)
	}
}

func (c *generations[K, V]) addLocked(id K, v V) {
	cost := c.cost(v)
	if cost > c.limit/2 {
		return
	}
	if c.cur == nil || c.curCost+cost > c.limit/2 {
		c.prev, c.cur, c.curCost = c.cur, map[K]V{}, 0
	}
	c.cur[id] = v
	c.curCost += cost
}

// decodedTreeCost is about what d holds in memory: each entry's fields and
// map slot (64 bytes), and the copy of the raw tree its names are cut from
// (git.DecodeTree), which keeps each entry's name and, beside it, its mode,
// two separators and its id (at most 41 bytes more).
func decodedTreeCost(d dirEntries) int {
	n := 64
	for _, e := range d {
		n += len(e.Name) + 41 + 64
	}
	return n
}

// treeEntries returns the entries of tree h, decoded once per store while
// the cache keeps them and the object database still has the tree (as
// cachedEnvelope: a tree gone since is read, and found missing).
func (s *Store) treeEntries(h oid.ID) (dirEntries, error) {
	if d, ok := s.trees.get(h); ok && s.stillHas(h) {
		return d, nil
	}
	es, err := s.git.ReadTree(h)
	if err != nil {
		return nil, err
	}
	d := sortedDirEntries(es)
	s.trees.put(h, d)
	return d, nil
}

// sortedDirEntries sorts es, decoded in git's order, into dirEntries. The
// two orders differ only where a directory's name is a prefix of another
// name, so most trees need no sorting.
func sortedDirEntries(es []git.TreeEntry) dirEntries {
	byNames := func(a, b git.TreeEntry) int { return strings.Compare(a.Name, b.Name) }
	if !slices.IsSortedFunc(es, byNames) {
		slices.SortFunc(es, byNames)
	}
	return es
}
