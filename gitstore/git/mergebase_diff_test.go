package git_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/gitstore/oid"

	"github.com/nwdes/nwdes/gitstore/git"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/refusal"
)

// dag is a generated history in a real repository: commits[i] is the id
// of the commit with fast-import mark i+1.
type dag struct {
	dir     string
	commits []oid.ID
	// phase1 is how many commits the first import wrote (the part a
	// partial commit-graph covers).
	phase1 int
}

// genDAG writes n commits through git fast-import in two imports (the
// first covers n/2): random branching off recent commits, merges (some
// octopus), criss-cross merge pairs, new roots now and then, and commit
// times skewed backwards and forwards so that time order is no guide.
func genDAG(t *testing.T, seed uint64, n int) *dag {
	return genDAGOf(t, seed, n, "sha1")
}

// genDAGOf is genDAG in a repository of object format format (sha1 or
// sha256).
func genDAGOf(t *testing.T, seed uint64, n int, format string) *dag {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed*7+1))
	dir := filepath.Join(t.TempDir(), "repo")
	gittest.Git(t, filepath.Dir(dir), "init", "-q", "-b", "main", "--object-format="+format, dir)
	marks := filepath.Join(filepath.Dir(dir), "marks")
	d := &dag{dir: dir, phase1: n / 2}
	var in bytes.Buffer
	when := int64(1767225600)
	commit := func(i int, parents []int) {
		when += 60
		t := when
		switch rng.IntN(6) {
		case 0:
			t -= int64(rng.IntN(100_000)) // far in the past
		case 1:
			t += int64(rng.IntN(100_000)) // far in the future
		}
		fmt.Fprintf(&in, "commit refs/heads/c%d\nmark :%d\ncommitter T <t@example.com> %d +0000\ndata 3\nc%d\n", i, i, t, i%10)
		for k, p := range parents {
			if k == 0 {
				fmt.Fprintf(&in, "from :%d\n", p)
			} else {
				fmt.Fprintf(&in, "merge :%d\n", p)
			}
		}
		fmt.Fprintf(&in, "M 100644 inline f\ndata %d\n%d\n\n", len(fmt.Sprint(i))+1, i)
	}
	recent := func(i int) int { // a commit among the last 12
		lo := max(1, i-12)
		return lo + rng.IntN(i-lo)
	}
	run := func(args ...string) {
		if _, err := gittest.Pipe(dir, in.Bytes(), args...); err != nil {
			t.Fatal(err)
		}
		in.Reset()
	}
	for i := 1; i <= n; i++ {
		switch r := rng.IntN(100); {
		case i == 1 || r < 3:
			commit(i, nil)
		case r < 70 || i < 4:
			commit(i, []int{recent(i)})
		case r < 90:
			a, b := recent(i), recent(i)
			if a == b {
				commit(i, []int{a})
			} else {
				commit(i, []int{a, b})
			}
		case r < 93:
			ps := []int{recent(i), recent(i), recent(i)}
			slices.Sort(ps)
			commit(i, slices.Compact(ps))
		default:
			// criss-cross: two merges of the same pair, in both orders
			a, b := recent(i), recent(i)
			if a == b || i == n {
				commit(i, []int{a})
				break
			}
			commit(i, []int{a, b})
			i++
			commit(i, []int{b, a})
		}
		if i == d.phase1 {
			run("fast-import", "--quiet", "--export-marks="+marks)
		}
	}
	run("fast-import", "--quiet", "--import-marks="+marks, "--export-marks="+marks)
	b, err := os.ReadFile(marks)
	if err != nil {
		t.Fatal(err)
	}
	byMark := map[int]oid.ID{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m int
		var h string
		if _, err := fmt.Sscanf(l, ":%d %s", &m, &h); err != nil {
			t.Fatalf("marks line %q: %v", l, err)
		}
		byMark[m] = oid.MustParse(h)
	}
	for i := 1; i <= len(byMark); i++ {
		d.commits = append(d.commits, byMark[i])
	}
	return d
}

