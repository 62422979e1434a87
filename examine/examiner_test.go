package examine_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/gitstore/memstore"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/refusal"
)

const threeRows = "# REQUEST\nr\n# ACCEPTANCE CRITERIA\nE1. one\nE2. two\nE3. three\n"

func setup(t *testing.T, contract string) (string, *examine.Examiner) {
	t.Helper()
	dir := gittest.Init(t, false)
	commitContract(t, dir, contract)
	loc, err := gitrepo.Discover(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := gitstore.Open(loc, gitstore.Options{Registry: gitstore.MustRegistry(examine.Register)})
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	return dir, &examine.Examiner{Store: st, Now: func() time.Time { clock = clock.Add(time.Second); return clock }}
}

// memSetup is setup in memory, for what is not about git: the candidate
// and the records are kept by memstore.
func memSetup(t *testing.T, contract string) *examine.Examiner {
	t.Helper()
	st, err := memstore.New(memstore.Options{Registry: gitstore.MustRegistry(examine.Register)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddCommit(memstore.Commit{Files: map[string][]byte{".nwave/features/f.md": []byte(contract)}, Message: "contract"}); err != nil {
		t.Fatal(err)
	}
	clock := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	return &examine.Examiner{Store: st, Now: func() time.Time { clock = clock.Add(time.Second); return clock }}
}

func commitContract(t *testing.T, dir, contract string) {
	gittest.WriteFile(t, dir, ".nwave/features/f.md", contract)
	gittest.Git(t, dir, "add", "-A")
	gittest.Git(t, dir, "commit", "-q", "-m", "contract")
}

var tg = examine.Target{Feature: "f"}

// okFor returns a checker that fails t on an error and passes the result on.
func okFor(t *testing.T) func(*examine.Result, error) *examine.Result {
	return func(res *examine.Result, err error) *examine.Result {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
}

func TestObservationTextIsKeptByteForByteThroughClose(t *testing.T) {
	must := okFor(t)
	x := memSetup(t, "# REQUEST\nr\n# ACCEPTANCE CRITERIA\nE1. one\n")
	ctx := context.Background()
	must(x.Open(ctx, tg, false))
	texts := [][]byte{{}, []byte("crlf\r\nend\r\n"), []byte("trailing\n\n\n"), []byte("ticks ```` and `"), []byte("ünïcødé ✓")}
	var ids []examine.ObservationID
	for _, txt := range texts {
		ids = append(ids, examine.ObservationID(must(x.AddObservation(ctx, tg, examine.SourceExaminer, txt)).Message))
	}
	if ids[0] != "O1" || ids[4] != "O5" {
		t.Fatalf("ids = %v", ids)
	}
	must(x.SetVerdict(ctx, tg, examine.VerdictInput{Expectation: "E1", Verdict: examine.Met, Observations: ids}))
	ex, _, err := x.Close(ctx, tg, "accepted", "d")
	if err != nil {
		t.Fatal(err)
	}
	r, _ := examine.NewReader(x.Store)
	got, err := r.At(plumbingHash(ex.Candidate), "f")
	if err != nil || got == nil {
		t.Fatalf("read back: %v", err)
	}
	for i, c := range got.Rows[0].Cites {
		if !bytes.Equal(got.Texts[c].Text, texts[i]) {
			t.Fatalf("text %d = %q, want %q", i, got.Texts[c].Text, texts[i])
		}
	}
}

func TestRemovedIDsAreNeverReissuedAndCitationsOfThemDangle(t *testing.T) {
	must := okFor(t)
	x := memSetup(t, "# REQUEST\nr\n# ACCEPTANCE CRITERIA\nE1. one\n")
	ctx := context.Background()
	must(x.Open(ctx, tg, false))
	must(x.AddObservation(ctx, tg, examine.SourceExaminer, []byte("a")))
	must(x.AddObservation(ctx, tg, examine.SourceExaminer, []byte("b")))
	must(x.SetVerdict(ctx, tg, examine.VerdictInput{Expectation: "E1", Verdict: examine.Met, Observations: []examine.ObservationID{"O2"}}))
	must(x.RemoveObservation(ctx, tg, examine.Selector{ID: "O2"}))
	if id := must(x.AddObservation(ctx, tg, examine.SourceExaminer, []byte("c"))).Message; id != "O3" {
		t.Fatalf("issued %s after removing O2, want O3", id)
	}
	_, _, err := x.Close(ctx, tg, "accepted", "d")
	if !refusal.Named(err, "DanglingReference") || !strings.Contains(err.Error(), "E1 cites O2") {
		t.Fatalf("err = %v", err)
	}
	if _, ex, _ := x.Show("f"); ex != nil {
		t.Fatal("a refused close published something")
	}
	must(x.SetObservation(ctx, tg, examine.Selector{At: 1}, []byte("a2")))
	d, _, _ := x.Show("f")
	if string(d.Observations[0].Text) != "a2" || d.Observations[0].ID != "O1" {
		t.Fatalf("set --at 1 changed %+v", d.Observations[0])
	}
}

func TestADroppedExpectationWithdrawsOnlyItsVerdict(t *testing.T) {
	must := okFor(t)
	dir, x := setup(t, threeRows)
	ctx := context.Background()
	must(x.Open(ctx, tg, false))
	must(x.AddObservation(ctx, tg, examine.SourceExaminer, []byte("seen")))
	for _, e := range []examine.ExpectationID{"E1", "E2", "E3"} {
		must(x.SetVerdict(ctx, tg, examine.VerdictInput{Expectation: e, Verdict: examine.Met, Observations: []examine.ObservationID{"O1"}}))
	}
	commitContract(t, dir, "# REQUEST\nr changed\n# ACCEPTANCE CRITERIA\nE1. one\nE3. three\nE4. four\n")
	res := must(x.Retarget(ctx, tg))
	if len(res.Notices) != 2 || res.Notices[0] != "examination.E2 withdrawn: expectations.rows[1] (E2) was withdrawn." ||
		!strings.Contains(res.Notices[1], "1 observation was made at another commit") {
		t.Fatalf("notices = %q", res.Notices)
	}
	d, _, _ := x.Show("f")
	if len(d.Verdicts) != 2 || d.Verdicts[0].Expectation != "E1" || d.Verdicts[1].Expectation != "E3" {
		t.Fatalf("verdicts = %+v", d.Verdicts)
	}
	_, _, err := x.Close(ctx, tg, "accepted", "d")
	if !refusal.Named(err, "PartInvalid") || !strings.Contains(err.Error(), "E4") {
		t.Fatalf("close must still need the whole current set: %v", err)
	}
}

func TestOpenFromCurrentRebuildsTheDraftFromPublishedText(t *testing.T) {
	must := okFor(t)
	x := memSetup(t, threeRows)
	ctx := context.Background()
	must(x.Open(ctx, tg, false))
	for _, s := range []string{"zero", "shared", "unused", "third"} {
		must(x.AddObservation(ctx, tg, examine.SourceExaminer, []byte(s)))
	}
	must(x.SetVerdict(ctx, tg, examine.VerdictInput{Expectation: "E3", Verdict: examine.Met, Observations: []examine.ObservationID{"O4", "O2"}}))
	must(x.SetVerdict(ctx, tg, examine.VerdictInput{Expectation: "E1", Verdict: examine.Met, Observations: []examine.ObservationID{"O2"}}))
	must(x.SetVerdict(ctx, tg, examine.VerdictInput{Expectation: "E2", Verdict: examine.Unmet, Class: "unstable", Observations: []examine.ObservationID{"O1"}}))
	ex, _, err := x.Close(ctx, tg, "accepted", "first")
	if err != nil || ex.Outcome != examine.Rejected {
		t.Fatalf("close: %v, %v", ex, err)
	}
	must(x.Open(ctx, tg, true))
	d, _, _ := x.Show("f")
	var got []string
	for _, o := range d.Observations {
		got = append(got, string(o.ID)+"="+string(o.Text))
	}
	// Taken in first-citation order over E1, E2, E3 (O2, O1, O4), each
	// keeping its ID; a draft lists its observations by ID.
	if strings.Join(got, " ") != "O1=zero O2=shared O4=third" {
		t.Fatalf("rebuilt observations %v: want the cited texts, with the IDs they had, by ID", got)
	}
	if d.NextID != 5 {
		t.Fatalf("next_id %d: a rebuilt draft must not reissue the uncited O3", d.NextID)
	}
	must(x.SetVerdict(ctx, tg, examine.VerdictInput{Expectation: "E2", Verdict: examine.Met, Observations: []examine.ObservationID{"O1"}}))
	ex2, _, err := x.Close(ctx, tg, "accepted", "second")
	if err != nil || ex2.Outcome != examine.Accepted || ex2.Path == ex.Path {
		t.Fatalf("second close: %+v, %v", ex2, err)
	}
}
