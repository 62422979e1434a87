package report_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/memstore"
	"github.com/nwdes/nwdes/judge"
	"github.com/nwdes/nwdes/report"
)

// largeStatus is a commit with many examined features whose observations
// are long and hold what could break a cut (fences, </details>), one
// feature whose second observation alone exceeds GitHub's comment cap, and
// one feature not examined.
func largeStatus(t *testing.T) *report.Status {
	t.Helper()
	const n = 12
	files := map[string][]byte{}
	for i := 0; i < n; i++ {
		files[fmt.Sprintf(".nwave/features/f%02d.md", i)] = []byte("# REQUEST\nr\n# ACCEPTANCE CRITERIA\nE1. greets\nE2. says goodbye\nE3. documented\n")
	}
	files[".nwave/features/huge.md"] = []byte("# REQUEST\nr\n# ACCEPTANCE CRITERIA\nE1. logs\nE2. rotates\nE3. stops\n")
	files[".nwave/features/zz-unexamined.md"] = []byte("# REQUEST\nr\n# ACCEPTANCE CRITERIA\nE1. waits\n")
	// Nothing here is about git: the records and the candidate are kept in
	// memory.
	st, err := memstore.New(memstore.Options{Registry: gitstore.MustRegistry(examine.Register)})
	if err != nil {
		t.Fatal(err)
	}
	commit, err := st.AddCommit(memstore.Commit{Files: files, Message: "many contracts"})
	if err != nil {
		t.Fatal(err)
	}
	x := &examine.Examiner{Store: st, Now: func() time.Time { return time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC) }, Gates: examine.GatesAdvisory}
	ctx := context.Background()
	long := strings.Repeat("line of output </details> <summary>x</summary>\n```\n", 120)
	examineFeature := func(feature string, obs ...string) {
		tg := examine.Target{Feature: feature, Candidate: commit.String()}
		if _, err := x.Open(ctx, tg, false); err != nil {
			t.Fatal(err)
		}
		for i, o := range obs {
			if _, err := x.AddObservation(ctx, tg, examine.SourceExaminer, []byte(o)); err != nil {
				t.Fatal(err)
			}
			e := examine.ExpectationID(fmt.Sprintf("E%d", i+1))
			in := examine.VerdictInput{Expectation: e, Verdict: examine.Met, Observations: []examine.ObservationID{examine.ObservationID(fmt.Sprintf("O%d", i+1))}}
			if _, err := x.SetVerdict(ctx, tg, in); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, err := x.Close(ctx, tg, "accepted", "judged\n</details>\n"+strings.Repeat("d", 2000)); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i++ {
		examineFeature(fmt.Sprintf("f%02d", i), long, long, "short")
	}
	examineFeature("huge", "logged\n", strings.Repeat("x", 70000)+"\n", "stopped\n")
	s, err := report.Evaluate(st, judge.Question{Commit: commit, Gates: examine.GatesAdvisory})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func markdown(t *testing.T, s *report.Status, maxBytes int) string {
	t.Helper()
	var buf bytes.Buffer
	if err := report.Export(&buf, s, report.Markdown, report.Options{MaxBytes: maxBytes}); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// wellClosed checks that md leaves no fence open and that, outside fences,
// every <details> it opens is closed before the next opens.
func wellClosed(t *testing.T, md string) {
	t.Helper()
	fence, open := "", false
	for i, l := range strings.Split(md, "\n") {
		switch {
		case fence != "":
			if l == fence {
				fence = ""
			}
		case strings.HasPrefix(l, "```") && strings.TrimLeft(l, "`") == "text":
			fence = strings.TrimSuffix(l, "text")
		default:
			opens, closes := strings.Count(l, "<details>"), strings.Count(l, "</details>")
			if opens+closes > 1 || opens == 1 && open || closes == 1 && !open {
				t.Fatalf("line %d opens or closes a <details> out of turn: %q", i+1, l)
			}
			open = open && closes == 0 || opens == 1
		}
	}
	if fence != "" || open {
		t.Fatalf("the summary ends inside a fence (%q) or a <details> (%v)", fence, open)
	}
}

func TestMarkdownFitsItsBoundAndSaysWhatWasLeftOut(t *testing.T) {
	s := largeStatus(t)
	whole := markdown(t, s, 0)
	if len(whole) <= 200000 || strings.Contains(whole, "Cut to stay within") {
		t.Fatalf("test premise: an unbounded summary of %d bytes, whole", len(whole))
	}
	wellClosed(t, whole)
	for _, bound := range []int{report.MinMaxBytes, 8192, report.DefaultMaxBytes, 200000} {
		t.Run(fmt.Sprint(bound), func(t *testing.T) {
			md := markdown(t, s, bound)
			if len(md) > bound {
				t.Fatalf("%d bytes, over the bound of %d", len(md), bound)
			}
			wellClosed(t, md)
			lines := strings.Split(strings.TrimSuffix(md, "\n"), "\n")
			last := lines[len(lines)-1]
			if !strings.HasPrefix(last, fmt.Sprintf("**Cut to stay within %d bytes:** left out ", bound)) ||
				!strings.Contains(last, "`git nwdes export --commit "+s.Commit+" --format markdown --max-bytes 0`") ||
				!strings.Contains(last, "`git log -1 --notes=nwdes "+s.Commit+"`") {
				t.Fatalf("the summary does not end with the note:\n%s", last)
			}
			if !strings.HasPrefix(md, "## nwdes acceptance of `"+s.Commit[:12]+"`: **not accepted**\n") {
				t.Fatalf("the heading is gone:\n%.200s", md)
			}
		})
	}
	md := markdown(t, s, report.DefaultMaxBytes)
	for _, want := range []string{
		"| f00 | accepted | 3 met, 0 unmet, 0 not examined |",
		"| zz-unexamined | **not examined** |",
		"<details><summary>f00: accepted</summary>\n\n## nwdes acceptance brief: f00: accepted\n",
		"<details><summary>zz-unexamined: not examined at this commit</summary>",
		"left out the sections of ",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the bounded summary lacks %q", want)
		}
	}
	if strings.Contains(md, strings.Repeat("x", 1000)) {
		t.Errorf("the huge observation was not left out")
	}
	if md := markdown(t, s, 200000); !strings.Contains(md, "<details><summary>huge: accepted</summary>\n\n## nwdes acceptance brief: huge: accepted\n") ||
		!strings.Contains(md, "\n### E1: met\n") || !strings.Contains(md, "part of the brief of huge.") {
		t.Errorf("the huge brief's first expectation is not kept where room is left")
	}
}

func TestMarkdownCutsABriefAtWholeExpectations(t *testing.T) {
	s := largeStatus(t)
	var huge *report.Status = &report.Status{V: s.V, Commit: s.Commit, Features: []report.Feature{s.Features[len(s.Features)-2]}}
	if huge.Features[0].Feature != "huge" {
		t.Fatalf("test premise: %q", huge.Features[0].Feature)
	}
	md := markdown(t, huge, report.DefaultMaxBytes)
	wellClosed(t, md)
	for _, want := range []string{
		"<details><summary>huge: accepted</summary>\n\n## nwdes acceptance brief: huge: accepted\n",
		"\n### E1: met\n\nlogs\n\nobserved (examiner):\n\n```text\nlogged\n```\n",
		"\n**Cut here** to stay within 65536 bytes: 2 expectations from E2 on, and the diagnostic left out; the note at the end says how to read it whole.\n\n</details>\n",
		"left out part of the brief of huge.",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the summary lacks %q:\n%s", want, md)
		}
	}
}

func TestMarkdownWithinItsBoundIsWhole(t *testing.T) {
	f := newFixture(t)
	s, _ := report.Evaluate(f.st, judge.Question{Commit: f.mixed, Gates: examine.GatesAdvisory})
	if md := markdown(t, s, report.DefaultMaxBytes); md != markdown(t, s, 0) || strings.Contains(md, "Cut to stay within") {
		t.Fatalf("a summary within its bound was changed:\n%s", md)
	}
}

func TestMarkdownRefusesABoundTooSmallForItsNote(t *testing.T) {
	f := newFixture(t)
	s, _ := report.Evaluate(f.st, judge.Question{Commit: f.mixed, Gates: examine.GatesAdvisory})
	for _, n := range []int{-1, 1, report.MinMaxBytes - 1} {
		if err := report.Export(&bytes.Buffer{}, s, report.Markdown, report.Options{MaxBytes: n}); err == nil {
			t.Errorf("a bound of %d was taken", n)
		}
	}
}
