package swarm

import (
	"strings"
	"testing"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/refusal"
)

func TestReworkOfIsReadAndChecked(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, header string
		want         *ReworkRef
		problem      string
	}{
		{"a label and its number", "REWORK-OF: fix 2", &ReworkRef{Card: "fix", N: 2}, ""},
		{"no number", "REWORK-OF: fix", nil, "is not `<label> <n>`"},
		{"a number that is not whole", "REWORK-OF: fix 1.5", nil, "is not a whole number from 1 to 99"},
		{"a number past the cap", "REWORK-OF: fix 100", nil, "is not a whole number from 1 to 99"},
		{"a leading zero", "REWORK-OF: fix 01", nil, "is not a whole number from 1 to 99"},
		{"zero", "REWORK-OF: fix 0", nil, "is not a whole number from 1 to 99"},
		{"a label that is none", "REWORK-OF: ../x 1", nil, "is not a card label"},
		{"the card itself", "REWORK-OF: " + strings.Fields(testLine1)[1] + " 1", nil, "names the card itself"},
		{"on an examine card", "REWORK-OF: fix 1\nKIND: examine\nFEATURE: f\nCANDIDATE: " + testBase, &ReworkRef{Card: "fix", N: 1}, "REWORK-OF is for produce cards"},
		{"a typo of it", "REWORK-0F: fix 1", nil, "did you mean REWORK-OF?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, problems := parseCard([]byte(testLine1 + "\nBASE: " + testBase + "\n" + tc.header + "\n\nDo it.\n"))
			got := strings.Join(problems, "; ")
			if tc.problem == "" && got != "" || !strings.Contains(got, tc.problem) {
				t.Fatalf("problems %q, want one saying %q", got, tc.problem)
			}
			if (c.ReworkOf == nil) != (tc.want == nil) || tc.want != nil && *c.ReworkOf != *tc.want {
				t.Fatalf("REWORK-OF read as %v, want %v", c.ReworkOf, tc.want)
			}
		})
	}
}

func TestReworkOfMustFollowAHarvestedHeadOfTheCardItNames(t *testing.T) {
	t.Parallel()
	head := strings.Repeat("b", 40)
	parent := &Card{Label: "fix"}
	first := &Card{Label: "fix-r1", ReworkOf: &ReworkRef{Card: "fix", N: 1}}
	queue := []Queued{{Card: parent}, {Card: first}}
	jobs := []Job{{Label: "fix", Head: head}, {Label: "fix-r1", Head: strings.Repeat("c", 40)}}
	for _, tc := range []struct {
		name    string
		card    *Card
		problem string
	}{
		{"the first rework of a head", &Card{Base: head, ReworkOf: &ReworkRef{Card: "fix", N: 1}}, ""},
		{"the second, of the first's head", &Card{Base: strings.Repeat("c", 40), ReworkOf: &ReworkRef{Card: "fix-r1", N: 2}}, ""},
		{"a number that skips", &Card{Base: head, ReworkOf: &ReworkRef{Card: "fix", N: 2}}, "this one is 1"},
		{"a base no job of it harvested", &Card{Base: strings.Repeat("d", 40), ReworkOf: &ReworkRef{Card: "fix", N: 1}}, "no job of it harvested BASE"},
		{"a card not queued", &Card{Base: head, ReworkOf: &ReworkRef{Card: "nosuch", N: 1}}, "is not a queued card"},
	} {
		got := strings.Join(reworkProblems(tc.card, queue, jobs), "; ")
		if tc.problem == "" && got != "" || !strings.Contains(got, tc.problem) {
			t.Errorf("%s: problems %q, want %q", tc.name, got, tc.problem)
		}
	}
}

