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
	"github.com/nwdes/nwdes/internal/gittest"
)

// Two supervisors in one clone, each with two workers, share the clone's
// tracking refs: their fetches, pushes and lease moves must not fail each
// other (git's "cannot lock ref 'refs/nwdes-remotes/…'").
func TestTwoSupervisorsInOneCloneInRemoteModeEndWithoutErrorTenTimesInTen(t *testing.T) {
	requireWall(t)
	runs := 10
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
		if _, err := st.Push(context.Background(), "origin", gitstore.SyncOptions{Environ: gittest.Env(os.TempDir())}); err != nil {
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
