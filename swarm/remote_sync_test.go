package swarm_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
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
