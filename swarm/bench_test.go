package swarm_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/sandbox"
	"github.com/nwdes/nwdes/swarm"
)

// Lease take + release round trips, with 1 and 4 supervisors competing
// for the same cards, in one repository (Local) and through a bare remote
// (Remote); beside each, the git CLI doing the same moves in the same run
// (twins named GitCLI). The figure is round trips per second
// (b.ReportMetric "trips/s"); docs/swarm.md records a run.
func BenchmarkLeaseRoundTrip(b *testing.B) {
	for _, mode := range []string{"Local", "Remote"} {
		for _, n := range []int{1, 4} {
			b.Run(fmt.Sprintf("%s/supervisors=%d", mode, n), func(b *testing.B) { benchLeases(b, mode, n) })
			b.Run(fmt.Sprintf("GitCLI%s/supervisors=%d", mode, n), func(b *testing.B) { benchGitLeases(b, mode, n) })
		}
	}
}

// setupLeases gives n stores (one repository, or n clones of one bare
// remote) and the books that move their leases.
func setupLeases(b *testing.B, mode string, n int) ([]swarm.Book, string, []string) {
	b.Helper()
	env := gittest.Env(os.TempDir())
	var books []swarm.Book
	var dirs []string
	bare := ""
	switch mode {
	case "Local":
		dir := gittest.Init(b, false)
		for range n {
			st, err := openStore(dir)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { st.Close() })
			books = append(books, &swarm.Local{Store: st})
		}
		dirs = append(dirs, dir)
	default:
		bare = gittest.Init(b, true)
		origin := gittest.Init(b, false)
		gittest.Git(b, origin, "push", "-q", bare, "main")
		for i := range n {
			c := fmt.Sprintf("%s/clone%d", b.TempDir(), i)
			gittest.Git(b, os.TempDir(), "clone", "-q", bare, c)
			st, err := openStore(c)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { st.Close() })
			books = append(books, &swarm.Remote{Store: st, Name: "origin", Sync: gitstore.SyncOptions{Environ: env}, Tries: 1})
			dirs = append(dirs, c)
		}
	}
	return books, bare, dirs
}

func benchLeases(b *testing.B, mode string, n int) {
	books, _, _ := setupLeases(b, mode, n)
	me, _ := swarm.Self("bench")
	const cards = 4
	var trips atomic.Int64
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	per := (b.N + n - 1) / n
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < per; {
				label := fmt.Sprintf("card%d", (i+k)%cards)
				l := lease(me, label, time.Now(), time.Hour)
				l.Nonce = fmt.Sprintf("%d-%d", i, k)
				tip, err := books[i].Take(context.Background(), label, l, takeFree)
				if errors.Is(err, swarm.ErrNotTaken) || errors.Is(err, gitstore.ErrConflict) {
					k++ // lost to a competitor: a round trip too, of another kind
					continue
				}
				if err != nil {
					b.Error(err)
					return
				}
				if err := books[i].Release(context.Background(), label, tip); err != nil {
					b.Error(err)
					return
				}
				trips.Add(1)
				k++
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(trips.Load())/time.Since(start).Seconds(), "trips/s")
}

// benchGitLeases moves the same leases with the git CLI: a lease commit
// (hash-object, mktree, commit-tree) then update-ref with the old value,
// or push --force-with-lease to the remote, and a delete the same way.
func benchGitLeases(b *testing.B, mode string, n int) {
	_, bare, dirs := setupLeases(b, mode, n)
	const cards = 4
	var trips atomic.Int64
	git := func(dir string, stdin string, args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = gittest.Env(os.TempDir())
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.Output()
		return strings.TrimSpace(string(out)), err
	}
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	per := (b.N + n - 1) / n
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dir := dirs[i%len(dirs)]
			for k := 0; k < per; k++ {
				ref := fmt.Sprintf("refs/nwdes/bench/card%d", (i+k)%cards)
				blob, err := git(dir, fmt.Sprintf(`{"nonce":"%d-%d"}`, i, k), "hash-object", "-w", "--stdin")
				if err != nil {
					b.Error(err)
					return
				}
				tree, _ := git(dir, "100644 blob "+blob+"\tlease\n", "mktree")
				commit, _ := git(dir, "", "commit-tree", "-m", "lease", tree)
				if mode == "Local" {
					if _, err := git(dir, "", "update-ref", ref, commit, strings.Repeat("0", 40)); err != nil {
						continue // lost
					}
					git(dir, "", "update-ref", "-d", ref, commit)
				} else {
					if _, err := git(dir, "", "push", "-q", "--force-with-lease="+ref+":", bare, commit+":"+ref); err != nil {
						continue
					}
					git(dir, "", "push", "-q", "--force-with-lease="+ref+":"+commit, bare, ":"+ref)
				}
				trips.Add(1)
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(trips.Load())/time.Since(start).Seconds(), "trips/s")
}

