package swarm_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/swarm"
)

// queueCard adds a card labelled label on HEAD with the extra headers.
func queueCard(t *testing.T, st *gitstore.Store, dir, label string, headers ...string) {
	t.Helper()
	head := gittest.Git(t, dir, "rev-parse", "HEAD")
	text := fmt.Sprintf("RESULT: %s sha=%s\nBASE: %s\n", label, head[:12], head)
	for _, h := range headers {
		text += h + "\n"
	}
	c, err := swarm.ParseCard([]byte(text + "\nDo it.\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := swarm.Add(context.Background(), st, c, 0, "tester", time.Now()); err != nil {
		t.Fatal(err)
	}
}

// runBody runs the queue with a harness running body (then reporting
// DONE) and returns the jobs and the events.
func runBody(t *testing.T, dir string, st *gitstore.Store, body string, tune func(*swarm.Supervisor)) ([]swarm.Job, []swarm.Event) {
	t.Helper()
	sup, err := supervisor(st, parseWorker(t, harness(t, t.TempDir(), body, "1m")), "")
	if err != nil {
		t.Fatal(err)
	}
	if tune != nil {
		tune(sup)
	}
	var events []swarm.Event
	sup.Events = func(e swarm.Event) { events = append(events, e) }
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := sup.Run(ctx); err != nil {
		t.Fatal(err)
	}
	jobs, err := swarm.Jobs(st)
	if err != nil {
		t.Fatal(err)
	}
	return jobs, events
}

func openTestStore(t *testing.T) (string, *gitstore.Store) {
	t.Helper()
	dir := gittest.Init(t, false)
	st, err := openStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return dir, st
}

func TestAFailedLaunchIsRetriedWithBackoffAndEachAttemptRecorded(t *testing.T) {
	requireWall(t)
	dir, st := openTestStore(t)
	queueCard(t, st, dir, "flaky")
	jobs, events := runBody(t, dir, st, "exit 3", func(s *swarm.Supervisor) {
		s.Retry = swarm.RetryPolicy{Attempts: 3, Backoff: 20 * time.Millisecond}
		s.Rand = func() float64 { return 0 }
	})
	if len(jobs) != 3 {
		t.Fatalf("%d jobs recorded, want one per attempt (3): %+v", len(jobs), jobs)
	}
	for i, j := range jobs {
		if j.Attempt != i+1 || j.End != swarm.EndFailed || j.Retry != (i < 2) {
			t.Errorf("attempt %d: %+v", i+1, j)
		}
	}
	if !strings.Contains(jobs[2].Reason, "not retried: attempt 3 was the last of 3") {
		t.Errorf("the last attempt's reason: %s", jobs[2].Reason)
	}
	first, _ := time.Parse(time.RFC3339Nano, jobs[0].Ended)
	after, _ := time.Parse(time.RFC3339Nano, jobs[0].RetryAfter)
	if d := after.Sub(first); d < 10*time.Millisecond || d > 5*time.Second {
		t.Errorf("the first retry waits %v after the attempt ended, want the jittered backoff (10ms at the least jitter)", d)
	}
	if n := countEvents(events, swarm.EventRetry); n != 2 {
		t.Errorf("%d retry events, want 2", n)
	}
	if !swarm.Finished(jobs, nil)["flaky"] {
		t.Error("the card is not finished after its last attempt")
	}
}

func TestAJobThatRanPastTheLaunchGraceIsNotRetried(t *testing.T) {
	requireWall(t)
	dir, st := openTestStore(t)
	queueCard(t, st, dir, "slow")
	jobs, _ := runBody(t, dir, st, "sleep 0.3; exit 3", func(s *swarm.Supervisor) {
		s.Retry = swarm.RetryPolicy{Attempts: 3, LaunchGrace: 100 * time.Millisecond, Backoff: time.Millisecond}
	})
	if len(jobs) != 1 || jobs[0].Retry {
		t.Fatalf("jobs %+v", jobs)
	}
}

func TestAHarnessReportingUsageOverItsBudgetEndsBudget(t *testing.T) {
	requireWall(t)
	dir, st := openTestStore(t)
	queueCard(t, st, dir, "costly", "BUDGET: tokens=100")
	start := time.Now()
	jobs, events := runBody(t, dir, st, `printf '{"tokens": 500, "cost_usd": 0.25}' > "$NWDES_JOB_DIR/spent.json"; sleep 30`, nil)
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("the run took %v: the budget did not end the job", took)
	}
	if len(jobs) != 1 {
		t.Fatalf("jobs %+v", jobs)
	}
	j := jobs[0]
	if j.End != swarm.EndBudget || !strings.Contains(j.Reason, "budget: 500 tokens, over the budget's 100") || j.Budget != "tokens=100" {
		t.Fatalf("job %+v", j)
	}
	if j.Spent == nil || *j.Spent != (swarm.Spent{Tokens: 500, CostMicros: 250_000}) {
		t.Fatalf("spent %+v", j.Spent)
	}
	if !slices.ContainsFunc(events, func(e swarm.Event) bool { return e.Kind == swarm.EventBudget }) {
		t.Error("no budget event")
	}
}

