package git

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/nwdes/nwdes/gitstore/oid"
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
// object directory, read by nwdes's own reader (graph.go's format, for
// SHA-1 and SHA-256 alike: go-git's reader knows SHA-1 only). Its methods
// never panic: every chunk's offset and size is checked against the file
// when it is opened and every parent position when it is read, so a
// damaged file is an error, and an error makes the repository stop
// trusting the graph.
type commitGraph struct {
	f      oid.Format
	layers []*graphLayer // the base first; a lone file is one layer
}

// openCommitGraph opens objects/info/commit-graph or, when it is absent,
// the split chain objects/info/commit-graphs/commit-graph-chain, as git
// does. It returns nil and no error when there is neither. Every file is
// opened here, before any is read, so that a git gc which replaces or
// deletes them afterwards does not change what this repository reads (the
// mappings keep the old files); Repo.Close closes them.
func openCommitGraph(objDir string, f oid.Format) (g *commitGraph, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			g, err = nil, fmt.Errorf("commit-graph: %v", r)
		}
	}()
	info := filepath.Join(objDir, "info")
	m, err := mapFile(filepath.Join(info, "commit-graph"))
	if err == nil {
		l, err := parseGraph(m, f, nil, 0)
		if err != nil {
			m.Close()
			return nil, fmt.Errorf("commit-graph: %w", err)
		}
		return &commitGraph{f: f, layers: []*graphLayer{l}}, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	dir := filepath.Join(info, "commit-graphs")
	chain, err := os.ReadFile(filepath.Join(dir, "commit-graph-chain"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	g = &commitGraph{f: f}
	var names []oid.ID
	var base uint32
	for _, line := range strings.Split(strings.TrimSuffix(string(chain), "\n"), "\n") {
		h, ok := parseHex(f, line)
		if !ok {
			g.close()
			return nil, fmt.Errorf("commit-graph chain: %q is not a %s graph name", line, f)
		}
		m, err := mapFile(filepath.Join(dir, "graph-"+line+".graph"))
		var l *graphLayer
		if err == nil {
			if l, err = parseGraph(m, f, names, base); err != nil {
				m.Close()
			}
		}
		if err != nil {
			g.close()
			return nil, fmt.Errorf("commit-graph chain: %w", err)
		}
		g.layers = append(g.layers, l)
		names = append(names, h)
		base += l.n
	}
	if len(g.layers) == 0 {
		return nil, errors.New("commit-graph chain: empty")
	}
	return g, nil
}

func (g *commitGraph) close() error {
	var errs []error
	for _, l := range g.layers {
		errs = append(errs, l.m.Close())
	}
	return errors.Join(errs...)
}

// mappedFile is a commit-graph file mapped into memory. A lookup touches a
// handful of places per commit (a binary search of the id table, the
// commit data, each parent's); through pread(2) that cost more than
// reading the commit object, mapped it costs next to nothing, and
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
	parents    []oid.ID
	parentGens []uint64
}

// entry looks h up. ok is false when the graph does not hold h; err is set
// when the graph could not be read (it is damaged, or was truncated).
func (g *commitGraph) entry(h oid.ID) (e graphEntry, ok bool, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			e, ok, err = graphEntry{}, false, fmt.Errorf("commit-graph: %v", r)
		}
	}()
	if h.Format() != g.f {
		return e, false, nil
	}
	pos, found := g.find(h)
	if !found {
		return e, false, nil
	}
	d, err := g.commit(pos)
	if err != nil {
		return e, false, fmt.Errorf("commit-graph: %w", err)
	}
	e.gen = d.gen
	for _, pp := range d.parents {
		pd, err := g.commit(pp)
		if err != nil {
			return graphEntry{}, false, fmt.Errorf("commit-graph: %w", err)
		}
		id, err := g.oidAt(pp)
		if err != nil {
			return graphEntry{}, false, fmt.Errorf("commit-graph: %w", err)
		}
		e.parents = append(e.parents, id)
		e.parentGens = append(e.parentGens, pd.gen)
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
	known map[oid.ID]uint64
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
		if cg, err := openCommitGraph(s.loc.Objects(), s.format); err == nil {
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

func (s *Repo) knownGen(h oid.ID) (uint64, bool) {
	g := &s.gens
	g.mu.Lock()
	defer g.mu.Unlock()
	v, ok := g.known[h]
	return v, ok
}

// rememberGens keeps generations found with graph cg, unless cg was
// dropped meanwhile.
func (s *Repo) rememberGens(cg *commitGraph, gens map[oid.ID]uint64) {
	g := &s.gens
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.graph != cg || g.closed {
		return
	}
	if g.known == nil || len(g.known)+len(gens) > maxKnownGens {
		g.known = make(map[oid.ID]uint64, len(gens))
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
