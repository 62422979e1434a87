package examine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/refusal"
)

const verifyContract = `# REQUEST
Say hello.

# ACCEPTANCE CRITERIA
E1. hello.txt says hello
  CHECK: cat hello.txt
  EXPECT: hello
E2. the docs explain it
E3. it works on a plotter
  CHECK: plot hello.txt
  EXPECT: plotted

# FILE SCOPE
hello.txt
docs/
.nwave/**

ABANDON: E3 no plotter to test on
`

// verifyRepo commits the contract and the implementation on top of the
// initial commit and returns the repository, its store and the base commit.
func verifyRepo(t *testing.T, contract string, files map[string]string) (string, *gitstore.Store, string) {
	t.Helper()
	dir := gittest.Init(t, false)
	base := gittest.Git(t, dir, "rev-parse", "HEAD")
	gateCommit(t, dir, contract, files)
	return dir, openStore(t, dir), base
}

func verify(t *testing.T, st *gitstore.Store, diff string) *examine.VerifyResult {
	t.Helper()
	v := &examine.Verifier{Store: st, Now: gateClock}
	r, err := v.Verify(context.Background(), examine.VerifyInput{Feature: "f", Diff: diff})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func sameLines(t *testing.T, got, want string) {
	t.Helper()
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			t.Fatalf("line %d:\n got %q\nwant %q\nwhole output:\n%s", i+1, gl, wl, got)
		}
	}
}

// examineAll publishes an examination of HEAD with the given verdicts.
func examineAll(t *testing.T, st *gitstore.Store, verdicts ...examine.VerdictInput) *examine.Examination {
	t.Helper()
	x := &examine.Examiner{Store: st, Now: gateClock}
	ctx := context.Background()
	tg := examine.Target{Feature: "f"}
	if _, err := x.Open(ctx, tg, false); err != nil {
		t.Fatal(err)
	}
	if _, err := x.AddObservation(ctx, tg, examine.SourceExaminer, []byte("read it")); err != nil {
		t.Fatal(err)
	}
	for _, in := range verdicts {
		if in.Verdict != examine.NotExamined {
			in.Observations = []examine.ObservationID{"O1"}
		}
		if _, err := x.SetVerdict(ctx, tg, in); err != nil {
			t.Fatal(err)
		}
	}
	ex, _, err := x.Close(ctx, tg, "accepted", "d")
	if err != nil && ex == nil {
		if _, ok := refusal.As(err); !ok {
			t.Fatal(err)
		}
	}
	if ex == nil {
		t.Fatalf("close: %v", err)
	}
	return ex
}

func TestVerifyIsConformeWhenEveryCriterionIsMetAndEveryFileInScope(t *testing.T) {
	t.Parallel()
	contract := strings.Replace(verifyContract, "\nABANDON: E3 no plotter to test on\n", "", 1)
	contract = strings.Replace(contract, "  CHECK: plot hello.txt", "  CHECK: test -f hello.txt && echo plotted", 1)
	_, st, base := verifyRepo(t, contract, map[string]string{"hello.txt": "hello\n", "docs/a.md": "a\n"})
	rep := runGates(t, newGates(t, st))
	ex := examineAll(t, st,
		examine.VerdictInput{Expectation: "E1", Verdict: examine.Met},
		examine.VerdictInput{Expectation: "E2", Verdict: examine.Met},
		examine.VerdictInput{Expectation: "E3", Verdict: examine.Met})

	r := verify(t, st, base+"...HEAD")
	sameLines(t, r.Render(), fmt.Sprintf(`VERIFY — VERDICT: CONFORME
CONTRACT: .nwave/features/f.md
CRITERIA:
  E1. hello.txt says hello — MET — gate evidence %s: "cat hello.txt" exit 0, marker in stdout
  E2. the docs explain it — MET — examination refs/nwdes/examine:%s: met, citing 1 observation(s)
  E3. it works on a plotter — MET — gate evidence %s: "test -f hello.txt && echo plotted" exit 0, marker in stdout
SCOPE: in-scope 3 files; out-of-scope: none
PROOF: read 4 files, ran nothing, checked 3/3 criteria
`, row(t, rep, "E1").EvidencePath, ex.Path, row(t, rep, "E3").EvidencePath))
	if r.Token() != "CONFORME" {
		t.Fatalf("token %s", r.Token())
	}
}