func TestTheGateSummaryNamesATestOracleThatIsNotProven(t *testing.T) {
	t.Parallel()
	test := &TestRef{Feature: "f", Criterion: "E1"}
	row := func(id string, st examine.GateState, p examine.Proof) examine.GateRow {
		return examine.GateRow{Expectation: examine.ExpectationID(id), State: st, Proof: p}
	}
	for _, tc := range []struct {
		name    string
		rows    []examine.GateRow
		test    *TestRef
		refusal string
		problem string
	}{
		{"proven", []examine.GateRow{row("E1", examine.GateMet, examine.ProofProven), row("E2", examine.GateMet, examine.ProofVacuous)}, test, "", ""},
		{"vacuous", []examine.GateRow{row("E1", examine.GateMet, examine.ProofVacuous)}, test, refusal.GateVacuous, "TEST f E1 is vacuous at the head"},
		{"unproven", []examine.GateRow{row("E1", examine.GateMet, examine.ProofUnproven)}, test, refusal.GateUnproven, "TEST f E1 is MET at the head but not proven"},
		{"not met, named before another", []examine.GateRow{row("E1", examine.GateNotMet, ""), row("E2", examine.GateNotMet, "")}, test, refusal.GateNotMet, "TEST f E1 is NOT-MET at the head"},
		{"another oracle not met, no TEST", []examine.GateRow{row("E1", examine.GateMet, examine.ProofProven), row("E2", examine.GateNotMet, "")}, nil, refusal.GateNotMet, "not MET at the head: E2 NOT-MET"},
		{"the TEST criterion not run", []examine.GateRow{row("E2", examine.GateMet, examine.ProofProven)}, test, refusal.GateNotMet, "TEST f E1 is pending"},
	} {
		sum := &GateSummary{Feature: "f", Base: strings.Repeat("a", 40)}
		summarise(sum, &examine.GateReport{Rows: tc.rows}, tc.test)
		if sum.Refusal != tc.refusal || !strings.Contains(sum.Problem, tc.problem) || sum.Proven() != (tc.refusal == "") {
			t.Errorf("%s: refusal %q problem %q proven %v", tc.name, sum.Refusal, sum.Problem, sum.Proven())
		}
	}
}

func TestAReworkCardCarriesItsGapsAndParses(t *testing.T) {
	t.Parallel()
	base := strings.Repeat("a", 40)
	parent, err := ParseCard([]byte("RESULT: fix sha=" + base[:12] + "\nBASE: " + base + "\nTEST: f E1\nBUDGET: turns=3\n\nMake it say fixed.\n"))
	if err != nil {
		t.Fatal(err)
	}
	rw := &Rework{Label: "fix-r1", Base: strings.Repeat("b", 40), Feature: "f", ReworkOf: ReworkRef{Card: "fix", N: 1}, Lineage: "fix", Limit: 2,
		Outcome: "the examination of bbbbbbbbbbbb rejected it", Gaps: []Gap{
			{Kind: GapUnmet, Expectation: "E1", Criterion: "fixed", Class: "product_violation", Observations: []string{cardSafe("it says fixd\x00\x1b[31m\nline two\n")}},
			{Kind: GapGate, Expectation: "E1", Criterion: "fixed", Reason: "NOT-MET: exit 1", Tail: []string{"cat: fixed.txt: No such file"}},
			{Kind: GapScope, Path: "stray.txt"},
		}}
	rw.GapsCount = len(rw.Gaps) + 1
	got := reworkText(rw, parent, parent, []string{"fixed.txt", "docs/**"})
	c, err := ParseCard([]byte(got))
	if err != nil {
		t.Fatalf("the card does not parse: %v\n%s", err, got)
	}
	if c.Base != rw.Base || c.Feature != "f" || *c.ReworkOf != rw.ReworkOf || strings.Join(c.Paths, " ") != "fixed.txt docs/**" || c.Test == nil || c.Budget.Turns != 3 {
		t.Fatalf("headers read back as base %s feature %s rework %v paths %q test %v budget %v", c.Base, c.Feature, c.ReworkOf, c.Paths, c.Test, c.Budget)
	}
	for _, want := range []string{
		"1. E1 unmet (product_violation): fixed\n   observed:\n   > it says fixd\uFFFD\uFFFD[31m\n   > line two\n",
		"2. E1 oracle NOT-MET: exit 1 — fixed\n   | cat: fixed.txt: No such file\n",
		"3. out of the FILE SCOPE: stray.txt (revert it)\n(and 1 more gaps not listed)\n",
		"\nTHE TASK (card fix)\nMake it say fixed.\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the card lacks %q:\n%s", want, got)
		}
	}
}

func TestALineageLineSaysEachAttemptAndItsReworks(t *testing.T) {
	t.Parallel()
	l := CardLineage{Card: "fix-r1", ReworkOf: &ReworkRef{Card: "fix", N: 1}, ReworkedBy: []string{"fix-r2"}, Attempts: []Attempt{
		{Attempt: 1, Result: VerdictRefused},
		{Attempt: 2, Result: VerdictOK, Head: strings.Repeat("c", 40), Examination: examine.Rejected,
			Gate: &GateSummary{Feature: "f", Met: true, Oracles: []GatedOracle{{Expectation: "E1", State: examine.GateMet, Proof: examine.ProofProven}}}},
	}}
	want := "lineage fix-r1 (rework 1, of fix): #1 refused, no head; #2 ok, head cccccccccccc, gates f: 1/1 MET, 1 proven, 0 vacuous, examination rejected; reworked by fix-r2"
	if got := l.String(); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}
