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
	"testing"
	"time"

	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/swarm"
)

func lease(h swarm.Holder, label string, at time.Time, until time.Duration) *swarm.Lease {
	return &swarm.Lease{Label: label, Holder: h, Nonce: fmt.Sprint(at.UnixNano()), Attempt: 1, Attest: "00",
		Taken: at.UTC().Format(time.RFC3339Nano), Heartbeat: at.UTC().Format(time.RFC3339Nano),
		Until: at.Add(until).UTC().Format(time.RFC3339Nano)}
}

func TestEveryLeaseStateAsTheRuleDecidesIt(t *testing.T) {
	me, err := swarm.Self("me")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	// A process of this host that is gone: a finished child.
	gone := exec.Command("true")
	gone.Run()
	dead := me
	dead.PID = gone.Process.Pid
	reused := me
	reused.Start++ // the same pid, another process
	other := me
	other.Host, other.Boot = "elsewhere", "another-boot"
	rebooted := me
	rebooted.Boot = "an-earlier-boot"
	for name, c := range map[string]struct {
		l         *swarm.Lease
		unchanged time.Duration
		want      swarm.State
	}{
		"no lease":                                                {nil, 0, swarm.Free},
		"this process, within its time":                           {lease(me, "a", now, time.Hour), 0, swarm.Live},
		"this process, past its time":                             {lease(me, "a", now.Add(-2*time.Hour), time.Hour), 0, swarm.Drift},
		"a process of this host that is gone":                     {lease(dead, "a", now, time.Hour), 0, swarm.Stranded},
		"a pid now another process's":                             {lease(reused, "a", now, time.Hour), 0, swarm.Stranded},
		"another host, just seen":                                 {lease(other, "a", now.Add(-time.Minute), time.Hour), 0, swarm.Held},
		"another host, unchanged for 9m":                          {lease(other, "a", now.Add(-time.Minute), time.Hour), 9 * time.Minute, swarm.Held},
		"another host, unchanged for 11m":                         {lease(other, "a", now, time.Hour), 11 * time.Minute, swarm.Stale},
		"another host whose clock is 11m behind, just seen":       {lease(other, "a", now.Add(-11*time.Minute), time.Hour), 0, swarm.Held},
		"another host whose clock is 1h ahead, just seen":         {lease(other, "a", now.Add(time.Hour), time.Hour), 0, swarm.Held},
		"another host whose clock is 1h ahead, unchanged for 11m": {lease(other, "a", now.Add(time.Hour), time.Hour), 11 * time.Minute, swarm.Stale},
		"this host before a reboot, just seen":                    {lease(rebooted, "a", now.Add(-time.Hour), time.Hour), 0, swarm.Held},
		"unreadable, unchanged for a minute":                      {&swarm.Lease{}, time.Minute, swarm.Held},
		"unreadable, unchanged for 11 minutes":                    {&swarm.Lease{}, 11 * time.Minute, swarm.Stale},
		"another host, heartbeat not a time":                      {&swarm.Lease{Holder: other, Heartbeat: "soon"}, 0, swarm.Held},
	} {
		if got := swarm.StateOf(c.l, c.unchanged, me, now, 0); got != c.want {
			t.Errorf("%s: %s, want %s", name, got, c.want)
		}
	}
	for s, want := range map[swarm.State]bool{swarm.Free: true, swarm.Stranded: true, swarm.Stale: true, swarm.Live: false, swarm.Drift: false, swarm.Held: false} {
		if s.Takeable() != want {
			t.Errorf("%s takeable: %v", s, !want)
		}
	}
}

func TestAWatchMeasuresHowLongALeaseStoodStillByTheReadersClockAlone(t *testing.T) {
	clock := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	w := &swarm.Watch{Now: func() time.Time { return clock }}
	other := swarm.Holder{Owner: "x", Host: "elsewhere", Boot: "b", PID: 1, Start: 1}
	behind := lease(other, "a", clock.Add(-time.Hour), time.Hour) // its clock an hour behind ours
	if d := w.Unchanged("a", behind, time.Time{}); d != 0 {
		t.Errorf("first sight: unchanged for %v, want 0", d)
	}
	clock = clock.Add(4 * time.Minute)
	if d := w.Unchanged("a", behind, time.Time{}); d != 4*time.Minute {
		t.Errorf("the same heartbeat 4m later: unchanged for %v", d)
	}
	renewed := *behind
	renewed.Heartbeat = clock.Add(-time.Hour).Format(time.RFC3339Nano)
	clock = clock.Add(time.Minute)
	if d := w.Unchanged("a", &renewed, time.Time{}); d != 0 {
		t.Errorf("a renewed heartbeat: unchanged for %v, want 0", d)
	}
	clock = clock.Add(11 * time.Minute)
	if d := w.Unchanged("a", &renewed, time.Time{}); d != 11*time.Minute {
		t.Errorf("11m after the renewal: unchanged for %v", d)
	}
	written := clock.Add(-time.Hour)
	if d := w.Unchanged("b", nil, written); d != 0 {
		t.Errorf("an unreadable lease, first sight: %v", d)
	}
	clock = clock.Add(time.Minute)
	if d := w.Unchanged("b", nil, written); d != time.Minute {
		t.Errorf("an unreadable lease whose ref did not move: unchanged for %v", d)
	}
	if d := w.Unchanged("b", nil, written.Add(time.Second)); d != 0 {
		t.Errorf("an unreadable lease whose ref moved: unchanged for %v", d)
	}
}

func takeFree(cur *swarm.Lease, _ error, _ time.Time) error {
	if cur != nil {
		return swarm.ErrNotTaken
	}
	return nil
}