func TestAHarnessWhoseReadingsStopUnderABudgetEndsBudgetUnverifiable(t *testing.T) {
	requireWall(t)
	dir, st := openTestStore(t)
	queueCard(t, st, dir, "quiet", "BUDGET: turns=50")
	jobs, _ := runBody(t, dir, st, `printf '{"turns": 1}' > "$NWDES_JOB_DIR/spent.json"; i=0; while [ $i -lt 300 ]; do echo working; sleep 0.1; i=$((i+1)); done`, func(s *swarm.Supervisor) {
		s.Worker.Idle = time.Second
	})
	if len(jobs) != 1 || jobs[0].End != swarm.EndBudgetUnverifiable || !strings.Contains(jobs[0].Reason, "no new reading of spent.json for 1s") {
		t.Fatalf("jobs %+v", jobs)
	}
}

func TestAJobThatReportsNothingRunsAsBeforeUnderABudget(t *testing.T) {
	requireWall(t)
	dir, st := openTestStore(t)
	queueCard(t, st, dir, "silent", "BUDGET: tokens=1")
	jobs, _ := runBody(t, dir, st, "true", nil)
	if len(jobs) != 1 || jobs[0].End != swarm.EndDone || jobs[0].Result != swarm.VerdictOK || jobs[0].Spent != nil {
		t.Fatalf("jobs %+v", jobs)
	}
}

func TestACardWhoseDependencyFailedDoesNotRunAndSaysWhy(t *testing.T) {
	requireWall(t)
	dir, st := openTestStore(t)
	queueCard(t, st, dir, "dep-a")
	queueCard(t, st, dir, "dep-b", "DEPENDS-ON: dep-a")
	queueCard(t, st, dir, "dep-c")
	body := `if head -n 1 "$1" | grep -q '^RESULT: dep-a '; then printf '%s\nBLOCKED cannot\n' "$(head -n 1 "$1")" > "$NWDES_JOB_DIR/RESULT.md"; exit 0; fi`
	jobs, events := runBody(t, dir, st, body, nil)
	var ran []string
	for _, j := range jobs {
		ran = append(ran, j.Label)
	}
	if !slices.Equal(ran, []string{"dep-a", "dep-c"}) {
		t.Fatalf("ran %v, want dep-a and dep-c", ran)
	}
	i := slices.IndexFunc(events, func(e swarm.Event) bool { return e.Kind == swarm.EventBlocked })
	if i < 0 || events[i].Label != "dep-b" || events[i].Detail != "it depends on dep-a, whose attempt 1 ended done with result blocked" {
		t.Fatalf("events %+v", events)
	}
}

func TestThePathsAJobChangedOutsideItsCardsPathsAreNamedInItsRecord(t *testing.T) {
	requireWall(t)
	dir, st := openTestStore(t)
	queueCard(t, st, dir, "scoped", "PATHS: docs/ notes.txt")
	body := `mkdir -p docs src && echo a > docs/a.md && echo b > src/b.go && echo n > notes.txt && echo r > README.md && git add -A && git commit -q -m work`
	jobs, _ := runBody(t, dir, st, body, nil)
	if len(jobs) != 1 {
		t.Fatalf("jobs %+v", jobs)
	}
	j := jobs[0]
	if j.Harvest != swarm.HarvestDescends || j.ChangedCount != 4 || j.OutsideCount != 2 || !slices.Equal(j.Outside, []string{"README.md", "src/b.go"}) {
		t.Fatalf("changed %v, outside %v (%d)", j.Changed, j.Outside, j.OutsideCount)
	}
}

