package git

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/go-git/go-git/v5/plumbing"
	commitgraph "github.com/go-git/go-git/v5/plumbing/format/commitgraph/v2"
	"golang.org/x/sys/unix"
)

// Generation numbers let a history walk stop early: a commit's generation
// is greater than each of its parents', so a commit whose generation is
// below anc's cannot reach anc. nwdes uses the topological level (roots
// are 1, every other commit 1 + the greatest of its parents'): git keeps it
// in every commit-graph it writes (the CDAT chunk, whatever
// commitGraph.generationVersion says), and it is what nwdes derives itself
// for commits the graph does not hold yet, so the two are on one scale.
// (The corrected commit dates of the GDA2 chunk would do as well, but are
// absent from older graphs and from split chains where one layer lacks
// them, and mixing the two scales would be wrong.)

// maxGraphGeneration is the largest topological level the CDAT chunk can
// hold (30 bits); git stores it for every commit above it, so it does not
// order commits and such entries are not used.
const maxGraphGeneration = 1<<30 - 1

// commitGraph is an open commit-graph file, or chain of them, of the
// object directory. Its methods never panic: go-git's reader does little
// checking of offsets and counts, so a damaged file could make it index
// out of range; that is turned into an error, and an error makes the repository
// stop trusting the graph.
type commitGraph struct {
	idx commitgraph.Index
}

