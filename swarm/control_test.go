package swarm_test

import (
	"context"
	"testing"
	"time"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/refusal"
	"github.com/nwdes/nwdes/swarm"
)

func isRefusal(err error, name string) bool {
	r, ok := refusal.As(err)
	return ok && r.Name == name
}

func attempts(t *testing.T, st *gitstore.Store, label string) []int {
	t.Helper()
	jobs, err := swarm.Jobs(st)
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, j := range jobs {
		if j.Label == label {
			out = append(out, j.Attempt)
		}
	}
	return out
}

func TestARequeuedCardRunsAgainAsANewAttemptAndADroppedOneNever(t *testing.T) {
	requireWall(t)
	dir := gittest.Init(t, false)
	st, err := openStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	labels := queue(t, st, dir, 2, "ctl")
	failing, dropped := labels[0], labels[1]
	ctx := context.Background()
	if err := swarm.DropCard(ctx, st, dropped, "tester", "done by hand", time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := swarm.RequeueCard(ctx, st, failing, "tester", "", time.Now()); !isRefusal(err, refusal.CardNotFinished) {
		t.Errorf("requeue of a card never run: %v, want CardNotFinished", err)
	}
	run := func() {
		t.Helper()
		sup, err := supervisor(st, parseWorker(t, harness(t, t.TempDir(), "exit 3", "1m")), "")
		if err != nil {
			t.Fatal(err)
		}
		sup.Retry.Attempts = 1 // a failed launch, not retried: one attempt a run
		if _, err := sup.Run(ctx); err != nil {
			t.Fatal(err)
		}
	}
	run()
	if got := attempts(t, st, failing); len(got) != 1 {
		t.Fatalf("attempts of %s after one run: %v", failing, got)
	}
	run()
	if got := attempts(t, st, failing); len(got) != 1 {
		t.Fatalf("a failed card ran again without a requeue: %v", got)
	}
	r, err := swarm.RequeueCard(ctx, st, failing, "tester", "the harness was fixed", time.Now())
	if err != nil || r.After != 1 {
		t.Fatalf("requeue: %+v, %v", r, err)
	}
	run()
	if got := attempts(t, st, failing); len(got) != 2 || got[1] != 2 {
		t.Errorf("attempts of %s after the requeue: %v, want [1 2]", failing, got)
	}
	if got := attempts(t, st, dropped); len(got) != 0 {
		t.Errorf("the dropped card ran: %v", got)
	}
	if _, err := swarm.RequeueCard(ctx, st, dropped, "tester", "", time.Now()); !isRefusal(err, refusal.CardDropped) {
		t.Errorf("requeue of a dropped card: %v, want CardDropped", err)
	}
	if err := swarm.DropCard(ctx, st, "nosuchcard", "tester", "", time.Now()); !isRefusal(err, refusal.CardInvalid) {
		t.Errorf("drop of a card not queued: %v, want CardInvalid", err)
	}
	gittest.Git(t, dir, "fsck", "--strict")
}
