package report

import (
	"testing"

	"github.com/nwdes/nwdes/examine"
)

// The export's brief is the note's brief with record texts escaped: for
// texts that hold nothing Markdown would read, the two are the same.
func TestTheMarkdownBriefIsTheNotesBrief(t *testing.T) {
	ex := &examine.Examination{
		Feature: "greet", Candidate: "0123456789abcdef0123456789abcdef01234567",
		ContractPath: ".nwave/features/greet.md", ContractBlob: "89abcdef0123456789abcdef0123456789abcdef",
		Outcome: examine.Indeterminate, Diagnostic: "judged from the outside.\nTwo lines, read-only.\n",
		ClosedAt: "2026-03-01T00:00:01.000000000Z",
		Rows: []examine.PublishedRow{
			{Expectation: "E1", Criterion: "greets by name", Verdict: examine.Met, Cites: []int{0, 1}},
			{Expectation: "E2", Criterion: "prints usage", Verdict: examine.Unmet, Class: "product_violation", Cites: []int{1}},
			{Expectation: "E3", Criterion: "documented", Verdict: examine.NotExamined, Reason: "needs a terminal"},
		},
		Texts: []examine.CitedText{
			{Source: examine.SourceExaminer, Text: []byte("Hello, Ada.\n")},
			{Source: examine.SourceGate, Text: []byte("exit 1, no ``` marker")},
		},
	}
	if got, want := markdownBrief(ex), examine.RenderBrief(ex); got != want {
		t.Fatalf("the export's brief drifted from the note's:\n--- export\n%s\n--- note\n%s", got, want)
	}
}
