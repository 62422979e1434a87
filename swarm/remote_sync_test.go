package swarm_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nwdes/nwdes/gitstore"
	gitremote "github.com/nwdes/nwdes/gitstore/remote"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/internal/race"
	"github.com/nwdes/nwdes/swarm"
)

// Two supervisors in one clone, each with two workers, share the clone's
// tracking refs: their fetches, pushes and lease moves must not fail each
// other (git's "cannot lock ref 'refs/nwdes-remotes/…'").
func TestTwoSupervisorsInOneCloneInRemoteModeEndWithoutErrorTenTimesInTen(t *testing.T) {
	requireWall(t)
	runs := 10
	if race.Enabled {
		// The interleavings of two supervisors' goroutines under the
		// detector; make test runs the ten of ten again without it.
		runs = 3
	}
	if n, err := strconv.Atoi(os.Getenv("NWDES_TEST_RUNS")); err == nil {
		runs = n
	}
	_, clones, _ := remoteFixture(t, 0, "none")
	dir := clones[0]
	worker := harness(t, t.TempDir(), "", "1m")
	for run := range runs {
		st, err := openStore(dir)
		if err != nil {
			t.Fatal(err)
		}
		labels := queue(t, st, dir, 3, fmt.Sprintf("run%d-", run))
		if _, err := gitremote.New(st).Push(context.Background(), "origin", gitstore.SyncOptions{Environ: gittest.Env(os.TempDir())}); err != nil {
			t.Fatal(err)
		}
		st.Close()
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				st, err := openStore(dir)
				if err != nil {
					errs[i] = err
					return
				}
				defer st.Close()
				sup, err := supervisor(st, parseWorker(t, worker), "origin")
				if err != nil {
					errs[i] = err
					return
				}
				sup.Workers, sup.Heartbeat = 2, time.Second
				sup.Holder.Owner = fmt.Sprintf("tester%d", i) // two supervisors of one process are two holders
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				_, errs[i] = sup.Run(ctx)
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("run %d, supervisor %d: %v", run, i, err)
			}
		}
		per := jobsEverywhere(t, dir)
		for _, l := range labels {
			if len(per[l]) != 1 {
				t.Errorf("run %d: card %s ran %d times", run, l, len(per[l]))
			}
		}
	}
}

// A holder whose clock runs 11 minutes behind writes heartbeats that look
// older than the stale window to every other machine's clock; a reader
// that measures how long it saw them unchanged leaves its card alone.
func TestAHolderWhoseClockRunsBehindKeepsItsCardFromAnotherClone(t *testing.T) {
	requireWall(t)
	_, clones, labels := remoteFixture(t, 1, "skew")
	worker := harness(t, t.TempDir(), "sleep 3", "1m")
	stA, err := openStore(clones[0])
	if err != nil {
		t.Fatal(err)
	}
	defer stA.Close()
	a, err := supervisor(stA, parseWorker(t, worker), "origin")
	if err != nil {
		t.Fatal(err)
	}
	a.Heartbeat = 500 * time.Millisecond
	a.Holder.Host, a.Holder.Boot = "skewed", "its-own-boot" // another machine, as its lease tells
	a.Now = func() time.Time { return time.Now().Add(-11 * time.Minute) }
	started := make(chan struct{})
	var once sync.Once
	a.Events = func(e swarm.Event) {
		if e.Kind == swarm.EventStarted {
			once.Do(func() { close(started) })
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	errA := make(chan error, 1)
	go func() { _, err := a.Run(ctx); errA <- err }()
	select {
	case <-started:
	case err := <-errA:
		t.Fatalf("the skewed supervisor ended before its job started: %v", err)
	}
	stB, err := openStore(clones[1])
	if err != nil {
		t.Fatal(err)
	}
	defer stB.Close()
	b, err := supervisor(stB, parseWorker(t, worker), "origin")
	if err != nil {
		t.Fatal(err)
	}
	b.Holder.Owner = "other"
	sumB, err := b.Run(ctx)
	if err != nil {
		t.Fatalf("the other supervisor: %v", err)
	}
	if err := <-errA; err != nil {
		t.Fatalf("the skewed supervisor: %v", err)
	}
	if sumB.Ran != 0 {
		t.Errorf("the other supervisor ran %d jobs: it took a card whose holder was running it", sumB.Ran)
	}
	per := jobsEverywhere(t, clones...)
	for _, l := range labels {
		if len(per[l]) != 1 {
			t.Errorf("card %s ran %d times", l, len(per[l]))
		}
	}
}

// In remote mode a supervisor fetches at each heartbeat of a job, so that
// a stop pushed from elsewhere arrives. A fetch that fails (here: the
// remote is gone for a moment) is said as an event (sync-failed, tried
// again at the next heartbeat), not swallowed, and the job runs on and is
// recorded and pushed once the remote is back.
func TestAFetchFailingWhileAJobRunsIsSaidAsAnEvent(t *testing.T) {
	requireWall(t)
	bare, clones, _ := remoteFixture(t, 1, "sync-")
	st, err := openStore(clones[0])
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// The harness runs until the test lets it go, after the event.
	worker := harness(t, t.TempDir(), `until [ -e "$NWDES_JOB_DIR/scratch/go" ]; do sleep 0.05; done`, "20s")
	sup, err := supervisor(st, parseWorker(t, worker), "origin")
	if err != nil {
		t.Fatal(err)
	}
	// Renewals stay in this clone: only the fetch meets the missing remote.
	sup.Book = &swarm.Local{Store: st}
	var mu sync.Mutex
	var failed []swarm.Event
	sup.Events = func(e swarm.Event) {
		mu.Lock()
		defer mu.Unlock()
		switch e.Kind {
		case swarm.EventStarted:
			if err := os.Rename(bare, bare+".gone"); err != nil {
				t.Error(err)
			}
		case swarm.EventSyncFailed:
			failed = append(failed, e)
			if len(failed) > 1 {
				return
			}
			if err := os.Rename(bare+".gone", bare); err != nil {
				t.Error(err)
			}
			dirs, _ := filepath.Glob(filepath.Join(sup.JobsDir, e.Label, "*", "scratch"))
			for _, d := range dirs {
				if err := os.WriteFile(filepath.Join(d, "go"), nil, 0o644); err != nil {
					t.Error(err)
				}
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := sup.Run(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(failed) == 0 || failed[0].Label != "sync-00" || !strings.Contains(failed[0].Detail, "fetch before reading the stop records") {
		t.Fatalf("sync-failed events: %+v", failed)
	}
	jobs, err := swarm.Jobs(st)
	if err != nil || len(jobs) != 1 || jobs[0].End != swarm.EndDone {
		t.Fatalf("the job ran on and was recorded: %+v %v", jobs, err)
	}
	if out := gittest.Git(t, bare, "ls-tree", "-r", "--name-only", string(swarm.JobsRef)); !strings.Contains(out, "jobs/sync-00/1-") {
		t.Fatalf("the record did not reach the remote: %q", out)
	}
}