func (d *dag) refsUpTo(k int) string {
	var b strings.Builder
	for _, h := range d.commits[:k] {
		b.WriteString(h.String() + "\n")
	}
	return b.String()
}

// graphSetup puts one kind of commit-graph in place (removing any other).
func (d *dag) graphSetup(t *testing.T, kind string) {
	t.Helper()
	info := filepath.Join(d.dir, ".git", "objects", "info")
	os.Remove(filepath.Join(info, "commit-graph"))
	os.RemoveAll(filepath.Join(info, "commit-graphs"))
	write := func(stdin string, args ...string) {
		if _, err := gittest.Pipe(d.dir, []byte(stdin), append([]string{"commit-graph", "write", "--no-progress"}, args...)...); err != nil {
			t.Fatal(err)
		}
	}
	switch kind {
	case "none":
	case "full":
		write("", "--reachable")
	case "partial": // the first import only: later commits are derived
		write(d.refsUpTo(d.phase1), "--stdin-commits")
	case "split": // a chain of two layers
		write(d.refsUpTo(d.phase1), "--stdin-commits", "--split")
		write("", "--reachable", "--split=no-merge")
		chain, err := os.ReadFile(filepath.Join(info, "commit-graphs", "commit-graph-chain"))
		if err != nil || strings.Count(string(chain), "\n") != 2 {
			t.Fatalf("expected a chain of two layers: %q, %v", chain, err)
		}
	default:
		t.Fatalf("unknown graph kind %q", kind)
	}
}

// gitTruth is what git says about a generated history.
type gitTruth struct {
	ancestors map[oid.ID]map[oid.ID]bool // desc -> its ancestors
	pairs     [][2]oid.ID
	bases     [][]oid.ID // git merge-base --all, per pair
}

func askGit(t *testing.T, d *dag, rng *rand.Rand, npairs, nIsAnc int) *gitTruth {
	t.Helper()
	g := &gitTruth{ancestors: map[oid.ID]map[oid.ID]bool{}}
	for _, c := range d.commits {
		set := map[oid.ID]bool{}
		for _, l := range strings.Fields(gittest.Git(t, d.dir, "rev-list", c.String())) {
			set[oid.MustParse(l)] = true
		}
		g.ancestors[c] = set
	}
	// rev-list gives every pair at once; merge-base --is-ancestor itself
	// is asked for a sample, to hold the two to each other.
	for range nIsAnc {
		a, b := d.commits[rng.IntN(len(d.commits))], d.commits[rng.IntN(len(d.commits))]
		_, err := gittest.Run(d.dir, "merge-base", "--is-ancestor", a.String(), b.String())
		if got := err == nil; got != g.ancestors[b][a] {
			t.Fatalf("git merge-base --is-ancestor %s %s = %v, rev-list says %v", a, b, got, g.ancestors[b][a])
		}
	}
	for range npairs {
		a, b := d.commits[rng.IntN(len(d.commits))], d.commits[rng.IntN(len(d.commits))]
		out, _ := gittest.Run(d.dir, "merge-base", "--all", a.String(), b.String())
		var bases []oid.ID
		for _, l := range strings.Fields(out) {
			bases = append(bases, oid.MustParse(l))
		}
		g.pairs = append(g.pairs, [2]oid.ID{a, b})
		g.bases = append(g.bases, bases)
	}
	return g
}

func hashSet(hs []oid.ID) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.String()
	}
	slices.Sort(out)
	return out
}

