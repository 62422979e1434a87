package git

import (
	"container/heap"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/refusal"
)

// MergeBases returns the best common ancestors of a and b, as
// `git merge-base --all a b` does, reading commits from the repository: none when
// the histories share nothing, several after criss-cross merges. It walks
// down from both, painting each commit with the side(s) that reach it, and
// stops once only commits below a common ancestor are left (git's
// paint_down_to_common).
//
// The walk goes by generation number (see commitgraph.go): a commit is
// taken only after every commit above it that either side reaches, so no
// commit is painted late, whatever the commit times say; only commits
// outside the commit-graph count against MaxWalk. Where generations cannot
// be had (a shallow clone, or more than MaxWalk commits outside any
// commit-graph) it walks by commit time as git does without a graph, and
// every commit counts against MaxWalk (WalkLimit).
func (s *Repo) MergeBases(a, b oid.ID) ([]oid.ID, error) {
	if err := s.check(a, b); err != nil {
		return nil, err
	}
	hs := []oid.ID{a, b}
	bases, err := s.mergeBases(hs[0], hs[1])
	return bases, err
}

func (s *Repo) mergeBases(a, b oid.ID) ([]oid.ID, error) {
	if a == b {
		return []oid.ID{a}, nil
	}
	shallow, err := s.shallowCommits()
	if err != nil {
		return nil, err
	}
	if len(shallow) == 0 && !s.gensTooFar() {
		for range 2 {
			w := s.newGenWalk()
			best, err := s.paintDown(w, a, b)
			w.done()
			if errors.Is(err, errGraphWrong) {
				// Answer again without the graph.
				s.dropGraph(w.g)
				continue
			}
			if !errors.Is(err, errNeedGraph) {
				return best, err
			}
			s.setGensTooFar()
			break
		}
	}
	return s.paintDown(nil, a, b)
}

