package examine_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/refusal"
	"github.com/nwdes/nwdes/sandbox"
)

const gateHead = "# REQUEST\nr\n# ACCEPTANCE CRITERIA\n"

var gateClock = func() time.Time { return time.Date(2026, 4, 1, 12, 0, 0, 0, time.UTC) }

// gateRepo makes a repository whose HEAD commits contract as feature f's
// contract, plus files, and returns it with a store over it.
func gateRepo(t *testing.T, contract string, files map[string]string) (string, *gitstore.Store) {
	t.Helper()
	dir := gittest.Init(t, false)
	gateCommit(t, dir, contract, files)
	return dir, openStore(t, dir)
}

func gateCommit(t *testing.T, dir, contract string, files map[string]string) string {
	t.Helper()
	if contract != "" {
		gittest.WriteFile(t, dir, ".nwave/features/f.md", contract)
	}
	for name, content := range files {
		gittest.WriteFile(t, dir, name, content)
	}
	gittest.Git(t, dir, "add", "-A")
	gittest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "change")
	return gittest.Git(t, dir, "rev-parse", "HEAD")
}

func newGates(t *testing.T, st *gitstore.Store) *examine.Gates {
	t.Helper()
	if err := sandbox.Available(true); err != nil {
		t.Skipf("this kernel cannot wall an oracle in: %v", err)
	}
	return &examine.Gates{
		Store:   st,
		Wall:    &sandbox.Wall{Path: "/usr/bin:/bin", TempRoot: t.TempDir(), Grace: 300 * time.Millisecond, Strict: true, Now: gateClock},
		Timeout: time.Minute,
		Now:     gateClock,
	}
}