// openCommitGraph opens objects/info/commit-graph or, when it is absent,
// the split chain objects/info/commit-graphs/commit-graph-chain, as git
// does. It returns nil and no error when there is neither. Every file is
// opened here, before any is read, so that a git gc which replaces or
// deletes them afterwards does not change what this repository reads (the
// descriptors keep the old files); Repo.Close closes them.
func openCommitGraph(objDir string) (g *commitGraph, err error) {
	defer func() {
		if r := recover(); r != nil {
			g, err = nil, fmt.Errorf("commit-graph: %v", r)
		}
	}()
	info := filepath.Join(objDir, "info")
	f, err := mapFile(filepath.Join(info, "commit-graph"))
	if err == nil {
		idx, err := commitgraph.OpenFileIndex(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("commit-graph: %w", err)
		}
		return &commitGraph{idx: idx}, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	// go-git's OpenChainIndex would do this, but it calls Close on a nil
	// index when the first layer is missing (a panic) and leaks the file
	// of a layer it cannot parse; hence the loop here.
	dir := filepath.Join(info, "commit-graphs")
	cf, err := os.Open(filepath.Join(dir, "commit-graph-chain"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	chain, err := commitgraph.OpenChainFile(cf)
	cf.Close()
	if err != nil {
		return nil, fmt.Errorf("commit-graph chain: %w", err)
	}
	if len(chain) == 0 {
		return nil, errors.New("commit-graph chain: empty")
	}
	var idx commitgraph.Index
	for _, h := range chain {
		f, err := mapFile(filepath.Join(dir, "graph-"+h+".graph"))
		if err == nil {
			var next commitgraph.Index
			if next, err = commitgraph.OpenFileIndexWithParent(f, idx); err == nil {
				idx = next
				continue
			}
			f.Close()
		}
		if idx != nil {
			idx.Close()
		}
		return nil, fmt.Errorf("commit-graph chain: %w", err)
	}
	return &commitGraph{idx: idx}, nil
}

func (g *commitGraph) close() error { return g.idx.Close() }

// mappedFile is a commit-graph file mapped into memory. go-git's reader
// makes a handful of small reads per commit (a binary search of the id
// table, the commit data, each parent's); through pread(2) that cost more
// than reading the commit object, mapped it costs next to nothing, and
// mapping does not read the file, so opening costs the same whatever its
// size. The descriptor is closed at once: the mapping holds the file, also
// after git gc replaces it. git never writes a graph in place (it writes a
// new file and renames it over), so the mapping does not shrink under us;
// if something else truncates it, the fault is turned into a panic
// (debug.SetPanicOnFault in entry) and that into an error.
type mappedFile struct{ data []byte }

func mapFile(name string) (*mappedFile, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() <= 0 || fi.Size() != int64(int(fi.Size())) {
		return nil, fmt.Errorf("%s: size %d", name, fi.Size())
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", name, err)
	}
	return &mappedFile{data: data}, nil
}

func (m *mappedFile) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off > int64(len(m.data)) {
		return 0, fmt.Errorf("commit-graph: read at %d past the end (%d)", off, len(m.data))
	}
	n := copy(p, m.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (m *mappedFile) Close() error {
	if m.data == nil {
		return nil
	}
	err := unix.Munmap(m.data)
	m.data = nil
	return err
}

// graphEntry is what the graph says of one commit: its generation, its
// parents and their generations.
type graphEntry struct {
	gen        uint64
	parents    []plumbing.Hash
	parentGens []uint64
}

// entry looks h up. ok is false when the graph does not hold h; err is set
// when the graph could not be read (it is damaged, or was truncated).
func (g *commitGraph) entry(h plumbing.Hash) (e graphEntry, ok bool, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			e, ok, err = graphEntry{}, false, fmt.Errorf("commit-graph: %v", r)
		}
	}()
	i, err := g.idx.GetIndexByHash(h)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return e, false, nil
	}
	if err != nil {
		return e, false, fmt.Errorf("commit-graph: %w", err)
	}
	d, err := g.idx.GetCommitDataByIndex(i)
	if err != nil {
		return e, false, fmt.Errorf("commit-graph: %w", err)
	}
	e.gen, e.parents = d.Generation, d.ParentHashes
	for _, pi := range d.ParentIndexes {
		pd, err := g.idx.GetCommitDataByIndex(pi)
		if err != nil {
			return graphEntry{}, false, fmt.Errorf("commit-graph: %w", err)
		}
		e.parentGens = append(e.parentGens, pd.Generation)
	}
	return e, true, nil
}

// genState is a repository's knowledge of generations: the commit-graph it
// opened (nil when there is none, it could not be opened, or it proved
// wrong) and the generations it derived for commits outside the graph.
type genState struct {
	mu     sync.Mutex
	loaded bool
	closed bool
	graph  *commitGraph
	// dropped are graphs no longer trusted: other goroutines may still be
	// reading them, so they are closed only by Repo.Close.
	dropped []*commitGraph
	// known holds generations walks found: derived from parents for
	// commits outside the graph, or read from the graph and checked (so
	// that the next walk does not read the commit again to check it).
	// They are topological levels, true whatever the graph says, as long
	// as the graph entries they rest on were right: when the graph is
	// dropped, so are they. Past maxKnownGens entries the map starts
	// afresh, so that a process that lives for months does not hold a
	// generation for every commit it ever saw; they are cheap to find
	// again.
	known map[plumbing.Hash]uint64
	// tooFar is set when generations could not be derived within MaxWalk
	// with this graph (none, or an old one): later walks go straight to
	// the walk without generations instead of trying again.
	tooFar bool
	// visits counts commit objects read by history walks (for tests).
	visits atomic.Int64
}

// currentGraph returns the graph to use, opening it on first use.
func (s *Repo) currentGraph() *commitGraph {
	g := &s.gens
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.loaded && !g.closed {
		g.loaded = true
		// An unreadable or malformed graph is not an error: walks do
		// without it, as git does, and answer the same, only slower.
		if cg, err := openCommitGraph(s.loc.Objects()); err == nil {
			g.graph = cg
		}
	}
	return g.graph
}

// dropGraph stops using cg after it was found wrong or unreadable.
func (s *Repo) dropGraph(cg *commitGraph) {
	g := &s.gens
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.graph == cg && cg != nil {
		g.dropped = append(g.dropped, cg)
		g.graph = nil
		g.known = nil
		g.tooFar = false
	}
}

// maxKnownGens bounds genState.known (about 50 MB).
const maxKnownGens = 1 << 20

func (s *Repo) knownGen(h plumbing.Hash) (uint64, bool) {
	g := &s.gens
	g.mu.Lock()
	defer g.mu.Unlock()
	v, ok := g.known[h]
	return v, ok
}

// rememberGens keeps generations found with graph cg, unless cg was
// dropped meanwhile.
func (s *Repo) rememberGens(cg *commitGraph, gens map[plumbing.Hash]uint64) {
	g := &s.gens
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.graph != cg || g.closed {
		return
	}
	if g.known == nil || len(g.known)+len(gens) > maxKnownGens {
		g.known = make(map[plumbing.Hash]uint64, len(gens))
	}
	for h, v := range gens {
		g.known[h] = v
	}
}

// closeGraphs releases the graph files (Repo.Close).
func (s *Repo) closeGraphs() error {
	g := &s.gens
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
	var errs []error
	if g.graph != nil {
		errs = append(errs, g.graph.close())
	}
	for _, d := range g.dropped {
		errs = append(errs, d.close())
	}
	g.graph, g.dropped, g.known = nil, nil, nil
	return errors.Join(errs...)
}

// gensTooFar reports whether deriving generations was found to need more
// than MaxWalk commits.
func (s *Repo) gensTooFar() bool {
	g := &s.gens
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.tooFar
}

func (s *Repo) setGensTooFar() {
	g := &s.gens
	g.mu.Lock()
	defer g.mu.Unlock()
	g.tooFar = true
}
