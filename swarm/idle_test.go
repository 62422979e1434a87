package swarm_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/swarm"
)

// runIdle runs one card with a harness running body, an idle time of 1s
// and a deadline of 1m, and returns its job and the events.
func runIdle(t *testing.T, body string) (swarm.Job, []swarm.EventKind) {
	t.Helper()
	dir := gittest.Init(t, false)
	st, err := openStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	queue(t, st, dir, 1, "idle")
	w := parseWorker(t, harness(t, t.TempDir(), body, "1m"))
	w.Idle = time.Second
	sup, err := supervisor(st, w, "")
	if err != nil {
		t.Fatal(err)
	}
	var kinds []swarm.EventKind
	sup.Events = func(e swarm.Event) { kinds = append(kinds, e.Kind) }
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	if _, err := sup.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("the run took %v", took)
	}
	jobs, err := swarm.Jobs(st)
	if err != nil || len(jobs) != 1 {
		t.Fatalf("jobs %v, %v", jobs, err)
	}
	return jobs[0], kinds
}

func TestAJobThatWritesNothingAndUsesNoCPUEndsIdle(t *testing.T) {
	requireWall(t)
	j, kinds := runIdle(t, "sleep 30")
	if j.End != swarm.EndIdle || !strings.Contains(j.Reason, "idle: no output and no CPU for 1s") || j.Stopped {
		t.Errorf("end %s, reason %q, stopped %v; want idle, finished", j.End, j.Reason, j.Stopped)
	}
	if j.Survivors != 0 {
		t.Errorf("%d survivors", j.Survivors)
	}
	idle := false
	for _, k := range kinds {
		idle = idle || k == swarm.EventIdle
	}
	if !idle {
		t.Errorf("events %v: no idle", kinds)
	}
}

func TestAJobThatKeepsWritingIsNotIdle(t *testing.T) {
	requireWall(t)
	j, _ := runIdle(t, "for i in 1 2 3 4 5 6 7 8; do echo tick $i; sleep 0.3; done")
	if j.End != swarm.EndDone {
		t.Errorf("end %s (%s), want done", j.End, j.Reason)
	}
}

func TestAJobThatComputesSilentlyIsNotIdle(t *testing.T) {
	requireWall(t)
	// The work is the shell's own (arithmetic between two looks at the
	// clock), not short-lived children's: a loop of forks showed too
	// little CPU, at the clock tick's grain, on a machine loaded to 8.
	j, _ := runIdle(t, `end=$(($(date +%s) + 3)); while [ "$(date +%s)" -lt "$end" ]; do i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; done`)
	if j.End != swarm.EndDone {
		t.Errorf("end %s (%s), want done", j.End, j.Reason)
	}
}