func runGates(t *testing.T, g *examine.Gates) *examine.GateReport {
	t.Helper()
	rep, err := g.Run(context.Background(), examine.Target{Feature: "f"})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func row(t *testing.T, rep *examine.GateReport, id examine.ExpectationID) examine.GateRow {
	t.Helper()
	for _, r := range rep.Rows {
		if r.Expectation == id {
			return r
		}
	}
	t.Fatalf("no row %s in %+v", id, rep.Rows)
	return examine.GateRow{}
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func TestAMalformedContractRunsNothingAtAll(t *testing.T) {
	t.Parallel()
	// A job leaves nothing outside its own directory (not even in a
	// shared cache): that an oracle ran shows in its evidence only.
	oracle := "E1. the gate runs\n  CHECK: echo made\n  EXPECT: made\n"

	dir, st := gateRepo(t, gateHead+oracle, nil)
	g := newGates(t, st)
	if rep := runGates(t, g); row(t, rep, "E1").State != examine.GateMet {
		t.Fatalf("positive control: the well-formed oracle did not run (state %s)", row(t, rep, "E1").State)
	}

	cases := []struct{ name, tail, line string }{
		{"a CHECK without EXPECT", "E2. b\n  CHECK: true\n", ":8:"},
		{"an EXPECT without CHECK", "E2. b\n  EXPECT: ok\n", ":8:"},
		{"a duplicate attribute", "E2. b\n  CHECK: true\n  EXPECT: ok\n  EXPECT: ok\n", ":10:"},
		{"an unindented attribute", "E2. b\nCHECK: true\n", ":8:"},
		{"an unknown attribute", "E2. b\n  RUN: true\n", ":8:"},
		{"a duplicate E ID", "E1. again\n", ":7:"},
	}
	for _, c := range cases {
		gateCommit(t, dir, gateHead+oracle+c.tail, nil)
		before, _ := st.Tip(examine.GateRef)
		_, err := g.Run(context.Background(), examine.Target{Feature: "f"})
		if !refusal.Named(err, "ConfigurationMalformed") || !strings.Contains(err.Error(), "f.md"+c.line) {
			t.Fatalf("%s: err = %v, want ConfigurationMalformed naming line %s", c.name, err, c.line)
		}
		if after, _ := st.Tip(examine.GateRef); after != before {
			t.Fatalf("%s: evidence was recorded for a malformed contract", c.name)
		}
	}
}

func TestANonZeroExitIsNotMetEvenWhenItPrintsTheMarker(t *testing.T) {
	t.Parallel()
	_, st := gateRepo(t, gateHead+"E1. a\n  CHECK: echo PASS; exit 1\n  EXPECT: PASS\n", nil)
	rep := runGates(t, newGates(t, st))
	r := row(t, rep, "E1")
	ev := r.Evidence
	if r.State != examine.GateNotMet || ev.ExitStatus != 1 || !ev.MarkerFound || ev.End != sandbox.EndExit {
		t.Fatalf("state %s, evidence %+v", r.State, ev)
	}
	if !strings.Contains(r.Note, "non-zero exit never passes") || rep.Passed() {
		t.Fatalf("note %q, passed %v", r.Note, rep.Passed())
	}
}

func TestAMarkerOnStderrOnlyIsNotMet(t *testing.T) {
	t.Parallel()
	_, st := gateRepo(t, gateHead+"E1. a\n  CHECK: echo PASS >&2\n  EXPECT: PASS\n", nil)
	r := row(t, runGates(t, newGates(t, st)), "E1")
	if r.State != examine.GateNotMet || r.Evidence.ExitStatus != 0 || r.Evidence.MarkerFound || !r.Evidence.MarkerOnStderr {
		t.Fatalf("state %s, evidence %+v", r.State, r.Evidence)
	}
	if r.Note != "exit 0, marker only on stderr, which does not count" {
		t.Fatalf("note %q", r.Note)
	}
}

func TestStatusReflectsTheRunNeverExecutesAndGoesStaleOnANewCommit(t *testing.T) {
	t.Parallel()
	contract := gateHead + "E1. a\n  CHECK: echo PASS\n  EXPECT: PASS\nE2. b\n  CHECK: echo nope\n  EXPECT: PASS\nE3. c\n"
	dir, st := gateRepo(t, contract, nil)
	tg := examine.Target{Feature: "f"}

	rep, err := examine.GateStatus(st, tg)
	if err != nil {
		t.Fatal(err)
	}
	if r := row(t, rep, "E1"); r.State != examine.GatePending || !strings.HasPrefix(r.Note, "never run") {
		t.Fatalf("before any run: %+v", r)
	}

	run := runGates(t, newGates(t, st))
	if row(t, run, "E1").State != examine.GateMet {
		t.Fatalf("the run did not execute E1: %+v", row(t, run, "E1"))
	}
	tip, _ := st.Tip(examine.GateRef)
	rep, err = examine.GateStatus(st, tg)
	if err != nil {
		t.Fatal(err)
	}
	// GateStatus is given no wall: it has nothing to run an oracle with.
	if after, _ := st.Tip(examine.GateRef); after != tip {
		t.Fatal("gate status wrote to the store")
	}
	for _, id := range []examine.ExpectationID{"E1", "E2"} {
		got, want := row(t, rep, id), row(t, run, id)
		if got.State != want.State || got.EvidencePath != want.EvidencePath || got.Note != want.Note {
			t.Fatalf("%s: status %+v, run %+v", id, got, want)
		}
	}
	if rep.Rows[0].State != examine.GateMet || rep.Rows[1].State != examine.GateNotMet || len(rep.Rows) != 2 || rep.NoOracle[0] != "E3" {
		t.Fatalf("rows %+v without oracle %v", rep.Rows, rep.NoOracle)
	}

	old := rep.Candidate
	gateCommit(t, dir, "", map[string]string{"new.txt": "x\n"})
	rep, err = examine.GateStatus(st, tg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Rows {
		if r.State != examine.GatePending || r.StaleFor != old || !strings.HasPrefix(r.Note, "stale: evidence is for "+old[:12]) {
			t.Fatalf("after a new commit: %+v", r)
		}
	}
	if rep, err = examine.GateStatus(st, examine.Target{Feature: "f", Candidate: "HEAD~1"}); err != nil || rep.Rows[0].State != examine.GateMet {
		t.Fatalf("the old candidate keeps its evidence: %v %+v", err, rep)
	}
}

func TestStatusIgnoresEvidenceOfAnotherOracleAtTheSameCommit(t *testing.T) {
	t.Parallel()
	_, st := gateRepo(t, gateHead+"E1. a\n  CHECK: echo PASS\n  EXPECT: PASS\n",
		map[string]string{".nwave/other.md": gateHead + "E1. a\n  CHECK: echo PASS; true\n  EXPECT: PASS\n"})
	runGates(t, newGates(t, st))
	rep, err := examine.GateStatus(st, examine.Target{Feature: "f", Contract: ".nwave/other.md"})
	if err != nil {
		t.Fatal(err)
	}
	if r := row(t, rep, "E1"); r.State != examine.GatePending || !strings.Contains(r.Note, "ran another oracle") {
		t.Fatalf("row %+v", r)
	}
}

func TestATimeoutIsNotMetWithEndDeadlineAndEndsTheJob(t *testing.T) {
	t.Parallel()
	late := filepath.Join(t.TempDir(), "late")
	// A second, so that a loaded machine still prints the marker before
	// the deadline; the toucher sleeps past it.
	_, st := gateRepo(t, gateHead+"E1. a\n  CHECK: (sleep 2; touch "+late+") & echo PASS; sleep 30\n  EXPECT: PASS\n", nil)
	g := newGates(t, st)
	g.Timeout = time.Second
	start := time.Now()
	r := row(t, runGates(t, g), "E1")
	if r.State != examine.GateNotMet || r.Evidence.End != sandbox.EndDeadline || r.Evidence.TimeoutMS != 1000 || !r.Evidence.MarkerFound {
		t.Fatalf("state %s evidence %+v", r.State, r.Evidence)
	}
	if !strings.HasPrefix(r.Note, "deadline of 1s reached") {
		t.Fatalf("note %q", r.Note)
	}
	if took := time.Since(start); took > 15*time.Second {
		t.Fatalf("the run took %v after a 1s timeout", took)
	}
	time.Sleep(2500 * time.Millisecond)
	if exists(late) {
		t.Fatal("a background child of the timed-out oracle survived and wrote its file")
	}
}

func TestOraclesRunOnTheCommittedTreeNotTheWorkTree(t *testing.T) {
	t.Parallel()
	contract := gateHead + "E1. a\n  CHECK: cat data.txt; test ! -e untracked.txt && test -x tool.sh && test -L link && cat link && pwd\n  EXPECT: committed\n"
	dir, st := gateRepo(t, contract, map[string]string{"data.txt": "committed\n", "tool.sh": "#!/bin/sh\n"})
	if err := os.Chmod(filepath.Join(dir, "tool.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("data.txt", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "add", "-A")
	gittest.Git(t, dir, "commit", "-q", "-m", "tool and link")
	gittest.WriteFile(t, dir, "data.txt", "dirty\n")
	gittest.WriteFile(t, dir, "untracked.txt", "x\n")

	g := newGates(t, st)
	r := row(t, runGates(t, g), "E1")
	if r.State != examine.GateMet {
		t.Fatalf("state %s: %s\nstdout %q stderr %q", r.State, r.Note, r.Evidence.StdoutTail, r.Evidence.StderrTail)
	}
	out := string(r.Evidence.StdoutTail)
	if strings.Contains(out, "dirty") || out != "committed\ncommitted\n"+sandbox.FixedJobDir+"/work\n" {
		t.Fatalf("stdout %q", out)
	}
	if entries, _ := os.ReadDir(g.Wall.(*sandbox.Wall).TempRoot); len(entries) != 0 {
		t.Fatalf("exported trees were left behind: %v", entries)
	}
}

func TestEvidenceRecordsTheRunWithADigestOfTheWholeOutputAndABoundedTail(t *testing.T) {
	t.Parallel()
	_, st := gateRepo(t, gateHead+"E1. a\n  CHECK: echo PASS; i=0; while [ $i -lt 3000 ]; do echo line $i; i=$((i+1)); done\n  EXPECT: PASS\n", nil)
	g := newGates(t, st)
	g.Wall.(*sandbox.Wall).TailBytes = 512
	runGates(t, g)
	rep, err := examine.GateStatus(st, examine.Target{Feature: "f"})
	if err != nil {
		t.Fatal(err)
	}
	ev := row(t, rep, "E1").Evidence
	var want strings.Builder
	want.WriteString("PASS\n")
	for i := 0; i < 3000; i++ {
		want.WriteString("line " + strconv.Itoa(i) + "\n")
	}
	sum := sha256.Sum256([]byte(want.String()))
	if ev.Stdout.SHA256 != hex.EncodeToString(sum[:]) || ev.Stdout.Bytes != int64(want.Len()) {
		t.Fatalf("stdout digest %+v", ev.Stdout)
	}
	if len(ev.StdoutTail) != 512 || !strings.HasSuffix(want.String(), string(ev.StdoutTail)) || ev.Stdout.TailBytes != 512 {
		t.Fatalf("tail of %d bytes: %q", len(ev.StdoutTail), ev.StdoutTail[:20])
	}
	if ev.State != examine.GateMet || !ev.MarkerFound || ev.Check == "" || ev.Expect != "PASS" || ev.Candidate != rep.Candidate ||
		ev.StartedAt != "2026-04-01T12:00:00Z" || ev.TimeoutMS != 60000 || ev.ContractPath != ".nwave/features/f.md" {
		t.Fatalf("evidence %+v", ev)
	}
	if !strings.HasPrefix(ev.Path, "evidence/"+rep.Candidate[:2]+"/"+rep.Candidate[2:]+"/f/E1/20260401T120000.000000000Z-") {
		t.Fatalf("path %s", ev.Path)
	}
	fsck, err := st.Fsck()
	if err != nil || !fsck.OK() {
		t.Fatalf("fsck: %v %+v", err, fsck)
	}
}

func TestEveryRunExecutesAgainAndRecordsAgain(t *testing.T) {
	t.Parallel()
	_, st := gateRepo(t, gateHead+"E1. a\n  CHECK: cat /proc/sys/kernel/random/uuid; echo PASS\n  EXPECT: PASS\n", nil)
	g := newGates(t, st)
	clock := gateClock()
	g.Now = func() time.Time { clock = clock.Add(time.Second); return clock }
	first := row(t, runGates(t, g), "E1")
	second := row(t, runGates(t, g), "E1")
	if first.State != examine.GateMet || second.State != examine.GateMet || string(first.Evidence.StdoutTail) == string(second.Evidence.StdoutTail) {
		t.Fatalf("the oracle did not run twice: %q then %q", first.Evidence.StdoutTail, second.Evidence.StdoutTail)
	}
	if first.EvidencePath == second.EvidencePath || second.EvidencePath < first.EvidencePath {
		t.Fatalf("evidence paths %s then %s: want a new one that sorts last", first.EvidencePath, second.EvidencePath)
	}
	rep, _ := examine.GateStatus(st, examine.Target{Feature: "f"})
	if row(t, rep, "E1").EvidencePath != second.EvidencePath {
		t.Fatal("status does not read the newest evidence")
	}
}

func TestAbandonedCriteriaAreNotRunAndDoNotCount(t *testing.T) {
	t.Parallel()
	contract := gateHead + "E1. a\n  CHECK: echo PASS\n  EXPECT: PASS\nE2. b\n  CHECK: echo never\n  EXPECT: never\nABANDON: E2 needs hardware we lack\n"
	_, st := gateRepo(t, contract, nil)
	rep := runGates(t, newGates(t, st))
	r := row(t, rep, "E2")
	if r.Evidence != nil || r.State != examine.GateAbandoned || r.Abandoned != "needs hardware we lack" || rep.Passed() {
		t.Fatalf("row %+v passed %v", r, rep.Passed())
	}
	status, err := examine.GateStatus(st, examine.Target{Feature: "f"})
	if err != nil {
		t.Fatal(err)
	}
	if r := row(t, status, "E2"); r.State != examine.GateAbandoned || r.Note != "not run: needs hardware we lack" || status.Passed() {
		t.Fatalf("status row %+v passed %v", r, status.Passed())
	}
}

func TestOutcomesAreAddedToTheDraftAsGateObservations(t *testing.T) {
	t.Parallel()
	_, st := gateRepo(t, gateHead+"E1. a\n  CHECK: echo PASS\n  EXPECT: PASS\nE2. b\n", nil)
	x := &examine.Examiner{Store: st, Now: gateClock}
	ctx := context.Background()
	tg := examine.Target{Feature: "f"}

	if rep := runGates(t, newGates(t, st)); row(t, rep, "E1").Observation != "" {
		t.Fatal("an observation was added without a draft")
	}
	if _, err := x.Open(ctx, tg, false); err != nil {
		t.Fatal(err)
	}
	rep := runGates(t, newGates(t, st))
	r := row(t, rep, "E1")
	if r.Observation != "O1" {
		t.Fatalf("observation %q", r.Observation)
	}
	d, _, err := x.Show("f")
	if err != nil {
		t.Fatal(err)
	}
	o := d.Observations[0]
	text := string(o.Text)
	if o.Source != examine.SourceGate || !strings.HasPrefix(text, "gate E1 MET: exit 0, marker in stdout\ncheck: echo PASS\nexpect: PASS\ncandidate: "+rep.Candidate+"\n") ||
		!strings.Contains(text, "evidence: "+r.EvidencePath+"\n") || !strings.HasSuffix(text, "stdout:\nPASS\n") {
		t.Fatalf("observation %s (%s):\n%s", o.ID, o.Source, text)
	}
	if _, err := x.AddObservation(ctx, tg, examine.SourceExaminer, []byte("README read")); err != nil {
		t.Fatal(err)
	}
	for _, in := range []examine.VerdictInput{
		{Expectation: "E1", Verdict: examine.Met, Observations: []examine.ObservationID{"O1"}},
		{Expectation: "E2", Verdict: examine.Met, Observations: []examine.ObservationID{"O2"}},
	} {
		if _, err := x.SetVerdict(ctx, tg, in); err != nil {
			t.Fatal(err)
		}
	}
	ex, _, err := x.Close(ctx, tg, "accepted", "gate evidence cited like any observation")
	if err != nil || ex.Outcome != examine.Accepted || ex.Texts[0].Source != examine.SourceGate {
		t.Fatalf("close: %v %+v", err, ex)
	}
}

func TestARunAtABaseProvesAnOracleRedThenGreenAndNamesOneGreenAtBothVacuous(t *testing.T) {
	contract := gateHead + "E1. fixed\n  CHECK: cat fixed.txt\n  EXPECT: fixed\nE2. always\n  CHECK: cat always.txt\n  EXPECT: always\n"
	dir, st := gateRepo(t, contract, map[string]string{"always.txt": "always\n"})
	base := gittest.Git(t, dir, "rev-parse", "HEAD")
	gateCommit(t, dir, "", map[string]string{"fixed.txt": "fixed\n"})
	g := newGates(t, st)
	tick := gateClock()
	g.Now = func() time.Time { tick = tick.Add(time.Second); return tick }

	rep := runGates(t, g)
	if p := row(t, rep, "E1").Proof; p != examine.ProofUnproven {
		t.Fatalf("without a base, E1 is %q, want unproven", p)
	}
	g.Base = base
	rep = runGates(t, g)
	e1, e2 := row(t, rep, "E1"), row(t, rep, "E2")
	if e1.Proof != examine.ProofProven || e1.Evidence.Base.State != examine.GateNotMet || e1.Evidence.Base.Commit != base {
		t.Fatalf("E1: proof %q, base %+v; want proven over a NOT-MET run at %s", e1.Proof, e1.Evidence.Base, base)
	}
	if e2.Proof != examine.ProofVacuous || e2.Evidence.Base.State != examine.GateMet {
		t.Fatalf("E2: proof %q; want vacuous", e2.Proof)
	}
	if len(e1.Evidence.Base.StderrTail) == 0 {
		t.Fatal("the base run's output tail was not kept")
	}
	status, err := examine.GateStatus(st, examine.Target{Feature: "f"})
	if err != nil {
		t.Fatal(err)
	}
	if row(t, status, "E1").Proof != examine.ProofProven || row(t, status, "E2").Proof != examine.ProofVacuous {
		t.Fatalf("gate status reads %+v", status.Rows)
	}
	if string(row(t, status, "E1").Evidence.Base.StderrTail) != string(e1.Evidence.Base.StderrTail) {
		t.Fatal("the base run's tail did not read back")
	}
	if name, problem := examine.ProofRule("E2", row(t, status, "E2").Evidence); name != refusal.GateVacuous || !strings.Contains(problem, "vacuous") {
		t.Fatalf("ProofRule(E2) = %q, %q", name, problem)
	}
	if name, _ := examine.ProofRule("E1", row(t, status, "E1").Evidence); name != "" {
		t.Fatalf("ProofRule(E1) = %q for a proven oracle", name)
	}

	g.Base = "HEAD"
	if _, err := g.Run(context.Background(), examine.Target{Feature: "f"}); func() bool { rf, ok := refusal.As(err); return !ok || rf.Name != refusal.PartInvalid }() {
		t.Fatalf("--base the candidate itself: %v", err)
	}
}

func TestOraclesRunSideBySideKeepTheContractsOrderAndTheirOwnJobs(t *testing.T) {
	t.Parallel()
	contract := gateHead
	for i := 1; i <= 6; i++ {
		// Each writes in its own export and finds nothing another left;
		// the sleep lets runs overlap where Jobs allows it.
		contract += fmt.Sprintf("E%d. o\n  CHECK: test ! -e mark && echo %d > mark && sleep 0.5 && echo ok-%d\n  EXPECT: ok-%d\n", i, i, i, i)
	}
	contract += "ABANDON: E3 not here\n"
	_, st := gateRepo(t, contract, nil)
	for _, c := range []struct {
		name string
		jobs int
	}{{"four at a time", 4}, {"one at a time", 1}} {
		t.Run(c.name, func(t *testing.T) {
			g := newGates(t, st)
			g.Jobs = c.jobs
			var mu sync.Mutex
			started, ended := map[examine.ExpectationID]int{}, map[examine.ExpectationID]int{}
			running, peak := 0, 0
			g.Progress = func(r *examine.GateRow, done bool, _ time.Duration) {
				mu.Lock()
				defer mu.Unlock()
				if done {
					ended[r.Expectation]++
					running--
				} else {
					started[r.Expectation]++
					running++
					peak = max(peak, running)
				}
			}
			rep := runGates(t, g)
			if c.jobs == 1 && peak != 1 || c.jobs > 1 && peak < 2 || peak > c.jobs {
				t.Fatalf("at most %d oracles ran at once with Jobs %d", peak, c.jobs)
			}
			for i, r := range rep.Rows {
				id := examine.ExpectationID(fmt.Sprintf("E%d", i+1))
				if r.Expectation != id {
					t.Fatalf("row %d is %s, want %s: the contract's order", i, r.Expectation, id)
				}
				if id == "E3" {
					if r.State != examine.GateAbandoned || r.Evidence != nil || started[id] != 0 {
						t.Fatalf("the abandoned E3 ran: %+v", r)
					}
					continue
				}
				if r.State != examine.GateMet || string(r.Evidence.StdoutTail) != fmt.Sprintf("ok-%d\n", i+1) || started[id] != 1 || ended[id] != 1 {
					t.Fatalf("%s: %+v, %q, told %d/%d", id, r.State, r.Evidence.StdoutTail, started[id], ended[id])
				}
			}
			status, err := examine.GateStatus(st, examine.Target{Feature: "f"})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range status.Rows {
				if r.Expectation != "E3" && (r.State != examine.GateMet || r.EvidencePath != row(t, rep, r.Expectation).EvidencePath) {
					t.Fatalf("status of %s: %+v", r.Expectation, r)
				}
			}
		})
	}
}

// countedJobs makes jobs in a wall until its failAt-th, which it refuses,
// and keeps the most job directories its wall held when one was made.
type countedJobs struct {
	*sandbox.Wall
	mu     sync.Mutex
	made   int
	failAt int
	peak   int
}

func (c *countedJobs) NewJob() (*sandbox.Job, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.made++
	if c.made == c.failAt {
		return nil, errors.New("no room for a job")
	}
	j, err := c.Wall.NewJob()
	if err == nil {
		dirs, _ := os.ReadDir(c.Wall.TempRoot)
		c.peak = max(c.peak, len(dirs))
	}
	return j, err
}

func TestEveryJobIsRemovedBeforeTheRunReturnsAlsoWhenOneCannotBeMade(t *testing.T) {
	t.Parallel()
	contract := gateContract(5, "echo ok > left; echo ok")
	dir, st := gateRepo(t, contract, nil)
	base := gittest.Git(t, dir, "rev-parse", "HEAD")
	gateCommit(t, dir, "", map[string]string{"x": "y"})
	for _, c := range []struct {
		name   string
		jobs   int
		failAt int
	}{{"one at a time", 1, 0}, {"side by side", 3, 0}, {"one at a time, the fourth job refused", 1, 4}, {"side by side, the seventh job refused", 3, 7}} {
		t.Run(c.name, func(t *testing.T) {
			g := newGates(t, st)
			wall := g.Wall.(*sandbox.Wall)
			g.Wall, g.Jobs, g.Base = &countedJobs{Wall: wall, failAt: c.failAt}, c.jobs, base
			rep, err := g.Run(context.Background(), examine.Target{Feature: "f"})
			if c.failAt == 0 && (err != nil || !rep.Passed()) {
				t.Fatalf("%v %+v", err, rep)
			}
			if c.failAt != 0 && (err == nil || !strings.Contains(err.Error(), "no room for a job")) {
				t.Fatalf("the refused job is not the run's error: %v", err)
			}
			if left, _ := os.ReadDir(wall.TempRoot); len(left) != 0 {
				t.Fatalf("job directories left behind: %v", left)
			}
		})
	}
}

// With one oracle at a time nothing is made ahead; with more, at most one
// oracle beyond those running has its jobs.
func TestAtMostOneOracleMoreThanRunHasJobsMadeAhead(t *testing.T) {
	t.Parallel()
	contract := gateContract(8, "echo ok")
	dir, st := gateRepo(t, contract, nil)
	base := gittest.Git(t, dir, "rev-parse", "HEAD")
	gateCommit(t, dir, "", map[string]string{"x": "y"})
	for _, c := range []struct {
		name string
		jobs int
		base bool
	}{{"one at a time", 1, false}, {"three at a time", 3, false}, {"one at a time with a base", 1, true}, {"three at a time with a base", 3, true}} {
		t.Run(c.name, func(t *testing.T) {
			g := newGates(t, st)
			jobs := &countedJobs{Wall: g.Wall.(*sandbox.Wall)}
			g.Wall, g.Jobs = jobs, c.jobs
			perOracle := 1
			if c.base {
				g.Base, perOracle = base, 2
			}
			if rep := runGates(t, g); !rep.Passed() {
				t.Fatalf("%+v", rep.Rows)
			}
			ahead := 0
			if c.jobs > 1 {
				ahead = 1
			}
			if limit := (c.jobs + ahead) * perOracle; jobs.peak > limit {
				t.Fatalf("%d job directories at once, want at most %d: those running and, sharing the machine, the next oracle's", jobs.peak, limit)
			}
		})
	}
}

func TestAJobThatCannotBeMadeEndsTheRunAtOnce(t *testing.T) {
	t.Parallel()
	contract := gateHead + "E1. o\n  CHECK: sleep 30; echo ok\n  EXPECT: ok\nE2. o\n  CHECK: echo ok\n  EXPECT: ok\n"
	dir, st := gateRepo(t, contract, nil)
	base := gittest.Git(t, dir, "rev-parse", "HEAD")
	gateCommit(t, dir, "", map[string]string{"x": "y"})
	for _, c := range []struct {
		name   string
		jobs   int
		base   bool
		failAt int
		want   string
		told   []string // what Progress may be told; "E1 ended" never
	}{
		{"the next oracle's job ends the one running", 2, false, 2, "gate f E2: no room for a job", []string{"E1 started"}},
		{"the candidate's job refused: the oracle does not run at the base", 1, true, 2, "gate f E1: no room for a job", nil},
		{"the base's job refused", 1, true, 1, "gate f E1: at base " + base[:12] + ": no room for a job", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := newGates(t, st)
			g.Jobs = c.jobs
			g.Timeout = 10 * time.Second
			g.Wall = &countedJobs{Wall: g.Wall.(*sandbox.Wall), failAt: c.failAt}
			if c.base {
				g.Base = base
			}
			var mu sync.Mutex
			var told []string
			g.Progress = func(r *examine.GateRow, done bool, _ time.Duration) {
				mu.Lock()
				defer mu.Unlock()
				told = append(told, fmt.Sprintf("%s %s", r.Expectation, map[bool]string{false: "started", true: "ended"}[done]))
			}
			_, err := g.Run(context.Background(), examine.Target{Feature: "f"})
			if err == nil || err.Error() != c.want {
				t.Fatalf("got %v, want %s", err, c.want)
			}
			for _, s := range told {
				if !slices.Contains(c.told, s) {
					t.Fatalf("told %q: the run went on after its job could not be made", told)
				}
			}
		})
	}
}

// gateContract is gateHead with n expectations E1…En, each one oracle
// running check and expecting "ok".
func gateContract(n int, check string) string {
	contract := gateHead
	for i := 1; i <= n; i++ {
		contract += fmt.Sprintf("E%d. o\n  CHECK: %s\n  EXPECT: ok\n", i, check)
	}
	return contract
}

func TestAnOracleWaitingForASlotDoesNotStartOnceTheRunIsCanceled(t *testing.T) {
	t.Parallel()
	contract := gateContract(3, "sleep 0.2; echo ok")
	_, st := gateRepo(t, contract, nil)
	g := newGates(t, st)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var started []examine.ExpectationID
	g.Progress = func(r *examine.GateRow, done bool, _ time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		if !done {
			started = append(started, r.Expectation)
		} else if r.Expectation == "E1" {
			cancel()
		}
	}
	if _, err := g.Run(ctx, examine.Target{Feature: "f"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want the cancel", err)
	}
	if !slices.Equal(started, []examine.ExpectationID{"E1"}) {
		t.Fatalf("started %v after the cancel at E1's end", started)
	}
}

func TestOraclesSideBySideCallTheClockOneAtATime(t *testing.T) {
	t.Parallel()
	contract := gateContract(6, "sleep 0.2; echo ok")
	_, st := gateRepo(t, contract, nil)
	g := newGates(t, st)
	g.Jobs = 4
	calls := 0 // a stepping clock, unsafe for concurrent use
	g.Now = func() time.Time {
		calls++
		return gateClock().Add(time.Duration(calls) * time.Second)
	}
	rep := runGates(t, g)
	stamps := map[string]bool{}
	for _, r := range rep.Rows {
		stamp, _, _ := strings.Cut(path.Base(r.EvidencePath), "-")
		stamps[stamp] = true
	}
	if calls != 6 || len(stamps) != 6 {
		t.Fatalf("%d calls of the clock for 6 oracles, %d stamps: %v", calls, len(stamps), stamps)
	}
}

func TestOraclesOfALaneSeeNothingTheOneBeforeLeftAndRecordWhatTheirOwnHelpersWould(t *testing.T) {
	t.Parallel()
	contract := gateHead +
		"E1. leaves what it can\n  CHECK: (setsid sleep 3000 &); sleep 3001 & echo left > $TMPDIR/left; echo left > $HOME/left; echo left > left; ipcmk -Q >/dev/null && ipcmk -M 4096 >/dev/null && ipcmk -S 1 >/dev/null && echo ok\n  EXPECT: ok\n" +
		"E2. finds none of it\n  CHECK: n=0; ls -A $TMPDIR $HOME . | grep -q left && n=1; for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; done | grep -q '^sleep ' && n=$((n+2)); test \"$(ipcs -q -m -s | grep -c '^0x')\" = 0 || n=$((n+4)); echo clean-$n\n  EXPECT: clean-0\n" +
		"E3. its helper\n  CHECK: echo helper-$(sed 's/.*) //' /proc/1/stat | cut -d' ' -f20)\n  EXPECT: helper-\n" +
		"E4. its helper\n  CHECK: echo helper-$(sed 's/.*) //' /proc/1/stat | cut -d' ' -f20)\n  EXPECT: helper-\n"
	_, st := gateRepo(t, contract, nil)
	lanes := newGates(t, st)
	if _, ok := lanes.Wall.(sandbox.Lanes); !ok {
		t.Fatal("the wall makes no lanes")
	}
	alone := newGates(t, st)
	alone.Wall = struct{ sandbox.Jobs }{alone.Wall} // no NewLane: a helper for each oracle
	inLanes, byItself := runGates(t, lanes), runGates(t, alone)
	for _, rep := range []*examine.GateReport{inLanes, byItself} {
		for _, r := range rep.Rows {
			if r.State != examine.GateMet {
				t.Fatalf("%s %s: %s\n%s%s", r.Expectation, r.State, r.Note, r.Evidence.StdoutTail, r.Evidence.StderrTail)
			}
		}
	}
	if !row(t, inLanes, "E1").Evidence.Enforced.Signals {
		t.Skip("a lane shares its helper only where Landlock scopes signals (ABI 6)")
	}
	helper := func(rep *examine.GateReport, id examine.ExpectationID) string {
		return string(row(t, rep, id).Evidence.StdoutTail)
	}
	if helper(inLanes, "E3") != helper(inLanes, "E4") || helper(byItself, "E3") == helper(byItself, "E4") {
		t.Fatalf("helpers %q %q in a lane, %q %q each its own: want one in the lane, two otherwise",
			helper(inLanes, "E3"), helper(inLanes, "E4"), helper(byItself, "E3"), helper(byItself, "E4"))
	}
	for _, id := range []examine.ExpectationID{"E1", "E2"} {
		l, a := row(t, inLanes, id).Evidence, row(t, byItself, id).Evidence
		if l.State != a.State || l.End != a.End || l.ExitStatus != a.ExitStatus || l.MarkerFound != a.MarkerFound ||
			l.Stdout != a.Stdout || l.Stderr != a.Stderr || l.Survivors != a.Survivors || l.OutputCut != a.OutputCut ||
			!reflect.DeepEqual(l.Wall, a.Wall) || !reflect.DeepEqual(l.Enforced, a.Enforced) {
			t.Fatalf("%s in a lane: %+v\neach its own helper: %+v", id, l.OracleRun, a.OracleRun)
		}
	}
}
