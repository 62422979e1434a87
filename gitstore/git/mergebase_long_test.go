package git_test

import (
	"bytes"

	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nwdes/nwdes/gitstore/oid"

	"github.com/nwdes/nwdes/gitstore/git"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/internal/race"
	"github.com/nwdes/nwdes/refusal"
)

const (
	longGraphed = 200_000 // heartbeats covered by the commit-graph
	longOnTop   = 3_000   // written after it, as nwdes would between two gc runs
	longFork    = 40      // commits on the fork
	longForkAt  = 1_000   // the fork leaves the main line this far above the graph
	longRef     = git.RefName("refs/nwdes/heartbeat")
	longForkRef = git.RefName("refs/nwdes/fork")
)

// longHistory is a 200,000-heartbeat history: a linear chain of record
// commits covered by a commit-graph, 3,000 more on top that it does not
// cover, and a fork of 40 commits off the part outside the graph.
type longHistory struct {
	dir      string
	early    oid.ID // heartbeat 10
	graphTip oid.ID // the last commit in the graph
	forkAt   oid.ID
	tip      oid.ID // of longRef
	forkTip  oid.ID // of longForkRef
}

// heartbeats writes commits n0+1..n0+n on ref through fast-import: each
// replaces the record at latest/ (a tree of one small blob, like nwdes's
// record commits), one second apart.
func heartbeats(ref git.RefName, from string, n0, n int) []byte {
	var in bytes.Buffer
	for i := n0 + 1; i <= n0+n; i++ {
		msg := "heartbeat " + fmt.Sprint(i) + "\n"
		fmt.Fprintf(&in, "commit %s\nmark :%d\ncommitter %s %d +0000\ndata %d\n%s", ref, i, "nwdes <nwdes@localhost>", 1767225600+i, len(msg), msg)
		if i == n0+1 && from != "" {
			fmt.Fprintf(&in, "from %s\n", from)
		}
		j := fmt.Sprintf(`{"body":{"i":%d},"kind":"heartbeat","v":1}`, i)
		fmt.Fprintf(&in, "M 100644 inline latest/record.json\ndata %d\n%s\n\n", len(j), j)
	}
	return in.Bytes()
}

func buildLongHistory(dir string) (*longHistory, error) {
	h := &longHistory{dir: dir}
	marks := filepath.Join(filepath.Dir(dir), "long-marks")
	if _, err := gittest.Pipe(dir, heartbeats(longRef, "", 0, longGraphed), "fast-import", "--quiet", "--export-marks="+marks); err != nil {
		return nil, err
	}
	if _, err := gittest.Pipe(dir, nil, "commit-graph", "write", "--reachable", "--no-progress"); err != nil {
		return nil, err
	}
	if _, err := gittest.Pipe(dir, heartbeats(longRef, fmt.Sprint(":", longGraphed), longGraphed, longOnTop), "fast-import", "--quiet", "--import-marks="+marks, "--export-marks="+marks); err != nil {
		return nil, err
	}
	if _, err := gittest.Pipe(dir, heartbeats(longForkRef, fmt.Sprint(":", longGraphed+longForkAt), longGraphed+longOnTop, longFork), "fast-import", "--quiet", "--import-marks="+marks); err != nil {
		return nil, err
	}
	for _, x := range []struct {
		to  *oid.ID
		rev string
	}{
		{&h.early, fmt.Sprintf("%s~%d", longRef, longGraphed+longOnTop-10)},
		{&h.graphTip, fmt.Sprintf("%s~%d", longRef, longOnTop)},
		{&h.forkAt, fmt.Sprintf("%s~%d", longRef, longOnTop-longForkAt)},
		{&h.tip, string(longRef)},
		{&h.forkTip, string(longForkRef)},
	} {
		out, err := gittest.Pipe(dir, nil, "rev-parse", x.rev)
		if err != nil {
			return nil, err
		}
		*x.to = oid.MustParse(out)
	}
	return h, nil
}

