package swarm_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/refusal"
	"github.com/nwdes/nwdes/swarm"
)

// TestLeasesListEachLeaseWithItsStateAsTheReaderSeesIt: a one-shot
// reader sees its own process's lease live, a gone process's stranded
// and another host's held, each with the tip a release must name.
func TestLeasesListEachLeaseWithItsStateAsTheReaderSeesIt(t *testing.T) {
	dir := gittest.Init(t, false)
	st, err := openStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	me, err := swarm.Self("me")
	if err != nil {
		t.Fatal(err)
	}
	q := swarm.LeaseQuery{Store: st, Book: &swarm.Local{Store: st}, Here: me, Now: time.Now()}
	rows, err := swarm.Leases(ctx, q)
	if err != nil || rows == nil || len(rows) != 0 {
		t.Fatalf("no leases: %v, %v (want an empty list, not null)", rows, err)
	}
	gone := exec.Command("true")
	gone.Run()
	dead := me
	dead.PID = gone.Process.Pid
	other := me
	other.Host, other.Boot = "elsewhere", "another-boot"
	want := map[string]swarm.State{"mine": swarm.Live, "dead": swarm.Stranded, "theirs": swarm.Held}
	for label, h := range map[string]swarm.Holder{"mine": me, "dead": dead, "theirs": other} {
		if _, err := q.Book.Take(ctx, label, lease(h, label, time.Now(), time.Hour), takeFree); err != nil {
			t.Fatal(err)
		}
	}
	rows, err = swarm.Leases(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d: %+v", len(rows), len(want), rows)
	}
	for _, r := range rows {
		if r.State != want[r.Label] || r.Attempt != 1 || r.Tip.IsZero() {
			t.Errorf("%s: state %s attempt %d tip %s, want %s, 1 and a tip", r.Label, r.State, r.Attempt, r.Tip, want[r.Label])
		}
	}
}

func TestReleaseLeaseRefusesAHeldLeaseUnlessForcedAndNamesAMissingOne(t *testing.T) {
	dir := gittest.Init(t, false)
	st, err := openStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	me, _ := swarm.Self("me")
	other := me
	other.Host, other.Boot = "elsewhere", "another-boot"
	q := swarm.LeaseQuery{Store: st, Book: &swarm.Local{Store: st}, Here: me, Now: time.Now()}
	for label, h := range map[string]swarm.Holder{"mine": me, "theirs": other} {
		if _, err := q.Book.Take(ctx, label, lease(h, label, time.Now(), time.Hour), takeFree); err != nil {
			t.Fatal(err)
		}
	}
	for _, label := range []string{"mine", "theirs"} {
		if err := swarm.ReleaseLease(ctx, q, label, false); !isRefusal(err, refusal.LeaseHeld) {
			t.Errorf("release of %s without --force: %v, want LeaseHeld", label, err)
		}
	}
	if err := swarm.ReleaseLease(ctx, q, "nobody", true); !isRefusal(err, refusal.MissingFact) {
		t.Errorf("release of no lease: %v, want MissingFact", err)
	}
	if err := swarm.ReleaseLease(ctx, q, "theirs", true); err != nil {
		t.Fatal(err)
	}
	rows, err := swarm.Leases(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Label != "mine" {
		t.Fatalf("after releasing theirs: %+v", rows)
	}
}

// TestReadStatusSortsTheQueueFromTheControlRecords: a dropped card is
// listed as dropped, not queued; the stop records are sorted; the report
// is written with the keys swarm status --json has always had, in order.
func TestReadStatusSortsTheQueueFromTheControlRecords(t *testing.T) {
	dir := gittest.Init(t, false)
	st, err := openStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	me, _ := swarm.Self("me")
	q := swarm.LeaseQuery{Store: st, Book: &swarm.Local{Store: st}, Here: me, Now: time.Now()}
	empty, err := swarm.ReadStatus(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(empty)
	if err != nil {
		t.Fatal(err)
	}
	const wantEmpty = `{"blocked":{},"dropped":[],"jobs":[],"leases":[],"lineage":[],"lineage_left_out":0,"queued":[],"spent":{},"spent_jobs":0,"stopped":[]}`
	if string(b) != wantEmpty {
		t.Errorf("empty report:\n%s\nwant\n%s", b, wantEmpty)
	}
	labels := queue(t, st, dir, 3, "st")
	if err := swarm.DropCard(ctx, st, labels[1], "tester", "done by hand", time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, card := range []string{labels[2], "all"} {
		if err := swarm.SetStop(ctx, st, swarm.Stop{Card: card, At: time.Now().UTC().Format(time.RFC3339Nano), By: "tester"}); err != nil {
			t.Fatal(err)
		}
	}
	r, err := swarm.ReadStatus(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{labels[0], labels[2]}; !slices.Equal(r.Queued, want) {
		t.Errorf("queued %v, want %v", r.Queued, want)
	}
	if want := []string{labels[1]}; !slices.Equal(r.Dropped, want) {
		t.Errorf("dropped %v, want %v", r.Dropped, want)
	}
	if want := []string{"all", labels[2]}; !slices.Equal(r.Stopped, want) {
		t.Errorf("stopped %v, want %v", r.Stopped, want)
	}
	if len(r.Jobs) != 0 || r.SpentJobs != 0 || len(r.Leases) != 0 {
		t.Errorf("no job ran: %+v", r)
	}
	if b, _ := json.Marshal(r); !strings.Contains(string(b), `"queued":["st00","st02"]`) {
		t.Errorf("report: %s", b)
	}
}
