package swarm_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nwdes/nwdes/gitstore"
	gitremote "github.com/nwdes/nwdes/gitstore/remote"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/swarm"
)

// remoteFixture: a bare remote holding main and n queued cards, and two
// clones of it. It returns the bare repository and the clones.
func remoteFixture(t *testing.T, n int, prefix string) (string, []string, []string) {
	t.Helper()
	bare := gittest.Init(t, true)
	origin := gittest.Init(t, false)
	gittest.Git(t, origin, "push", "-q", bare, "main")
	st, err := openStore(origin)
	if err != nil {
		t.Fatal(err)
	}
	labels := queue(t, st, origin, n, prefix)
	gittest.Git(t, origin, "remote", "add", "origin", bare)
	if _, err := gitremote.New(st).Push(context.Background(), "origin", gitstore.SyncOptions{Environ: gittest.Env(os.TempDir())}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	var clones []string
	for i := range 2 {
		c := filepath.Join(t.TempDir(), fmt.Sprintf("clone%d", i))
		gittest.Git(t, filepath.Dir(c), "clone", "-q", bare, c)
		clones = append(clones, c)
	}
	return bare, clones, labels
}

// rejectOnce installs a pre-receive hook in bare that refuses, once, a push
// whose update line matches the shell case pattern (the line is
// "<old> <new> <ref>"), while flag exists.
func rejectOnce(t *testing.T, bare, pattern string) string {
	t.Helper()
	flag := filepath.Join(t.TempDir(), "reject-once")
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	hook := fmt.Sprintf(`#!/bin/sh
while read old new ref; do
	case "$old $new $ref" in
	%s)
		if [ -e %q ]; then rm -f %q; echo "rejected once by the test" >&2; exit 1; fi;;
	esac
done
exit 0
`, pattern, flag, flag)
	if err := os.WriteFile(filepath.Join(bare, "hooks", "pre-receive"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	return flag
}

func runIn(t *testing.T, dir, workerFile string, timeout time.Duration) (*swarm.Summary, error) {
	t.Helper()
	st, err := openStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sup, err := supervisor(st, parseWorker(t, workerFile), "origin")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return sup.Run(ctx)
}

// jobsOn lists the jobs in a fresh clone of bare after fetching it, plus
// the jobs only recorded locally in the given clones (not yet pushed).
func jobsEverywhere(t *testing.T, dirs ...string) map[string]map[string]bool {
	t.Helper()
	per := map[string]map[string]bool{} // label -> nonce set
	for _, d := range dirs {
		st, err := openStore(d)
		if err != nil {
			t.Fatal(err)
		}
		jobs, err := swarm.Jobs(st)
		st.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs {
			if per[j.Label] == nil {
				per[j.Label] = map[string]bool{}
			}
			per[j.Label][j.Nonce] = true
		}
	}
	return per
}

// A supervisor whose push of the job record fails (the remote refuses it
// once: a network blip, a forge's rate limit) releases the card's lease
// anyway: the job it ran is recorded only in its own clone, and the next
// supervisor on the remote runs the card a second time.
func TestReviewAJobRecordThatCouldNotBePushedDoesNotLetAnotherCloneRunTheCardAgain(t *testing.T) {
	requireWall(t)
	bare, clones, labels := remoteFixture(t, 1, "once")
	worker := harness(t, t.TempDir(), "", "1m")
	rejectOnce(t, bare, "*refs/nwdes/swarm/jobs")
	_, errA := runIn(t, clones[0], worker, time.Minute)
	t.Logf("supervisor A: %v", errA)
	if out := gittest.Git(t, bare, "for-each-ref", "refs/nwdes/swarm/leases/"); out == "" && errA != nil {
		t.Logf("A gave up and released the lease on the remote although its record never reached it")
	}
	if _, err := runIn(t, clones[1], worker, time.Minute); err != nil {
		t.Logf("supervisor B: %v", err)
	}
	per := jobsEverywhere(t, clones...)
	for _, l := range labels {
		if n := len(per[l]); n != 1 {
			t.Errorf("card %s ran %d times across the clones (A: %v)", l, n, errA)
		}
	}
}

// One failed renewal (the remote refuses the push once) is taken as a lost
// lease: the job is stopped, nothing is recorded and the lease is not
// released. The lease still names this live supervisor, so it is live (then
// drift) to the supervisor itself and never takeable: Run, without
// --follow, polls forever for a card that only it holds.
func TestReviewAFailedRenewalDoesNotLeaveTheSupervisorWaitingOnItsOwnLease(t *testing.T) {
	requireWall(t)
	bare, clones, labels := remoteFixture(t, 1, "renew")
	worker := harness(t, t.TempDir(), "sleep 1", "1m")
	// A renewal moves an existing lease ref to another value: neither old
	// nor new is zero.
	rejectOnce(t, bare, `[!0]*\ [!0]*\ refs/nwdes/swarm/leases/*`)
	// The bound is the context's, not a time measured here: a Run that
	// polls for its own lease never returns before its context ends, and
	// one that works returns long before, however loaded the machine.
	st, err := openStore(clones[0])
	if err != nil {
		t.Fatal(err)
	}
	sup, err := supervisor(st, parseWorker(t, worker), "origin")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	_, err = sup.Run(ctx)
	expired := ctx.Err()
	cancel()
	st.Close()
	t.Logf("run: %v", err)
	if expired != nil {
		t.Errorf("Run ended only when its context did (%v, err %v): it waited on a lease it holds itself", expired, err)
	}
	per := jobsEverywhere(t, clones[0])
	for _, l := range labels {
		if len(per[l]) != 1 {
			t.Errorf("card %s: %d finished jobs after the run", l, len(per[l]))
		}
	}
	if out := gittest.Git(t, bare, "for-each-ref", "refs/nwdes/swarm/leases/"); out != "" {
		t.Errorf("leases left on the remote:\n%s", out)
	}
}

// A card queued in another clone on a commit that was never pushed on a
// branch: this clone has the card (the queue ref travels) but not its base.
// Staging it fails, and that failure ends the whole run: the good card
// queued after it never runs, and every later run stops at the same card.
func TestReviewACardWhoseBaseThisCloneLacksDoesNotStopTheRun(t *testing.T) {
	requireWall(t)
	bare, clones, _ := remoteFixture(t, 0, "none")
	a := clones[0]
	gittest.WriteFile(t, a, "local.txt", "only here\n")
	gittest.Git(t, a, "add", "-A")
	gittest.Git(t, a, "commit", "-qm", "local only")
	st, err := openStore(a)
	if err != nil {
		t.Fatal(err)
	}
	bad := queue(t, st, a, 1, "unpushedbase")
	time.Sleep(10 * time.Millisecond)
	gittest.Git(t, a, "reset", "-q", "--hard", "HEAD~1")
	good := queue(t, st, a, 1, "good")
	if _, err := gitremote.New(st).Push(context.Background(), "origin", gitstore.SyncOptions{Environ: gittest.Env(os.TempDir())}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	_ = bare
	worker := harness(t, t.TempDir(), "", "1m")
	_, err = runIn(t, clones[1], worker, time.Minute)
	t.Logf("run in the other clone: %v", err)
	per := jobsEverywhere(t, clones[1])
	if len(per[good[0]]) != 1 {
		t.Errorf("the good card %s ran %d times: the unstageable card %s ended the run (%v)", good[0], len(per[good[0]]), bad[0], err)
	}
}