// The harness of BenchmarkCardOverhead: it reads its contract line and
// reports DONE, nothing more, so what is measured is the machinery.
const benchHarness = `line=$(head -n 1 "$1"); printf '%s\nDONE\n' "$line" > "$NWDES_JOB_DIR/RESULT.md"`

// BenchmarkCardOverhead runs b.N cards through one supervisor (one job at
// a time, local leases) with a harness that only writes its RESULT.md,
// and beside it the same harness b.N times through the wall as `sandbox
// run` runs it (Wall.Run, the job directory its write set), half before
// the swarm's run and half after, so that a load that changes during the
// run weighs on both alike. It reports the time a card of each
// (ms/card), the swarm's overhead beyond the wall's own start
// (overhead-ms/card: staging the base's checkout, the lease's take,
// renewal and release, sealing, the result check, the harvest and the job
// record) and their ratio; and the same in processor time, this process's
// and its reaped children's (the wall's helpers and what they ran), which
// other load on the machine sways far less than elapsed time
// (cpu-*-ms/card). docs/swarm.md records a run.
func BenchmarkCardOverhead(b *testing.B) {
	if err := sandbox.Available(false); err != nil {
		b.Skipf("this kernel cannot wall a harness in: %v", err)
	}
	ctx := context.Background()
	w := wall()
	root := b.TempDir()
	var wallTime, wallCPU time.Duration
	runWall := func(from, to int) {
		start, cpu := time.Now(), cpuUsed()
		for i := from; i < to; i++ {
			dir := filepath.Join(root, fmt.Sprint(i))
			if err := os.Mkdir(dir, 0o755); err != nil {
				b.Fatal(err)
			}
			prompt := filepath.Join(dir, "prompt.md")
			if err := os.WriteFile(prompt, []byte("RESULT: bench sha=0123456789ab\n"), 0o644); err != nil {
				b.Fatal(err)
			}
			res, err := w.Run(ctx, sandbox.Command{Args: []string{"/bin/sh", "-c", benchHarness, "sh", prompt}, Dir: dir,
				Write: []string{dir}, Set: []string{"NWDES_JOB_DIR=" + dir}, Deadline: time.Minute})
			if err != nil || res.End != sandbox.EndExit || res.ExitCode != 0 {
				b.Fatalf("the wall's run: %+v, %v", res, err)
			}
		}
		wallTime += time.Since(start)
		wallCPU += cpuUsed() - cpu
	}
	b.ResetTimer()
	runWall(0, b.N/2)
	b.StopTimer()

	dir := gittest.Init(b, false)
	st, err := openStore(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	head := gittest.Git(b, dir, "rev-parse", "HEAD")
	for i := 0; i < b.N; i++ {
		label := fmt.Sprintf("bench%05d", i)
		c, err := swarm.ParseCard([]byte(fmt.Sprintf("RESULT: %s sha=%s\nBASE: %s\n\nReport.\n", label, head[:12], head)))
		if err == nil {
			err = swarm.Add(ctx, st, c, 0, "bench", time.Now())
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	worker := &swarm.Worker{Name: "bench", Harness: "/bin/sh", HarnessArgs: []string{"-c", benchHarness, "sh", swarm.PromptPlaceholder},
		Deadline: time.Minute, Slots: 1}
	sup, err := supervisor(st, worker, "")
	if err != nil {
		b.Fatal(err)
	}
	sup.Workers = 1
	b.StartTimer()
	start, cpu := time.Now(), cpuUsed()
	sum, err := sup.Run(ctx)
	swarmPer := time.Since(start) / time.Duration(b.N)
	swarmCPU := (cpuUsed() - cpu) / time.Duration(b.N)
	if err != nil || sum.Ran != b.N {
		b.Fatalf("ran %+v, %v", sum, err)
	}
	runWall(b.N/2, b.N)
	b.StopTimer()
	wallPer, wallCPUPer := wallTime/time.Duration(b.N), wallCPU/time.Duration(b.N)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(wallPer), "wall-ms/card")
	b.ReportMetric(ms(swarmPer), "swarm-ms/card")
	b.ReportMetric(ms(swarmPer-wallPer), "overhead-ms/card")
	b.ReportMetric(float64(swarmPer)/float64(wallPer), "ratio")
	b.ReportMetric(ms(wallCPUPer), "cpu-wall-ms/card")
	b.ReportMetric(ms(swarmCPU), "cpu-swarm-ms/card")
	b.ReportMetric(ms(swarmCPU-wallCPUPer), "cpu-overhead-ms/card")
}

// cpuUsed is the processor time (user and system) this process and its
// reaped children have used so far.
func cpuUsed() time.Duration {
	var self, kids syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	var d time.Duration
	for _, tv := range []syscall.Timeval{self.Utime, self.Stime, kids.Utime, kids.Stime} {
		d += time.Duration(tv.Nano())
	}
	return d
}
