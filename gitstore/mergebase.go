package gitstore

import (
	"container/heap"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/nwdes/nwdes/refusal"
)

// MergeBases returns the best common ancestors of a and b, as
// `git merge-base --all a b` does, reading commits from the store: none when
// the histories share nothing, several after criss-cross merges. It walks
// down from both by commit time, painting each commit with the side(s) that
// reach it, and stops once only commits below a common ancestor are left.
// The walk is bounded by MaxWalk (WalkLimit).
func (s *Store) MergeBases(a, b plumbing.Hash) ([]plumbing.Hash, error) {
	if a == b {
		return []plumbing.Hash{a}, nil
	}
	const (
		fromA = 1 << iota
		fromB
		stale
		result
	)
	max := s.opts.MaxWalk
	w := &walker{st: s, flags: map[plumbing.Hash]int{}, info: map[plumbing.Hash]commitMeta{}}
	w.flags[a], w.flags[b] = fromA, fromB
	if err := w.push(a); err != nil {
		return nil, err
	}
	if err := w.push(b); err != nil {
		return nil, err
	}
	var results []plumbing.Hash
	for n := 0; w.hasNonStale(stale); n++ {
		if n >= max {
			return nil, walkLimit(max)
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
				return nil, err
			}
		}
	}
	var best []plumbing.Hash
	for _, r := range results {
		if w.flags[r]&stale == 0 {
			best = append(best, r)
		}
	}
	if len(best) == 0 && w.shallowHit != "" {
		return nil, shallowBoundary(w.shallowHit)
	}
	return s.removeRedundant(best)
}

// removeRedundant drops every candidate that is an ancestor of another.
func (s *Store) removeRedundant(cands []plumbing.Hash) ([]plumbing.Hash, error) {
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
			anc, err := s.IsAncestor(c, d)
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

// IsAncestor reports whether anc is reachable from desc through parents
// (a commit is its own ancestor). The walk is bounded by MaxWalk.
func (s *Store) IsAncestor(anc, desc plumbing.Hash) (bool, error) {
	seen := map[plumbing.Hash]bool{desc: true}
	todo := []plumbing.Hash{desc}
	for n := 0; len(todo) > 0; n++ {
		if n >= s.opts.MaxWalk {
			return false, walkLimit(s.opts.MaxWalk)
		}
		h := todo[0]
		todo = todo[1:]
		if h == anc {
			return true, nil
		}
		ps, _, err := s.Parents(h)
		if err != nil {
			return false, err
		}
		if s.isShallow(h) {
			// Its parents are not in this clone: below here nothing can be
			// said, which is a refusal, not a "no".
			if len(ps) > 0 && len(todo) == 0 {
				return false, shallowBoundary(h.String())
			}
			continue
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
	return refusal.New(refusal.WalkLimit, "name a nearer commit, or raise nwdes.maxWalk",
		"the walk between two commits passed the limit of %d commits", max)
}

type commitMeta struct {
	parents []plumbing.Hash
	when    time.Time
}

// walker is a queue of commits, newest first (ties in insertion order).
type walker struct {
	st    *Store
	flags map[plumbing.Hash]int
	info  map[plumbing.Hash]commitMeta
	q     queue
	seq   int
	// shallowHit is a shallow commit the walk reached (its parents are
	// not in the clone), or "".
	shallowHit string
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
		if w.st.isShallow(h) {
			if len(ps) > 0 {
				w.shallowHit = h.String()
			}
			ps = nil
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

// isShallow reports whether h is a shallow commit of this clone (listed in
// shallow, as git fetch --depth writes it): its parents are not here.
func (s *Store) isShallow(h plumbing.Hash) bool {
	s.shallowOnce.Do(func() {
		b, err := os.ReadFile(filepath.Join(s.loc.CommonDir, "shallow"))
		if err != nil {
			return
		}
		s.shallowSet = map[plumbing.Hash]bool{}
		for _, l := range strings.Fields(string(b)) {
			if isHex40(l) {
				s.shallowSet[plumbing.NewHash(l)] = true
			}
		}
	})
	return s.shallowSet[h]
}

func shallowBoundary(commit string) error {
	return refusal.New(refusal.ShallowClone,
		"deepen the clone (git fetch --deepen=N, or --unshallow; in CI, fetch-depth: 0), then run it again",
		"the history walk reached %s, a shallow commit whose parents this clone does not have", commit[:12])
}
