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

// decodedTreeBytes bounds the trees a store keeps decoded, counted as
// decodedTreeCost counts them, across its two generations.
const decodedTreeBytes = 16 << 20

// decodedTrees keeps the trees a store's history checks decoded, by id,
// so that a walk comparing each commit with its parent (each tree read
// twice: as the newer side, then as the older one) and a second walk over
// the same commits (ledger.Verify, then CheckHistory) decode each tree
// once. It holds two generations: a tree is added to the current one, and
// when that is full the previous is dropped and the current becomes it;
// a tree found in the previous generation moves back to the current one.
// So what is in use stays, and at most decodedTreeBytes are held. Safe
// for concurrent use.
type decodedTrees struct {
	mu        sync.Mutex
	cur, prev map[oid.ID]dirEntries
	curBytes  int
}

// get returns the tree id decoded, found false when it is not kept.
func (c *decodedTrees) get(id oid.ID) (dirEntries, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d, ok := c.cur[id]; ok {
		return d, true
	}
	d, ok := c.prev[id]
	if ok {
		delete(c.prev, id)
		c.addLocked(id, d)
	}
	return d, ok
}

// put keeps d as the tree id decoded; nobody may modify d afterwards.
func (c *decodedTrees) put(id oid.ID, d dirEntries) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.cur[id]; !ok {
		c.addLocked(id, d)
	}
}

func (c *decodedTrees) addLocked(id oid.ID, d dirEntries) {
	cost := decodedTreeCost(d)
	if cost > decodedTreeBytes/2 {
		return
	}
	if c.cur == nil || c.curBytes+cost > decodedTreeBytes/2 {
		c.prev, c.cur, c.curBytes = c.cur, map[oid.ID]dirEntries{}, 0
	}
	c.cur[id] = d
	c.curBytes += cost
}

// decodedTreeCost is about what d holds in memory: each entry's name and
// fields, and the map slot.
func decodedTreeCost(d dirEntries) int {
	n := 64
	for _, e := range d {
		n += len(e.Name) + 64
	}
	return n
}

// treeEntries returns the entries of tree h, decoded once per store while
// the cache keeps them.
func (s *Store) treeEntries(h oid.ID) (dirEntries, error) {
	if d, ok := s.trees.get(h); ok {
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
