package swarm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/memstore"
	"github.com/nwdes/nwdes/gitstore/oid"
)

// counting is a store whose views count the records read through them
// and fail a read of any path holding fail.
type counting struct {
	*memstore.Store
	gets atomic.Int64
	fail atomic.Value // string
}

type countingView struct {
	gitstore.View
	c *counting
}

func (c *counting) Records(ref gitstore.RefName) (gitstore.View, error) {
	v, err := c.Store.Records(ref)
	if err != nil {
		return nil, err
	}
	return countingView{v, c}, nil
}

func (v countingView) Get(path string) (*gitstore.Record, error) {
	v.c.gets.Add(1)
	if f, _ := v.c.fail.Load().(string); f != "" && strings.Contains(path, f) {
		return nil, errors.New("object missing (injected)")
	}
	return gitstore.ReadRecord(v, path)
}

func newCounting(t *testing.T) *counting {
	t.Helper()
	st, err := memstore.New(memstore.Options{Registry: gitstore.MustRegistry(Register)})
	if err != nil {
		t.Fatal(err)
	}
	c := &counting{Store: st}
	c.fail.Store("")
	return c
}

func addJob(t *testing.T, st gitstore.RecordWriter, label string, attempt int) {
	t.Helper()
	exit := []byte(fmt.Sprintf(`{"label":%q,"attempt":%d}`, label, attempt))
	d := sha256.Sum256(exit)
	j := &Job{Label: label, Attempt: attempt, Nonce: fmt.Sprintf("%016x", attempt), End: EndDone, Result: VerdictOK,
		ExitSHA256: hex.EncodeToString(d[:]), Harvest: HarvestNone}
	if err := recordJob(context.Background(), st, j, exit, nil, nil); err != nil {
		t.Fatal(err)
	}
}

func addCard(t *testing.T, st *memstore.Store, label string, base oid.ID) {
	t.Helper()
	c, err := ParseCard([]byte(fmt.Sprintf("RESULT: %s sha=%s\nBASE: %s\n\nDo it.\n", label, base.String()[:12], base)))
	if err != nil {
		t.Fatal(err)
	}
	if err := Add(context.Background(), st, c, 0, "test", time.Unix(1e9, 0)); err != nil {
		t.Fatal(err)
	}
}

// The ledger reads again only what moved, and what it returns is what the
// uncached readers return, after every kind of change.
func TestLedgerParsesOnlyWhatChanged(t *testing.T) {
	st := newCounting(t)
	base, err := st.AddCommit(memstore.Commit{Message: "base"})
	if err != nil {
		t.Fatal(err)
	}
	var l ledger
	reads := func(t *testing.T, want int64) {
		t.Helper()
		st.gets.Store(0)
		jobs, err := l.Jobs(st)
		if err != nil {
			t.Fatal(err)
		}
		queue, err := l.Queue(st)
		if err != nil {
			t.Fatal(err)
		}
		ctl, stops, err := l.Control(st)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := l.summary(st, ctl)
		if err != nil {
			t.Fatal(err)
		}
		if got := st.gets.Load(); got != want {
			t.Errorf("%d records read, want %d", got, want)
		}
		wantJobs, _ := Jobs(st.Store)
		agree(t, sum, wantJobs, ctl)
		wantQueue, _ := Queue(st.Store)
		wantCtl, _ := ReadControl(st.Store)
		wantStops, _ := Stops(st.Store)
		if !reflect.DeepEqual(jobs, wantJobs) || !reflect.DeepEqual(queue, wantQueue) || !reflect.DeepEqual(ctl, wantCtl) || !reflect.DeepEqual(stops, wantStops) {
			t.Errorf("the ledger says\n%+v\n%+v\n%+v\n%+v\nthe records\n%+v\n%+v\n%+v\n%+v", jobs, queue, ctl, stops, wantJobs, wantQueue, wantCtl, wantStops)
		}
	}
	for i := range 5 {
		addCard(t, st.Store, fmt.Sprintf("c%d", i), base)
		addJob(t, st, fmt.Sprintf("c%d", i), 1)
	}
	reads(t, 10) // everything, once
	reads(t, 0)  // no tip moved: nothing
	addJob(t, st, "c5", 1)
	reads(t, 1) // a new label: its one record
	addJob(t, st, "c2", 2)
	reads(t, 2) // a new attempt: that label's records
	addCard(t, st.Store, "c5", base)
	reads(t, 1) // a new card: it alone
	if err := SetStop(context.Background(), st, Stop{Card: "c3", At: "now", By: "test"}); err != nil {
		t.Fatal(err)
	}
	reads(t, 1) // the control ref is small: read whole when it moves
	if _, err := RequeueCard(context.Background(), st, "c1", "test", "again", time.Unix(1e9, 0)); err != nil {
		t.Fatal(err)
	}
	reads(t, 2)
	if err := DropCard(context.Background(), st, "c4", "test", "no", time.Unix(1e9, 0)); err != nil {
		t.Fatal(err)
	}
	reads(t, 3)
}