// checkAgainstGit asks a fresh store every question git answered.
// wantGraph is 1 or 0 for whether the store must use a graph at first,
// -1 for either.
func checkAgainstGit(t *testing.T, d *dag, g *gitTruth, wantGraph int) *git.Repo {
	t.Helper()
	st := openRepo(t, d.dir, git.Options{})
	t.Cleanup(func() { st.Close() })
	if got := st.UsesCommitGraph(); wantGraph >= 0 && got != (wantGraph == 1) {
		t.Fatalf("store uses a commit-graph: %v, want %v", got, wantGraph)
	}
	for i, p := range g.pairs {
		got, err := st.MergeBases(p[0], p[1])
		if err != nil {
			t.Fatalf("MergeBases(%s, %s): %v", p[0], p[1], err)
		}
		if !slices.Equal(hashSet(got), hashSet(g.bases[i])) {
			t.Fatalf("MergeBases(%s, %s) = %v, git merge-base --all says %v", p[0], p[1], hashSet(got), hashSet(g.bases[i]))
		}
	}
	for _, desc := range d.commits {
		for _, anc := range d.commits {
			got, err := st.IsAncestor(anc, desc)
			if err != nil {
				t.Fatalf("IsAncestor(%s, %s): %v", anc, desc, err)
			}
			if want := g.ancestors[desc][anc]; got != want {
				t.Fatalf("IsAncestor(%s, %s) = %v, git says %v", anc, desc, got, want)
			}
		}
	}
	return st
}

// TestMergeBaseDifferential: on generated histories, MergeBases equals
// `git merge-base --all` (as a set) and IsAncestor equals
// `git merge-base --is-ancestor`, with no commit-graph, a full one, a
// split chain of two layers, and one that covers only the older half.
func TestMergeBaseDifferential(t *testing.T) {
	// Two histories of 120 commits, each under four graph layouts, cost
	// about 25 s of CPU, most of it git's processes: that is make test's
	// share. -diff.long asks for 16 histories of 400.
	seeds, n := 2, 120
	if *diffLong {
		seeds, n = 16, 400
	}
	mergeBaseDifferential(t, "sha1", 1, seeds, n)
}

// TestMergeBaseDifferentialSHA256 is TestMergeBaseDifferential in SHA-256
// repositories: nwdes's commit-graph reader on git's hash version 2 files,
// a split chain among them, against git merge-base.
func TestMergeBaseDifferentialSHA256(t *testing.T) {
	seeds, n := 1, 120
	if *diffLong {
		seeds, n = 8, 400
	}
	mergeBaseDifferential(t, "sha256", 1, seeds, n)
}

func mergeBaseDifferential(t *testing.T, format string, first, seeds, n int) {
	for seed := first; seed < first+seeds; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			d := genDAGOf(t, uint64(seed), n, format)
			rng := rand.New(rand.NewPCG(uint64(seed), 99))
			truth := askGit(t, d, rng, 150, 40)
			for _, kind := range []string{"none", "full", "split", "partial"} {
				t.Run(kind, func(t *testing.T) {
					d.graphSetup(t, kind)
					if kind != "none" {
						// git's own answers do not change with a graph
						for i := range 10 {
							p := truth.pairs[i]
							out, _ := gittest.Run(d.dir, "merge-base", "--all", p[0].String(), p[1].String())
							got := strings.Fields(out)
							slices.Sort(got)
							if !slices.Equal(got, hashSet(truth.bases[i])) {
								t.Fatalf("git merge-base changed with a %s graph", kind)
							}
						}
					}
					want := 1
					if kind == "none" {
						want = 0
					}
					st := checkAgainstGit(t, d, truth, want)
					if kind != "none" && !st.UsesCommitGraph() {
						t.Fatal("the store stopped trusting a good commit-graph")
					}
				})
			}
		})
	}
}