// A harness that cannot be started at all (the wall's EndStartFailed) is
// a launch failure too: retried, each attempt recorded once.
func TestAHarnessThatCannotStartIsRetriedAndEachAttemptRecorded(t *testing.T) {
	requireWall(t)
	dir, st := openTestStore(t)
	queueCard(t, st, dir, "missing")
	jobs, events := runBody(t, dir, st, "exit 0", func(s *swarm.Supervisor) {
		s.Worker.Harness = "/nonexistent/nwdes-harness"
		s.Retry = swarm.RetryPolicy{Attempts: 2, Backoff: time.Millisecond}
		s.Rand = func() float64 { return 0 }
	})
	if len(jobs) != 2 {
		t.Fatalf("%d jobs recorded, want one per attempt (2): %+v", len(jobs), jobs)
	}
	for i, j := range jobs {
		if j.Attempt != i+1 || j.End != swarm.EndFailed || j.Retry != (i == 0) {
			t.Errorf("attempt %d: end %s retry %v reason %q", j.Attempt, j.End, j.Retry, j.Reason)
		}
	}
	if !strings.Contains(jobs[0].Reason, "it did not start; retried after") {
		t.Errorf("the first attempt's reason: %s", jobs[0].Reason)
	}
	if !strings.Contains(jobs[1].Reason, "it did not start; not retried: attempt 2 was the last of 2") {
		t.Errorf("the last attempt's reason: %s", jobs[1].Reason)
	}
	if n := countEvents(events, swarm.EventRetry); n != 1 {
		t.Errorf("%d retry events, want 1", n)
	}
}

// countEvents counts the events of kind.
func countEvents(events []swarm.Event, kind swarm.EventKind) int {
	n := 0
	for _, e := range events {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

// failingRelease is a Local book whose first fails releases fail.
type failingRelease struct {
	*swarm.Local
	fails int
}

func (b *failingRelease) Release(ctx context.Context, label string, tip oid.ID) error {
	if b.fails > 0 {
		b.fails--
		return errors.New("the disk is full")
	}
	return b.Local.Release(ctx, label, tip)
}

// A release that fails is tried again, and one that keeps failing is said
// as an event (release-failed, with the cause) and ends the run with its
// error, never swallowed; the job stays recorded. One that fails once is
// released.
func TestAReleaseThatFailsIsRetriedAndSaidAsAnEvent(t *testing.T) {
	requireWall(t)
	for _, tc := range []struct {
		fails int
		want  swarm.EventKind
	}{{1, swarm.EventReleased}, {3, swarm.EventReleaseFailed}} {
		dir, st := openTestStore(t)
		queueCard(t, st, dir, "held")
		sup, err := supervisor(st, parseWorker(t, harness(t, t.TempDir(), "", "1m")), "")
		if err != nil {
			t.Fatal(err)
		}
		sup.Book = &failingRelease{Local: &swarm.Local{Store: st}, fails: tc.fails}
		var events []swarm.Event
		sup.Events = func(e swarm.Event) { events = append(events, e) }
		_, err = sup.Run(context.Background())
		if failed := tc.want == swarm.EventReleaseFailed; (err != nil) != failed || (failed && !strings.Contains(err.Error(), "the disk is full")) {
			t.Fatalf("%d failures: the run's error %v", tc.fails, err)
		}
		jobs, err := swarm.Jobs(st)
		if err != nil || len(jobs) != 1 || jobs[0].End != swarm.EndDone {
			t.Fatalf("%d failures: jobs %+v %v", tc.fails, jobs, err)
		}
		var got []swarm.Event
		for _, e := range events {
			if e.Kind == swarm.EventReleased || e.Kind == swarm.EventReleaseFailed {
				got = append(got, e)
			}
		}
		if len(got) != 1 || got[0].Kind != tc.want || got[0].Label != "held" ||
			(tc.want == swarm.EventReleaseFailed && !strings.Contains(got[0].Detail, "the disk is full")) {
			t.Fatalf("%d failures: release events %+v, want one %s", tc.fails, got, tc.want)
		}
	}
}