// A read that fails part way is an error and leaves nothing of itself
// behind: the next read that succeeds sees the whole new state, and the
// failing record is not remembered as absent.
func TestLedgerKeepsNothingOfAReadThatFailed(t *testing.T) {
	st := newCounting(t)
	base, err := st.AddCommit(memstore.Commit{Message: "base"})
	if err != nil {
		t.Fatal(err)
	}
	var l ledger
	for i := range 3 {
		addCard(t, st.Store, fmt.Sprintf("c%d", i), base)
		addJob(t, st, fmt.Sprintf("c%d", i), 1)
	}
	if _, err := l.Jobs(st); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Queue(st); err != nil {
		t.Fatal(err)
	}
	addJob(t, st, "c3", 1)
	addJob(t, st, "c4", 1)
	addCard(t, st.Store, "c3", base)
	addCard(t, st.Store, "c4", base)
	st.fail.Store("c4")
	if _, err := l.Jobs(st); err == nil {
		t.Fatal("a jobs read that failed part way returned no error")
	}
	if _, err := l.Queue(st); err == nil {
		t.Fatal("a queue read that failed part way returned no error")
	}
	// Twice: the tip the failed read saw must not count as read.
	if _, err := l.Jobs(st); err == nil {
		t.Fatal("a jobs read that failed twice returned no error the second time")
	}
	st.fail.Store("")
	jobs, err := l.Jobs(st)
	if err != nil {
		t.Fatal(err)
	}
	queue, err := l.Queue(st)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 5 || len(queue) != 5 {
		t.Fatalf("after the failure: %d jobs and %d cards, want 5 and 5", len(jobs), len(queue))
	}
}

// What the ledger hands out is the caller's to change: the next look is
// not changed by it.
func TestLedgerHandsOutCopies(t *testing.T) {
	st := newCounting(t)
	addJob(t, st, "c0", 1)
	var l ledger
	jobs, err := l.Jobs(st)
	if err != nil {
		t.Fatal(err)
	}
	jobs[0].Label = "changed"
	again, err := l.Jobs(st)
	if err != nil {
		t.Fatal(err)
	}
	if again[0].Label != "c0" {
		t.Fatalf("a caller's change reached the cache: %q", again[0].Label)
	}
}

// A store that names no tree ids is parsed every time.
func TestMemoizedParsesAZeroIDEveryTime(t *testing.T) {
	var m memo
	n := 0
	for range 2 {
		if _, err := memoized(&m, "p", oid.ID{}, func() (int, error) { n++; return n, nil }); err != nil {
			t.Fatal(err)
		}
		m.keep()
	}
	if n != 2 {
		t.Fatalf("parsed %d times, want 2", n)
	}
}

// Workers of one supervisor share its ledger while jobs are recorded.
func TestLedgerIsSafeForConcurrentUse(t *testing.T) {
	st := newCounting(t)
	var l ledger
	done := make(chan struct{})
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			for {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				if _, err := l.Jobs(st); err != nil {
					errs <- err
					return
				}
				ctl, _, err := l.Control(st)
				if err != nil {
					errs <- err
					return
				}
				if _, err := l.summary(st, ctl); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := range 20 {
		addJob(t, st, fmt.Sprintf("c%d", i%7), i/7+1)
	}
	close(done)
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	jobs, err := l.Jobs(st)
	if err != nil || len(jobs) != 20 {
		t.Fatalf("%d jobs, %v; want 20", len(jobs), err)
	}
}

// The model of the rule labelJobs.summarize applies, over the whole
// list of jobs sorted by label, then attempt (as Jobs gives them):
// written apart from it, as the swarm said it before the look's summary.
func modelOutcomes(jobs []Job, c *Control) map[string]Job {
	out := map[string]Job{}
	for _, j := range jobs {
		if j.Stopped || j.Retry || (c != nil && j.Attempt <= c.Requeued[j.Label].After) {
			continue
		}
		if prev, ok := out[j.Label]; !ok || j.Attempt > prev.Attempt {
			out[j.Label] = j
		}
	}
	return out
}

func modelRetries(jobs []Job, c *Control) map[string]time.Time {
	latest := map[string]Job{}
	for _, j := range jobs {
		if c != nil && j.Attempt <= c.Requeued[j.Label].After {
			continue
		}
		if prev, ok := latest[j.Label]; !ok || j.Attempt > prev.Attempt {
			latest[j.Label] = j
		}
	}
	out := map[string]time.Time{}
	for label, j := range latest {
		if j.Retry {
			t, _ := time.Parse(stamp, j.RetryAfter)
			out[label] = t
		}
	}
	return out
}

// agree fails t unless sum, and Outcomes, are what the model and the
// highest attempt of each label make of jobs under ctl.
func agree(t *testing.T, sum *jobSummary, jobs []Job, ctl *Control) {
	t.Helper()
	got := map[string]Job{}
	for label, j := range sum.outcomes {
		got[label] = *j
	}
	attempts := map[string]int{}
	for _, j := range jobs {
		attempts[j.Label] = max(attempts[j.Label], j.Attempt)
	}
	want := modelOutcomes(jobs, ctl)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("outcomes\n%+v\nwant\n%+v", got, want)
	}
	if o := Outcomes(jobs, ctl); !reflect.DeepEqual(o, want) {
		t.Errorf("Outcomes\n%+v\nwant\n%+v", o, want)
	}
	if want := modelRetries(jobs, ctl); !reflect.DeepEqual(sum.retries, want) {
		t.Errorf("retries %v, want %v", sum.retries, want)
	}
	if !reflect.DeepEqual(sum.attempts, attempts) {
		t.Errorf("attempts %v, want %v", sum.attempts, attempts)
	}
}