// TestMergeBaseDamagedGraph: a commit-graph that is truncated, has a wrong
// checksum, an entry with wrong parents or a wrong generation gives the
// answers git gives (with no graph, git's answers are the same), and the
// store stops using a graph it found wrong.
func TestMergeBaseDamagedGraph(t *testing.T) {
	d := genDAG(t, 7, 100)
	rng := rand.New(rand.NewPCG(7, 99))
	truth := askGit(t, d, rng, 100, 10)
	graphFile := filepath.Join(d.dir, ".git", "objects", "info", "commit-graph")
	for _, damage := range []struct {
		name    string
		dropped bool // whether the store must have stopped using it
		edit    func(t *testing.T, b []byte) []byte
	}{
		{"truncated", true, func(t *testing.T, b []byte) []byte { return b[:len(b)/2] }},
		{"truncated-header", true, func(t *testing.T, b []byte) []byte { return b[:30] }},
		{"wrong-checksum", false, func(t *testing.T, b []byte) []byte { b[len(b)-1] ^= 0xff; return b }},
		{"wrong-parents", true, func(t *testing.T, b []byte) []byte {
			cdat, n := graphChunk(t, b, "CDAT"), graphCount(t, b)
			for i := n - 1; i >= 0; i-- {
				e := b[cdat+i*36:]
				p1, p2 := binary.BigEndian.Uint32(e[20:]), binary.BigEndian.Uint32(e[24:])
				if p1 != 0x70000000 && p2 == 0x70000000 {
					binary.BigEndian.PutUint32(e[20:], (p1+1)%uint32(n))
					return b
				}
			}
			t.Fatal("no commit with one parent")
			return nil
		}},
		{"wrong-generation", true, func(t *testing.T, b []byte) []byte {
			cdat, n := graphChunk(t, b, "CDAT"), graphCount(t, b)
			for i := range n {
				e := b[cdat+i*36:]
				if v := binary.BigEndian.Uint32(e[28:]); v>>2 > 3 {
					binary.BigEndian.PutUint32(e[28:], v-2<<2) // two levels lower
					return b
				}
			}
			t.Fatal("no commit above level 3")
			return nil
		}},
	} {
		t.Run(damage.name, func(t *testing.T) {
			d.graphSetup(t, "full")
			b, err := os.ReadFile(graphFile)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(graphFile, damage.edit(t, b), 0o644); err != nil {
				t.Fatal(err)
			}
			st := checkAgainstGit(t, d, truth, -1)
			if damage.dropped && st.UsesCommitGraph() {
				t.Fatal("the store still uses a damaged commit-graph")
			}
		})
	}
}

// graphChunk returns the offset of a chunk of a commit-graph file.
func graphChunk(t *testing.T, b []byte, id string) int {
	t.Helper()
	for off := 8; off+12 <= len(b); off += 12 {
		if string(b[off:off+4]) == id {
			return int(binary.BigEndian.Uint64(b[off+4:]))
		}
		if binary.BigEndian.Uint32(b[off:]) == 0 {
			break
		}
	}
	t.Fatalf("commit-graph has no %s chunk", id)
	return 0
}

// graphCount is the number of commits a commit-graph file holds.
func graphCount(t *testing.T, b []byte) int {
	return int(binary.BigEndian.Uint32(b[graphChunk(t, b, "OIDF")+255*4:]))
}

// TestShallowFileUnreadable: a shallow file that cannot be read, or that
// holds a line that is not a commit id, makes walks refuse with
// StoreUnreadable instead of answering as if the clone were complete.
func TestShallowFileUnreadable(t *testing.T) {
	d := genDAG(t, 3, 20)
	shallow := filepath.Join(d.dir, ".git", "shallow")
	a, b := d.commits[len(d.commits)-1], d.commits[0]
	for name, make := range map[string]func() error{
		"directory": func() error { return os.Mkdir(shallow, 0o755) },
		"malformed": func() error { return os.WriteFile(shallow, []byte(a.String()+"\nnot-an-id\n"), 0o644) },
	} {
		t.Run(name, func(t *testing.T) {
			os.RemoveAll(shallow)
			if err := make(); err != nil {
				t.Fatal(err)
			}
			defer os.RemoveAll(shallow)
			st := openRepo(t, d.dir, git.Options{})
			defer st.Close()
			_, err1 := st.IsAncestor(b, a)
			_, err2 := st.MergeBases(a, b)
			for _, err := range []error{err1, err2} {
				var r *refusal.Error
				if !errors.As(err, &r) || r.Name != refusal.StoreUnreadable {
					t.Fatalf("got %v, want StoreUnreadable", err)
				}
			}
		})
	}
}