func TestOfManyTakersOfOneLocalLeaseExactlyOneWins(t *testing.T) {
	dir := gittest.Init(t, false)
	st, err := openStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	me, _ := swarm.Self("me")
	book := &swarm.Local{Store: st}
	const n = 8
	var wg sync.WaitGroup
	won := make([]bool, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := book.Take(context.Background(), "one", lease(me, "one", time.Now(), time.Hour), takeFree)
			switch {
			case err == nil:
				won[i] = true
			case !errors.Is(err, swarm.ErrNotTaken):
				t.Errorf("taker %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	winners := 0
	for _, w := range won {
		if w {
			winners++
		}
	}
	if winners != 1 {
		t.Fatalf("%d takers hold the lease", winners)
	}
}

func TestRenewalsAndReleaseCheckTheHolderAndLeaveNoHistory(t *testing.T) {
	dir := gittest.Init(t, false)
	st, _ := openStore(dir)
	defer st.Close()
	me, _ := swarm.Self("me")
	book := &swarm.Local{Store: st}
	ctx := context.Background()
	l := lease(me, "card", time.Now(), time.Hour)
	tip, err := book.Take(ctx, "card", l, takeFree)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		l.Heartbeat = time.Now().UTC().Format(time.RFC3339Nano)
		if tip, err = book.Renew(ctx, "card", tip, l); err != nil {
			t.Fatal(err)
		}
	}
	if n := gittest.Git(t, dir, "rev-list", "--count", "refs/nwdes-local/swarm/leases/card"); n != "1" {
		t.Fatalf("50 heartbeats left %s commits to walk", n)
	}
	// Another taking (a forced release, then a new holder): the first
	// holder's renewal and release are refused.
	other := lease(me, "card", time.Now(), time.Hour)
	other.Nonce = "other"
	if _, err := book.Take(ctx, "card", other, func(*swarm.Lease, error, time.Time) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := book.Renew(ctx, "card", tip, l); !errors.Is(err, swarm.ErrLost) {
		t.Fatalf("a renewal of a lost lease: %v", err)
	}
	if err := book.Release(ctx, "card", tip); !errors.Is(err, swarm.ErrLost) {
		t.Fatalf("a release of a lost lease: %v", err)
	}
	entries, _ := book.List(ctx)
	if len(entries) != 1 || entries[0].Lease.Nonce != "other" {
		t.Fatalf("leases: %+v", entries)
	}
	if err := book.Release(ctx, "card", entries[0].Tip); err != nil {
		t.Fatal(err)
	}
	if entries, _ := book.List(ctx); len(entries) != 0 {
		t.Fatalf("a released lease is listed: %+v", entries)
	}
}

func TestAStopRecordEndsARunningJobAndLeavesItsCardQueued(t *testing.T) {
	requireWall(t)
	dir := gittest.Init(t, false)
	st, _ := openStore(dir)
	defer st.Close()
	queue(t, st, dir, 1, "long")
	w := parseWorker(t, harness(t, t.TempDir(), "trap '' TERM; sleep 300", "10m"))
	sup, _ := supervisor(st, w, "")
	started := make(chan struct{}, 1)
	sup.Events = func(e swarm.Event) {
		if e.Kind == swarm.EventStarted {
			started <- struct{}{}
		}
	}
	done := make(chan error, 1)
	go func() { _, err := sup.Run(context.Background()); done <- err }()
	select {
	case <-started:
	case <-time.After(20 * time.Second):
		t.Fatal("the job never started")
	}
	if err := swarm.SetStop(context.Background(), st, swarm.Stop{Card: "all", At: time.Now().UTC().Format(time.RFC3339Nano), By: "me", Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the supervisor did not honour the stop")
	}
	jobs, _ := swarm.Jobs(st)
	if len(jobs) != 1 || !jobs[0].Stopped || jobs[0].Survivors != 0 {
		t.Fatalf("a stopped job: %+v", jobs)
	}
	if err := swarm.ClearStop(context.Background(), st, ""); err != nil {
		t.Fatal(err)
	}
	// The card is still to run: a stopped job does not finish it.
	quick := parseWorker(t, harness(t, t.TempDir(), "", "1m"))
	sup2, _ := supervisor(st, quick, "")
	if _, err := sup2.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	jobs, _ = swarm.Jobs(st)
	if len(jobs) != 2 || jobs[1].Attempt != 2 || jobs[1].Result != "ok" {
		t.Fatalf("after resume: %+v", jobs)
	}
}

func TestReapKeepsAHeldAttemptAndRemovesAnOrphanedOne(t *testing.T) {
	dir := gittest.Init(t, false)
	st, _ := openStore(dir)
	defer st.Close()
	me, _ := swarm.Self("me")
	jobs := t.TempDir()
	book := &swarm.Local{Store: st}
	held := lease(me, "card", time.Now(), time.Hour)
	held.Nonce = "0123456789abcdef"
	if _, err := book.Take(context.Background(), "card", held, takeFree); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"card/1-0123456789abcdef", "card/2-fedcba9876543210", "card/not-a-job"} {
		if err := os.MkdirAll(filepath.Join(jobs, d, "repo"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r, err := swarm.Reap(context.Background(), st, book, jobs, me, 0, time.Now().Add(time.Minute), false)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Removed) != 1 || !strings.HasSuffix(r.Removed[0], "2-fedcba9876543210") || len(r.Kept) != 2 {
		t.Fatalf("reap: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(jobs, "card/1-0123456789abcdef")); err != nil {
		t.Fatal("the held attempt's directory was removed")
	}
}