func TestVerifyCountsNotMetUnverifiableAndOutOfScopeFilesAsEcarts(t *testing.T) {
	t.Parallel()
	contract := strings.Replace(verifyContract, "  CHECK: cat hello.txt", "  CHECK: cat hello.txt; exit 1", 1)
	_, st, base := verifyRepo(t, contract, map[string]string{"hello.txt": "hello\n", "stray.txt": "x\n", "x/y.go": "package x\n"})
	rep := runGates(t, newGates(t, st))
	e1 := row(t, rep, "E1").EvidencePath

	r := verify(t, st, base+"..HEAD")
	sameLines(t, r.Render(), fmt.Sprintf(`VERIFY — VERDICT: ECARTS(4)
CONTRACT: .nwave/features/f.md
CRITERIA:
  E1. hello.txt says hello — NOT-MET — expected exit 0 and "hello" in stdout / actual exit 1, marker in stdout, but a non-zero exit never passes — %s
  E2. the docs explain it — UNVERIFIABLE — no oracle, and no published examination of %s
  E3. it works on a plotter — ABANDONED — no plotter to test on
SCOPE: in-scope 2 files; out-of-scope: stray.txt, x/y.go
PROOF: read 2 files, ran nothing, checked 3/3 criteria
`, e1, rep.Candidate[:12]))

	ex := examineAll(t, st,
		examine.VerdictInput{Expectation: "E1", Verdict: examine.Unmet, Class: "product_violation"},
		examine.VerdictInput{Expectation: "E2", Verdict: examine.Unmet, Class: "product_violation"},
		examine.VerdictInput{Expectation: "E3", Verdict: examine.NotExamined, Reason: "no plotter"})
	r = verify(t, st, base+"..HEAD")
	lines := strings.Split(r.Render(), "\n")
	if lines[0] != "VERIFY — VERDICT: ECARTS(4)" ||
		lines[4] != "  E2. the docs explain it — NOT-MET — expected met / actual unmet (product_violation) — refs/nwdes/examine:"+ex.Path {
		t.Fatalf("with an unmet examination:\n%s", r.Render())
	}
}

func TestVerifyJudgesANotExaminedCriterionUnverifiable(t *testing.T) {
	t.Parallel()
	_, st, base := verifyRepo(t, gateHead+"E1. looks right\n# FILE SCOPE\n.nwave/\n", nil)
	ex := examineAll(t, st, examine.VerdictInput{Expectation: "E1", Verdict: examine.NotExamined, Reason: "needs a human eye"})
	r := verify(t, st, base+"...HEAD")
	sameLines(t, r.Render(), `VERIFY — VERDICT: ECARTS(1)
CONTRACT: .nwave/features/f.md
CRITERIA:
  E1. looks right — UNVERIFIABLE — the examination refs/nwdes/examine:`+ex.Path+` did not examine it: needs a human eye
SCOPE: in-scope 1 files; out-of-scope: none
PROOF: read 2 files, ran nothing, checked 1/1 criteria
`)
}

func TestVerifyJudgesPendingAndStaleEvidenceNotMet(t *testing.T) {
	t.Parallel()
	contract := gateHead + "E1. a\n  CHECK: echo PASS\n  EXPECT: PASS\n# FILE SCOPE\n**\n"
	dir, st, base := verifyRepo(t, contract, nil)
	head := gittest.Git(t, dir, "rev-parse", "HEAD")

	r := verify(t, st, base+"...HEAD")
	sameLines(t, r.Render(), `VERIFY — VERDICT: ECARTS(1)
CONTRACT: .nwave/features/f.md
CRITERIA:
  E1. a — NOT-MET — expected gate evidence at `+head[:12]+` / actual none recorded (pending; run git nwdes gate run) — .nwave/features/f.md:4
SCOPE: in-scope 1 files; out-of-scope: none
PROOF: read 1 files, ran nothing, checked 1/1 criteria
`)

	runGates(t, newGates(t, st))
	if r := verify(t, st, base+"...HEAD"); r.Verdict != examine.VerdictConforme {
		t.Fatalf("after the run:\n%s", r.Render())
	}
	next := gateCommit(t, dir, "", map[string]string{"more.txt": "x\n"})
	r = verify(t, st, base+"...HEAD")
	if got := r.Rows[0].Detail; got != "expected gate evidence at "+next[:12]+" / actual evidence only for "+head[:12]+" (stale; run git nwdes gate run) — .nwave/features/f.md:4" {
		t.Fatalf("stale row: %s", got)
	}
}

func TestVerifyIsAbandonedWhenOnlyAbandonmentsRemain(t *testing.T) {
	t.Parallel()
	contract := strings.Replace(verifyContract, "E2. the docs explain it\n", "", 1)
	_, st, base := verifyRepo(t, contract, map[string]string{"hello.txt": "hello\n"})
	rep := runGates(t, newGates(t, st))
	r := verify(t, st, base+"...HEAD")
	sameLines(t, r.Render(), fmt.Sprintf(`VERIFY — VERDICT: ABANDONED(1)
CONTRACT: .nwave/features/f.md
CRITERIA:
  E1. hello.txt says hello — MET — gate evidence %s: "cat hello.txt" exit 0, marker in stdout
  E3. it works on a plotter — ABANDONED — no plotter to test on
SCOPE: in-scope 2 files; out-of-scope: none
PROOF: read 2 files, ran nothing, checked 2/2 criteria
`, row(t, rep, "E1").EvidencePath))
}