// TestHistoryWalks200k: after 200,000 heartbeats (a commit-graph written
// by git gc or git commit-graph write) and 3,000 more since, with a fork,
// every question is answered under the default MaxWalk, and the commits a
// walk reads are bounded by those outside the graph plus the distance
// asked about, not by the length of the history.
func TestHistoryWalks200k(t *testing.T) {
	if testing.Short() || race.Enabled {
		// About 21 s without -race (12 s of it building the history with
		// fast-import), minutes with it: make test runs it again without.
		t.Skip("builds 200,000 commits; runs without -short and without -race (make test's second step)")
	}
	start := time.Now()
	dir := filepath.Join(t.TempDir(), "repo")
	gittest.Git(t, filepath.Dir(dir), "init", "-q", "-b", "main", dir)
	h, err := buildLongHistory(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("built %d commits in %v", longGraphed+longOnTop+longFork, time.Since(start).Round(time.Millisecond))

	st := openRepo(t, dir, git.Options{})
	defer st.Close()
	// Some heartbeats written by nwdes's own writer on top (packs).
	const byStore = 20
	for i := range byStore {
		commitFile(t, st, longRef, "latest", fmt.Sprint(i), time.Unix(int64(1767225600+longGraphed+longOnTop+i), 0))
	}
	tip, err := st.Refs().Read(longRef)
	if err != nil {
		t.Fatal(err)
	}
	outside := int64(longOnTop + longFork + byStore)
	if !st.UsesCommitGraph() {
		t.Fatal("the store does not use the commit-graph git wrote")
	}
	ask := func(name string, bound int64, f func() error) {
		t.Helper()
		before, t0 := st.WalkVisits(), time.Now()
		if err := f(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		n := st.WalkVisits() - before
		t.Logf("%s: %d commits read in %v", name, n, time.Since(t0).Round(time.Microsecond))
		if n > bound {
			t.Fatalf("%s read %d commits, more than the bound of %d", name, n, bound)
		}
	}
	isAnc := func(anc, desc oid.ID, want bool) func() error {
		return func() error {
			got, err := st.IsAncestor(anc, desc)
			if err == nil && got != want {
				err = fmt.Errorf("IsAncestor = %v, want %v", got, want)
			}
			return err
		}
	}
	// The first question derives the generations of the commits outside
	// the graph (and checks the graph entries they rest on); the later
	// ones find them remembered.
	ask("IsAncestor(tip, early)", outside+10, isAnc(tip, h.early, false))
	ask("IsAncestor(graph tip, tip)", longOnTop+byStore+10, isAnc(h.graphTip, tip, true))
	ask("IsAncestor(fork tip, tip)", longOnTop-longForkAt+byStore+longFork+10, isAnc(h.forkTip, tip, false))
	ask("IsAncestor(tip, fork tip)", longFork+10, isAnc(tip, h.forkTip, false))
	ask("IsAncestor(fork point, fork tip)", longFork+10, isAnc(h.forkAt, h.forkTip, true))
	ask("MergeBases(tip, fork tip)", 2*(longOnTop-longForkAt+byStore+longFork)+10, func() error {
		got, err := st.MergeBases(tip, h.forkTip)
		if err == nil && (len(got) != 1 || got[0] != h.forkAt) {
			err = fmt.Errorf("MergeBases = %v, want [%s]", got, h.forkAt)
		}
		return err
	})
	// From heartbeat 10 to the tip the walk goes through the graph: the
	// distance, about 203,000 commits, more than MaxWalk, with no refusal.
	ask("IsAncestor(early, tip)", longGraphed+outside+10, isAnc(h.early, tip, true))

	// Without a commit-graph the same history needs walks past MaxWalk:
	// a near question is still answered, a far one is refused with a
	// remedy that names the commit-graph.
	if err := os.Remove(filepath.Join(dir, ".git", "objects", "info", "commit-graph")); err != nil {
		t.Fatal(err)
	}
	bare := openRepo(t, dir, git.Options{})
	defer bare.Close()
	if bare.UsesCommitGraph() {
		t.Fatal("a store uses a commit-graph that is not there")
	}
	_, err = bare.IsAncestor(h.forkTip, tip)
	var r *refusal.Error
	if !errors.As(err, &r) || r.Name != refusal.WalkLimit || !strings.Contains(r.Remedy, "git commit-graph write --reachable") {
		t.Fatalf("IsAncestor(fork tip, tip) with no graph: %v, want WalkLimit naming git commit-graph write --reachable", err)
	}
	if ok, err := bare.IsAncestor(h.graphTip, tip); err != nil || !ok {
		t.Fatalf("IsAncestor(graph tip, tip) with no graph = %v, %v", ok, err)
	}
	if ok, err := bare.IsAncestor(tip, h.early); err != nil || ok {
		t.Fatalf("IsAncestor(tip, early) with no graph = %v, %v", ok, err)
	}
	t.Logf("all in %v", time.Since(start).Round(time.Millisecond))
}

// ---- IsAncestor on 200,000 heartbeats, and its git twin ----

var (
	longBenchMu sync.Mutex
	longBench   *longHistory
)

func longFixture(b *testing.B) *longHistory {
	var h *longHistory
	dir := gittest.Fixture(b, "long", func(dir string) (err error) {
		h, err = buildLongHistory(dir)
		return err
	})
	longBenchMu.Lock()
	defer longBenchMu.Unlock()
	if h != nil {
		longBench = h
	}
	if longBench == nil || longBench.dir != dir {
		b.Fatal("long fixture lost")
	}
	return longBench
}

// longQuestions are the IsAncestor questions both twins answer.
func longQuestions(h *longHistory) []struct {
	name      string
	anc, desc oid.ID
	want      bool
} {
	return []struct {
		name      string
		anc, desc oid.ID
		want      bool
	}{
		{"near", h.forkAt, h.tip, true},             // 2,000 apart, outside the graph
		{"no-by-generation", h.tip, h.early, false}, // answered by generations alone
		{"across-fork", h.forkTip, h.tip, false},    // walks down to the fork's generation
		{"far", h.early, h.tip, true},               // 203,000 apart
	}
}

// BenchmarkIsAncestor200k: a warm store (generations of the commits outside
// the graph already derived), as a long-running process has it.
func BenchmarkIsAncestor200k(b *testing.B) {
	h := longFixture(b)
	for _, q := range longQuestions(h) {
		b.Run(q.name, func(b *testing.B) {
			s := openRepo(b, h.dir, git.Options{})
			defer s.Close()
			for i := 0; i < b.N+1; i++ {
				if i == 1 {
					b.ResetTimer()
				}
				got, err := s.IsAncestor(q.anc, q.desc)
				if err != nil || got != q.want {
					b.Fatalf("IsAncestor = %v, %v", got, err)
				}
			}
		})
	}
}

// BenchmarkIsAncestor200kGitCLI: git merge-base --is-ancestor.
func BenchmarkIsAncestor200kGitCLI(b *testing.B) {
	h := longFixture(b)
	env := gittest.Env(filepath.Dir(h.dir))
	for _, q := range longQuestions(h) {
		b.Run(q.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				cmd := exec.Command("git", "merge-base", "--is-ancestor", q.anc.String(), q.desc.String())
				cmd.Dir, cmd.Env = h.dir, env
				err := cmd.Run()
				if got := err == nil; got != q.want {
					b.Fatalf("git merge-base --is-ancestor = %v (%v)", got, err)
				}
			}
		})
	}
}