// The look's summary, derived per label, and Outcomes over the whole list
// agree with the rule's model, on generated jobs: attempts out of order (as the
// records' names sort: 10-… before 2-…), ties, stopped and retried
// attempts, and requeues past some of them.
func TestTheLooksSummaryAgreesWithOutcomes(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 26))
	base := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	for round := range 500 {
		ctl := &Control{Requeued: map[string]Requeue{}}
		var ljs []*labelJobs
		for l := range 1 + rng.IntN(6) {
			lj := &labelJobs{label: fmt.Sprintf("c%d", l)}
			for range rng.IntN(5) {
				j := Job{Label: lj.label, Attempt: 1 + rng.IntN(12), Nonce: fmt.Sprint(rng.IntN(1000)),
					Stopped: rng.IntN(5) == 0, Retry: rng.IntN(4) == 0, End: EndDone, Result: VerdictOK}
				if j.Retry {
					j.RetryAfter = base.Add(time.Duration(rng.IntN(100)) * time.Second).Format(stamp)
				}
				lj.jobs = append(lj.jobs, j)
			}
			if rng.IntN(2) == 0 {
				slices.SortStableFunc(lj.jobs, func(a, b Job) int {
					return strings.Compare(fmt.Sprintf("%d-%s", a.Attempt, a.Nonce), fmt.Sprintf("%d-%s", b.Attempt, b.Nonce))
				})
			}
			if rng.IntN(3) == 0 {
				ctl.Requeued[lj.label] = Requeue{Card: lj.label, After: rng.IntN(8)}
			}
			ljs = append(ljs, lj)
		}
		// The model and Outcomes read the list sorted by label, then
		// attempt, as Jobs gives it.
		agree(t, summarize(ljs, ctl), flatten(ljs), ctl)
		if t.Failed() {
			t.Fatalf("round %d", round)
		}
	}
}

// A read keeps what it saw and parsed, and drops what is no longer there;
// a read that failed part way changes nothing of what the last complete
// read left, whatever it marked.
func TestMemoKeepsWhatTheLastCompleteReadSaw(t *testing.T) {
	var m memo
	parsed := 0
	read := func(paths ...string) {
		for _, p := range paths {
			id := oid.MustParse(fmt.Sprintf("%040x", len(p)))
			if p == "changed" {
				id = oid.MustParse(fmt.Sprintf("%040x", 99))
			}
			if _, err := memoized(&m, p, id, func() (string, error) { parsed++; return p, nil }); err != nil {
				t.Fatal(err)
			}
		}
	}
	read("a", "bb", "ccc")
	m.keep()
	read("a", "bb") // fails before ccc
	m.drop()
	read("a", "bb", "ccc")
	m.keep()
	if parsed != 3 || len(m.cur) != 3 {
		t.Fatalf("after a failed read: %d parsed, %d remembered; want 3 and 3", parsed, len(m.cur))
	}
	read("a", "dddd")
	m.keep()
	if _, ok := m.cur["bb"]; ok || len(m.cur) != 2 || parsed != 4 {
		t.Fatalf("after bb and ccc went: %d remembered (%v), %d parsed", len(m.cur), m.cur, parsed)
	}
	read("a", "dddd", "changed")
	m.keep()
	read("a", "dddd", "changed")
	m.keep()
	if len(m.cur) != 3 || parsed != 5 {
		t.Fatalf("%d remembered, %d parsed; want 3 and 5", len(m.cur), parsed)
	}
}
