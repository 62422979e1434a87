package examine

import (
	"container/heap"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/refusal"
)

// MergeBase returns the best common ancestor of a and b, as
// `git merge-base a b` does, reading commits from the store. It walks down
// from both by commit time, painting each commit with the side(s) that
// reach it, and stops once only commits below a common ancestor are left.
// Histories with several best merge bases (criss-cross merges) are refused:
// naming BASE..HEAD makes the choice explicit. The walk is bounded by the
// store's MaxWalk.
func MergeBase(st *gitstore.Store, a, b plumbing.Hash) (plumbing.Hash, error) {
	if a == b {
		return a, nil
	}
	const (
		fromA = 1 << iota
		fromB
		stale
		result
	)
	max := st.Options().MaxWalk
	w := &walker{st: st, flags: map[plumbing.Hash]int{}, info: map[plumbing.Hash]commitMeta{}}
	w.flags[a], w.flags[b] = fromA, fromB
	if err := w.push(a); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := w.push(b); err != nil {
		return plumbing.ZeroHash, err
	}
	var results []plumbing.Hash
	for n := 0; w.hasNonStale(stale); n++ {
		if n >= max {
			return plumbing.ZeroHash, walkLimit(max)
		}
		c := heap.Pop(&w.q).(queued).h
		f := w.flags[c] & (fromA | fromB | stale)
		if f&(fromA|fromB) == fromA|fromB {
			if w.flags[c]&result == 0 {
				w.flags[c] |= result
				results = append(results, c)
			}
			f |= stale
		}
		for _, p := range w.info[c].parents {
			if w.flags[p]&f == f {
				continue
			}
			w.flags[p] |= f
			if err := w.push(p); err != nil {
				return plumbing.ZeroHash, err
			}
		}
	}
	var best []plumbing.Hash
	for _, r := range results {
		if w.flags[r]&stale == 0 {
			best = append(best, r)
		}
	}
	best, err := removeRedundant(st, best, max)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	switch len(best) {
	case 0:
		return plumbing.ZeroHash, refusal.New("MissingFact", "name a BASE that shares history with HEAD",
			"%s and %s have no common ancestor", short(a.String()), short(b.String()))
	case 1:
		return best[0], nil
	}
	return plumbing.ZeroHash, refusal.New("PartInvalid", "name the base yourself with BASE..HEAD",
		"%s and %s have %d merge bases", short(a.String()), short(b.String()), len(best))
}

// removeRedundant drops every candidate that is an ancestor of another.
func removeRedundant(st *gitstore.Store, cands []plumbing.Hash, max int) ([]plumbing.Hash, error) {
	if len(cands) < 2 {
		return cands, nil
	}
	var keep []plumbing.Hash
	for i, c := range cands {
		redundant := false
		for j, d := range cands {
			if i == j {
				continue
			}
			anc, err := isAncestor(st, c, d, max)
			if err != nil {
				return nil, err
			}
			if anc {
				redundant = true
				break
			}
		}
		if !redundant {
			keep = append(keep, c)
		}
	}
	return keep, nil
}

// isAncestor reports whether anc is reachable from desc through parents.
func isAncestor(st *gitstore.Store, anc, desc plumbing.Hash, max int) (bool, error) {
	seen := map[plumbing.Hash]bool{desc: true}
	todo := []plumbing.Hash{desc}
	for n := 0; len(todo) > 0; n++ {
		if n >= max {
			return false, walkLimit(max)
		}
		h := todo[0]
		todo = todo[1:]
		if h == anc {
			return true, nil
		}
		ps, _, err := st.Parents(h)
		if err != nil {
			return false, err
		}
		for _, p := range ps {
			if !seen[p] {
				seen[p] = true
				todo = append(todo, p)
			}
		}
	}
	return false, nil
}

func walkLimit(max int) error {
	return refusal.New("WalkLimit", "name a nearer BASE, or raise nwdes.maxWalk",
		"finding the merge base took more than the walk limit of %d commits", max)
}

type commitMeta struct {
	parents []plumbing.Hash
	when    time.Time
}

// walker is a queue of commits, newest first (ties in insertion order).
type walker struct {
	st    *gitstore.Store
	flags map[plumbing.Hash]int
	info  map[plumbing.Hash]commitMeta
	q     queue
	seq   int
}

type queued struct {
	h    plumbing.Hash
	when time.Time
	seq  int
}

type queue []queued

func (q queue) Len() int { return len(q) }
func (q queue) Less(i, j int) bool {
	if !q[i].when.Equal(q[j].when) {
		return q[i].when.After(q[j].when)
	}
	return q[i].seq < q[j].seq
}
func (q queue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *queue) Push(x any)   { *q = append(*q, x.(queued)) }
func (q *queue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

func (w *walker) push(h plumbing.Hash) error {
	m, ok := w.info[h]
	if !ok {
		ps, when, err := w.st.Parents(h)
		if err != nil {
			return err
		}
		m = commitMeta{parents: ps, when: when}
		w.info[h] = m
	}
	w.seq++
	heap.Push(&w.q, queued{h: h, when: m.when, seq: w.seq})
	return nil
}

func (w *walker) hasNonStale(stale int) bool {
	for _, e := range w.q {
		if w.flags[e.h]&stale == 0 {
			return true
		}
	}
	return false
}