func TestVerifyIsErrorWhenTheContractIsMissingOrUnreadable(t *testing.T) {
	t.Parallel()
	dir := gittest.Init(t, false)
	base := gittest.Git(t, dir, "rev-parse", "HEAD")
	st := openStore(t, dir)
	r := verify(t, st, base+"...HEAD")
	sameLines(t, r.Render(), "VERIFY — VERDICT: ERROR(contract .nwave/features/f.md is missing at "+base[:12]+")\nCONTRACT: .nwave/features/f.md\n")

	head := gateCommit(t, dir, gateHead+"E1. a\n  CHECK: true\n", nil)
	r = verify(t, st, base+"...HEAD")
	sameLines(t, r.Render(), "VERIFY — VERDICT: ERROR(contract unreadable: .nwave/features/f.md:5: E1 has CHECK: but no EXPECT: [an oracle needs both])\nCONTRACT: .nwave/features/f.md\n")

	got, err := examine.LatestVerify(st, plumbingHash(head), "f")
	if err != nil || got == nil || got.Verdict != examine.VerdictError || got.Reason != r.Reason || got.Path != r.Path {
		t.Fatalf("recorded result %+v, %v", got, err)
	}
}

func TestVerifyDiffsFromTheMergeBaseWithThreeDotsAndFromBaseWithTwo(t *testing.T) {
	t.Parallel()
	dir := gittest.Init(t, false)
	gittest.Git(t, dir, "checkout", "-q", "-b", "feature")
	gateCommit(t, dir, gateHead+"E1. a\n# FILE SCOPE\n.nwave/\nfeature.txt\n", map[string]string{"feature.txt": "f\n"})
	gittest.Git(t, dir, "checkout", "-q", "main")
	gateCommit(t, dir, "", map[string]string{"main.txt": "m\n"})
	st := openStore(t, dir)

	three := verify(t, st, "main...feature")
	if want := gittest.Git(t, dir, "merge-base", "main", "feature"); three.Base != want {
		t.Fatalf("base %s, want the merge base %s", three.Base, want)
	}
	if three.InScope != 2 || len(three.OutOfScope) != 0 {
		t.Fatalf("main...feature: in %d out %v", three.InScope, three.OutOfScope)
	}
	two := verify(t, st, "main..feature")
	if two.Base != gittest.Git(t, dir, "rev-parse", "main") || strings.Join(two.OutOfScope, ",") != "main.txt" {
		t.Fatalf("main..feature: base %s out %v", two.Base, two.OutOfScope)
	}

	v := &examine.Verifier{Store: st}
	for diff, name := range map[string]string{"main": "PartInvalid", "...": "PartInvalid", "nope...HEAD": "MissingFact"} {
		_, err := v.Verify(context.Background(), examine.VerifyInput{Feature: "f", Diff: diff})
		if !refusal.Named(err, name) {
			t.Fatalf("--diff %q: err = %v, want %s", diff, err, name)
		}
	}
}

func TestMergeBaseAgreesWithGit(t *testing.T) {
	t.Parallel()
	dir := gittest.Init(t, false)
	commit := func(name string) {
		gittest.WriteFile(t, dir, name, name+"\n")
		gittest.Git(t, dir, "add", "-A")
		gittest.Git(t, dir, "commit", "-q", "-m", name)
	}
	commit("m1")
	gittest.Git(t, dir, "branch", "a")
	gittest.Git(t, dir, "branch", "b")
	commit("m2")
	gittest.Git(t, dir, "checkout", "-q", "a")
	commit("a1")
	commit("a2")
	gittest.Git(t, dir, "checkout", "-q", "b")
	commit("b1")
	gittest.Git(t, dir, "merge", "-q", "--no-edit", "main")
	commit("b2")
	gittest.Git(t, dir, "checkout", "-q", "main")
	st := openStore(t, dir)
	pairs := [][2]string{{"main", "a"}, {"a", "main"}, {"a", "b"}, {"main", "b"}, {"b", "b~2"}, {"main~1", "main"}}
	for _, p := range pairs {
		a, _ := st.Resolve(p[0])
		b, _ := st.Resolve(p[1])
		got, err := examine.MergeBase(st, a, b)
		if err != nil {
			t.Fatalf("%s %s: %v", p[0], p[1], err)
		}
		if want := gittest.Git(t, dir, "merge-base", p[0], p[1]); got.String() != want {
			t.Fatalf("merge base of %s and %s: %s, git says %s", p[0], p[1], got, want)
		}
	}

	// Criss-cross: two best merge bases; naming one is left to the user.
	gittest.Git(t, dir, "checkout", "-q", "-b", "x", "a")
	gittest.Git(t, dir, "merge", "-q", "--no-edit", "b")
	gittest.Git(t, dir, "checkout", "-q", "-b", "y", "b")
	gittest.Git(t, dir, "merge", "-q", "--no-edit", "a")
	if n := len(strings.Fields(gittest.Git(t, dir, "merge-base", "--all", "x", "y"))); n != 2 {
		t.Fatalf("fixture: git finds %d merge bases, want 2", n)
	}
	x, _ := st.Resolve("x")
	y, _ := st.Resolve("y")
	if _, err := examine.MergeBase(st, x, y); !refusal.Named(err, "PartInvalid") {
		t.Fatalf("criss-cross: err = %v", err)
	}
}
