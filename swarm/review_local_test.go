package swarm_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/swarm"
)

// A job record merged in from anyone who can push (the jobs ref is merged
// from the remote and no record is checked on the way in) that does not
// parse makes Jobs fail, and with it every supervisor's look at the queue
// and swarm status: one bad record stops the whole swarm.
func TestReviewOneMalformedJobRecordDoesNotStopEverySupervisor(t *testing.T) {
	requireWall(t)
	dir := gittest.Init(t, false)
	st, err := openStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	labels := queue(t, st, dir, 1, "victim")
	// A record that names an exit record it does not hold.
	bad := swarm.Job{Label: "other", Attempt: 1, Nonce: "n", End: swarm.EndDone, Result: "ok", ExitSHA256: "00"}
	rec, err := gitstore.NewRecord(swarm.KindJob, 1, bad)
	if err != nil {
		t.Fatal(err)
	}
	rec.Payloads = map[string][]byte{"exit.json": []byte("{}")}
	if _, err := st.Change(context.Background(), swarm.JobsRef, "hostile", func(tx gitstore.Edit) error {
		return tx.Put("jobs/other/1-n", rec)
	}); err != nil {
		t.Fatal(err)
	}
	sup, _ := supervisor(st, parseWorker(t, harness(t, t.TempDir(), "", "1m")), "")
	_, err = sup.Run(context.Background())
	if err != nil {
		t.Errorf("one malformed job record of another card: %v", err)
	}
	jobs, err := swarm.Jobs(st)
	if err != nil {
		t.Errorf("Jobs: %v", err)
	}
	n := 0
	for _, j := range jobs {
		if j.Label == labels[0] {
			n++
		}
	}
	if n != 1 {
		t.Errorf("card %s ran %d times", labels[0], n)
	}
}

// A lease from another host whose heartbeat is far in the future (a holder
// whose clock runs ahead, or a record pushed by anyone) is not held until
// that time: it is stale once it has stood still for the stale window.
func TestReviewALeaseWithAHeartbeatInTheFutureIsNotHeldForever(t *testing.T) {
	clock := time.Now()
	w := &swarm.Watch{Now: func() time.Time { return clock }}
	me, err := swarm.Self("me")
	if err != nil {
		t.Fatal(err)
	}
	other := swarm.Holder{Owner: "x", Host: "elsewhere", Boot: "b", PID: 1, Start: 1}
	ahead := clock.Add(365 * 24 * time.Hour).UTC().Format(time.RFC3339Nano)
	l := &swarm.Lease{Label: "c", Holder: other, Nonce: "n", Attempt: 1, Attest: "a",
		Taken: ahead, Until: ahead, Heartbeat: ahead}
	w.Unchanged("c", l, time.Time{})
	clock = clock.Add(2 * swarm.DefaultStaleAfter)
	if st := swarm.StateOf(l, w.Unchanged("c", l, time.Time{}), me, clock, 0); st != swarm.Stale {
		t.Errorf("a lease whose heartbeat is a year ahead, unchanged for two stale windows: %s, want stale", st)
	}
}

// A supervisor whose lease was taken over (as stale, or released with
// --force and taken again) while its job ran records the job as finished
// when the job ends before its next renewal: it never checks that it still
// holds the lease. The card then has two finished jobs, one of them by a
// supervisor that no longer held it.
func TestReviewAJobWhoseLeaseWasTakenOverIsNotRecordedAsFinished(t *testing.T) {
	requireWall(t)
	dir := gittest.Init(t, false)
	st, err := openStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	labels := queue(t, st, dir, 1, "taken")
	// The harness waits for a file in its job directory, then finishes.
	w := parseWorker(t, harness(t, t.TempDir(), `i=0; while [ ! -e "$NWDES_JOB_DIR/go" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done`, "1m"))
	sup, _ := supervisor(st, w, "")
	sup.Heartbeat = time.Hour // no renewal in this test: the takeover lands between two
	done := make(chan error, 1)
	go func() { _, err := sup.Run(context.Background()); done <- err }()
	var jobDir string
	deadline := time.Now().Add(20 * time.Second)
	for jobDir == "" {
		if m, _ := filepath.Glob(filepath.Join(dir, ".git/nwdes/swarm/jobs", labels[0], "*", "harness.log")); len(m) == 1 {
			jobDir = filepath.Dir(m[0])
		}
		if time.Now().After(deadline) {
			t.Fatal("the job never started")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Another supervisor takes the lease over (here: as if it were stale).
	local := &swarm.Local{Store: st}
	other := swarm.Holder{Owner: "b", Host: "other-host", Boot: "b", PID: 1, Start: 1}
	t0 := time.Now().UTC().Format(time.RFC3339Nano)
	_, err = local.Take(context.Background(), labels[0], &swarm.Lease{Label: labels[0], Holder: other, Nonce: "takeover", Attempt: 2,
		Attest: strings.Repeat("0", 64), Taken: t0, Until: t0, Heartbeat: t0}, func(*swarm.Lease, error, time.Time) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(jobDir, "go"), nil, 0o644)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	jobs, _ := swarm.Jobs(st)
	for _, j := range jobs {
		if j.Label == labels[0] && !j.Stopped {
			t.Errorf("attempt %d (nonce %s) was recorded finished (%s/%s) after its lease was taken over", j.Attempt, j.Nonce, j.End, j.Result)
		}
	}
	entries, _ := local.List(context.Background())
	if len(entries) != 1 || entries[0].Lease == nil || entries[0].Lease.Nonce != "takeover" {
		t.Errorf("the new holder's lease is gone: %+v", entries)
	}
}

// VerifyExit (swarm status) reads <JobDir>/exit.json for every job record,
// JobDir taken from the record as is (a merged record may name any path),
// following links and blocking on a FIFO: a record naming a directory whose
// exit.json is a FIFO (a job's leftover scratch/, say) hangs swarm status.
func TestReviewVerifyExitDoesNotBlockOnAFIFO(t *testing.T) {
	dir := t.TempDir()
	if err := syscallMkfifo(filepath.Join(dir, "exit.json")); err != nil {
		t.Skip(err)
	}
	done := make(chan string, 1)
	go func() { done <- swarm.VerifyExit(&swarm.Job{JobDir: dir, ExitSHA256: "00"}) }()
	select {
	case why := <-done:
		if why == "" {
			t.Error("a FIFO verified")
		}
	case <-time.After(3 * time.Second):
		t.Error("VerifyExit blocked on a FIFO named exit.json in the record's JobDir")
	}
}