// paintDown is git's paint_down_to_common followed by remove_redundant.
// With gw it orders the walk by generation, else by commit time alone.
// git's min_generation cut-off is 0 for merge bases (every common
// ancestor must be found), so there is none here; IsAncestor has its own
// walk with the cut-off.
func (s *Repo) paintDown(gw *genWalk, a, b oid.ID) ([]oid.ID, error) {
	const (
		fromA = 1 << iota
		fromB
		stale
		result
	)
	max := s.opts.MaxWalk
	w := &walker{st: s, gw: gw, flags: map[oid.ID]int{}, info: map[oid.ID]commitMeta{}}
	w.flags[a], w.flags[b] = fromA, fromB
	if err := w.push(a); err != nil {
		return nil, err
	}
	if err := w.push(b); err != nil {
		return nil, err
	}
	var results []oid.ID
	for n := 0; w.hasNonStale(stale); n++ {
		if gw == nil && n >= max {
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
	var best []oid.ID
	for _, r := range results {
		if w.flags[r]&stale == 0 {
			best = append(best, r)
		}
	}
	if len(best) == 0 && w.shallowHit != "" {
		return nil, shallowBoundary(w.shallowHit)
	}
	return s.removeRedundant(gw, best)
}

// removeRedundant drops every candidate that is an ancestor of another.
func (s *Repo) removeRedundant(gw *genWalk, cands []oid.ID) ([]oid.ID, error) {
	if len(cands) < 2 {
		return cands, nil
	}
	var keep []oid.ID
	for i, c := range cands {
		redundant := false
		for j, d := range cands {
			if i == j {
				continue
			}
			var anc bool
			var err error
			if gw != nil {
				anc, err = gw.isAncestor(c, d)
			} else {
				anc, err = s.isAncestorWalk(c, d)
			}
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
// (a commit is its own ancestor), as `git merge-base --is-ancestor` does.
//
// With generation numbers (see commitgraph.go) it answers "no" at once
// when anc's generation is not below desc's, and otherwise walks down from
// desc only through commits whose generation is above anc's: the cost is
// the commits between the two, plus the commits outside the commit-graph,
// which alone count against MaxWalk. Where generations cannot be had (a
// shallow clone, or more than MaxWalk commits outside any commit-graph) it
// walks the whole history below desc, bounded by MaxWalk (WalkLimit).
func (s *Repo) IsAncestor(anc, desc oid.ID) (bool, error) {
	if err := s.check(anc, desc); err != nil {
		return false, err
	}
	hs := []oid.ID{anc, desc}
	return s.isAncestor(hs[0], hs[1])
}

func (s *Repo) isAncestor(anc, desc oid.ID) (bool, error) {
	if anc == desc {
		return true, nil
	}
	shallow, err := s.shallowCommits()
	if err != nil {
		return false, err
	}
	if len(shallow) == 0 && !s.gensTooFar() {
		for range 2 {
			w := s.newGenWalk()
			ok, err := w.isAncestor(anc, desc)
			w.done()
			if errors.Is(err, errGraphWrong) {
				s.dropGraph(w.g)
				continue
			}
			if !errors.Is(err, errNeedGraph) {
				return ok, err
			}
			s.setGensTooFar()
			break
		}
	}
	return s.isAncestorWalk(anc, desc)
}

// isAncestor is IsAncestor with generation numbers: git's
// can_all_from_reach_with_flag, with min_generation the generation of anc.
func (w *genWalk) isAncestor(anc, desc oid.ID) (bool, error) {
	if anc == desc {
		return true, nil
	}
	ga, err := w.gen(anc)
	if err != nil {
		return false, err
	}
	gd, err := w.gen(desc)
	if err != nil {
		return false, err
	}
	if ga >= gd {
		// Every ancestor of desc other than desc has a smaller generation.
		return false, nil
	}
	seen := map[oid.ID]bool{desc: true}
	todo := []oid.ID{desc}
	for len(todo) > 0 {
		c := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		m, err := w.meta(c)
		if err != nil {
			return false, err
		}
		// Parents in reverse so that the first parent is taken first:
		// evidence histories are first-parent chains.
		for i := len(m.parents) - 1; i >= 0; i-- {
			p := m.parents[i]
			if p == anc {
				return true, nil
			}
			if seen[p] {
				continue
			}
			seen[p] = true
			gp, err := w.gen(p)
			if err != nil {
				return false, err
			}
			if gp <= ga {
				// p is anc's generation or below, and not anc: anc is
				// not among p's ancestors.
				continue
			}
			todo = append(todo, p)
		}
	}
	return false, nil
}

// isAncestorWalk is IsAncestor without generation numbers: a walk from
// desc through everything below it, bounded by MaxWalk.
func (s *Repo) isAncestorWalk(anc, desc oid.ID) (bool, error) {
	seen := map[oid.ID]bool{desc: true}
	todo := []oid.ID{desc}
	for n := 0; len(todo) > 0; n++ {
		if n >= s.opts.MaxWalk {
			return false, walkLimit(s.opts.MaxWalk)
		}
		h := todo[0]
		todo = todo[1:]
		if h == anc {
			return true, nil
		}
		ps, _, err := s.parents(h)
		if err != nil {
			return false, err
		}
		s.gens.visits.Add(1)
		shallow, err := s.isShallow(h)
		if err != nil {
			return false, err
		}
		if shallow {
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
	return refusal.New(refusal.WalkLimit,
		"write a commit-graph (git commit-graph write --reachable, or git gc), name a nearer commit, or raise nwdes.maxWalk",
		"the walk between two commits passed the limit of %d commits", max)
}

var (
	// errGraphWrong: the commit-graph disagrees with the commit objects,
	// or could not be read; the question is asked again without it.
	errGraphWrong = errors.New("commit-graph disagrees with the objects")
	// errNeedGraph: more than MaxWalk commits lie outside the graph (or
	// there is no graph and the history is longer than that).
	errNeedGraph = errors.New("too many commits outside the commit-graph")
)

// genWalk answers generation questions for one walk, with the graph as it
// was when the walk began.
type genWalk struct {
	s    *Repo
	g    *commitGraph
	info map[oid.ID]commitMeta
	gens map[oid.ID]uint64
	// fresh are the generations this walk found that the repository did not
	// know: handed to it by done.
	fresh map[oid.ID]uint64
}

func (s *Repo) newGenWalk() *genWalk {
	return &genWalk{s: s, g: s.currentGraph(), info: map[oid.ID]commitMeta{},
		gens: map[oid.ID]uint64{}, fresh: map[oid.ID]uint64{}}
}

// done lets the repository remember what the walk found.
func (w *genWalk) done() {
	if len(w.fresh) > 0 {
		w.s.rememberGens(w.g, w.fresh)
	}
}

// meta reads a commit's parents and time from its object.
func (w *genWalk) meta(h oid.ID) (commitMeta, error) {
	if m, ok := w.info[h]; ok {
		return m, nil
	}
	ps, when, err := w.s.parents(h)
	if err != nil {
		return commitMeta{}, err
	}
	w.s.gens.visits.Add(1)
	m := commitMeta{parents: ps, when: when}
	w.info[h] = m
	return m, nil
}

// known returns h's generation if this walk, the repository or the graph knows
// it, without deriving it.
func (w *genWalk) known(h oid.ID) (uint64, bool, error) {
	if v, ok := w.gens[h]; ok {
		return v, true, nil
	}
	if v, ok := w.s.knownGen(h); ok {
		w.gens[h] = v
		return v, true, nil
	}
	return w.graphGen(h)
}

// graphGen returns h's generation from the commit-graph. The graph is
// input, written by whoever can write .git, and may be damaged, so every
// entry is checked when it is used: its parents must be those of the
// commit object, and its generation one more than the greatest of theirs
// in the graph. That is cheap (the walk reads the object anyway) and
// catches a truncated file, a damaged entry and a wrong one alike; a
// checksum over the whole file would cost a read of all of it on every
// open, which grows with history, and would not catch a wrong entry
// written with a right checksum. Any disagreement gives errGraphWrong and
// the repository stops using the graph.
func (w *genWalk) graphGen(h oid.ID) (uint64, bool, error) {
	if w.g == nil {
		return 0, false, nil
	}
	e, ok, err := w.g.entry(h)
	if err != nil {
		return 0, false, fmt.Errorf("%w: %v", errGraphWrong, err)
	}
	if !ok || e.gen == 0 || e.gen >= maxGraphGeneration {
		// Not there, or written without generations (git before 2.19),
		// or past what the file can hold: derive it.
		return 0, false, nil
	}
	m, err := w.meta(h)
	if err != nil {
		return 0, false, err
	}
	if !slices.Equal(m.parents, e.parents) {
		return 0, false, fmt.Errorf("%w: %s has other parents in the graph", errGraphWrong, h)
	}
	want := uint64(1)
	for _, pg := range e.parentGens {
		want = maxU64(want, pg+1)
	}
	if e.gen != want {
		return 0, false, fmt.Errorf("%w: %s has generation %d in the graph, its parents say %d", errGraphWrong, h, e.gen, want)
	}
	w.gens[h], w.fresh[h] = e.gen, e.gen
	return e.gen, true, nil
}

// gen returns h's generation: from the graph, or else derived from its
// parents' (1 + the greatest), walking down to commits whose generation is
// known. Only the commits derived count against MaxWalk: with a graph
// that is what was written since it; without one, the whole history.
func (w *genWalk) gen(h oid.ID) (uint64, error) {
	if v, ok, err := w.known(h); ok || err != nil {
		return v, err
	}
	expanded := 0
	stack := []oid.ID{h}
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		if _, ok := w.gens[c]; ok {
			stack = stack[:len(stack)-1]
			continue
		}
		if _, ok := w.info[c]; !ok {
			if expanded++; expanded > w.s.opts.MaxWalk {
				return 0, errNeedGraph
			}
		}
		m, err := w.meta(c)
		if err != nil {
			return 0, err
		}
		g, pending := uint64(1), false
		for _, p := range m.parents {
			v, ok, err := w.known(p)
			if err != nil {
				return 0, err
			}
			if !ok {
				if len(stack) > 4*w.s.opts.MaxWalk {
					// Only a cycle, which git objects cannot form, would
					// grow the stack past this.
					return 0, errNeedGraph
				}
				stack = append(stack, p)
				pending = true
				continue
			}
			g = maxU64(g, v+1)
		}
		if pending {
			continue
		}
		stack = stack[:len(stack)-1]
		w.gens[c], w.fresh[c] = g, g
	}
	return w.gens[h], nil
}

func maxU64(a, b uint64) uint64 {
	if a > b {
		return a
	}
	return b
}

type commitMeta struct {
	parents []oid.ID
	when    time.Time
}

// walker is a queue of commits: highest generation first when it has
// generations (gw), then newest first, ties in insertion order.
type walker struct {
	st    *Repo
	gw    *genWalk
	flags map[oid.ID]int
	info  map[oid.ID]commitMeta
	q     queue
	seq   int
	// shallowHit is a shallow commit the walk reached (its parents are
	// not in the clone), or "".
	shallowHit string
}

type queued struct {
	h    oid.ID
	gen  uint64
	when time.Time
	seq  int
}

type queue []queued

func (q queue) Len() int { return len(q) }
func (q queue) Less(i, j int) bool {
	if q[i].gen != q[j].gen {
		return q[i].gen > q[j].gen
	}
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

func (w *walker) push(h oid.ID) error {
	var gen uint64
	m, ok := w.info[h]
	if w.gw != nil {
		// Generations are used only in a clone that is not shallow.
		g, err := w.gw.gen(h)
		if err != nil {
			return err
		}
		if m, err = w.gw.meta(h); err != nil {
			return err
		}
		gen, ok = g, true
		w.info[h] = m
	}
	if !ok {
		ps, when, err := w.st.parents(h)
		if err != nil {
			return err
		}
		w.st.gens.visits.Add(1)
		shallow, err := w.st.isShallow(h)
		if err != nil {
			return err
		}
		if shallow {
			if len(ps) > 0 {
				w.shallowHit = h.String()
			}
			ps = nil
		}
		m = commitMeta{parents: ps, when: when}
		w.info[h] = m
	}
	w.seq++
	heap.Push(&w.q, queued{h: h, gen: gen, when: m.when, seq: w.seq})
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

// shallowCommits returns the clone's shallow commits (listed in shallow,
// as git fetch --depth writes it: their parents are not here), read once.
// A shallow file that cannot be read, or holds a line that is not a commit
// id, leaves the history's extent unknown: every walk refuses with
// StoreUnreadable rather than answer as if the clone were complete.
func (s *Repo) shallowCommits() (map[oid.ID]bool, error) {
	s.shallowOnce.Do(func() {
		name := filepath.Join(s.loc.CommonDir, "shallow")
		b, err := os.ReadFile(name)
		if errors.Is(err, fs.ErrNotExist) || err == nil && len(b) == 0 {
			return
		}
		if err != nil {
			s.shallowErr = refusal.NewUnreadable(refusal.StoreUnreadable, shallowRemedy,
				"cannot read %s: %v", name, err).Wrap(err)
			return
		}
		set := map[oid.ID]bool{}
		for i, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			id, ok := parseHex(s.format, l)
			if !ok {
				s.shallowErr = refusal.NewUnreadable(refusal.StoreUnreadable, shallowRemedy,
					"%s line %d is not a commit id: %.70q", name, i+1, l)
				return
			}
			set[id] = true
		}
		s.shallowSet = set
	})
	return s.shallowSet, s.shallowErr
}

const shallowRemedy = "make .git/shallow readable, or restore it (one commit id a line) from a good clone; git fetch --unshallow rewrites it"

// isShallow reports whether h is a shallow commit of this clone.
func (s *Repo) isShallow(h oid.ID) (bool, error) {
	set, err := s.shallowCommits()
	return set[h], err
}

func shallowBoundary(commit string) error {
	return refusal.New(refusal.ShallowClone,
		"deepen the clone (git fetch --deepen=N, or --unshallow; in CI, fetch-depth: 0), then run it again",
		"the history walk reached %s, a shallow commit whose parents this clone does not have", commit[:12])
}

// IsShallow reports whether commit is a shallow commit of this clone (its
// parents are not here); a shallow file that cannot be read is refused
// (StoreUnreadable).
func (s *Repo) IsShallow(commit oid.ID) (bool, error) {
	if err := s.check(commit); err != nil {
		return false, err
	}
	h := commit
	return s.isShallow(h)
}

// ShallowBoundary is the refusal (ShallowClone) of a walk that reached a
// shallow commit.
func ShallowBoundary(commit oid.ID) error { return shallowBoundary(commit.String()) }

// WalkLimit is the refusal (WalkLimit) of a walk that passed max commits.
func WalkLimit(max int) error { return walkLimit(max) }
