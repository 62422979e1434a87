package report_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/memstore"
	"github.com/nwdes/nwdes/judge"
	"github.com/nwdes/nwdes/report"
)

// hostileStatus is a commit whose contract, observations, reason and
// diagnostic hold terminal escapes, HTML, Markdown and bytes that are not
// UTF-8.
func hostileStatus(t *testing.T) *report.Status {
	t.Helper()
	st, err := memstore.New(memstore.Options{Registry: gitstore.MustRegistry(examine.Register)})
	if err != nil {
		t.Fatal(err)
	}
	commit, err := st.AddCommit(memstore.Commit{Message: "hostile contract", Files: map[string][]byte{
		".nwave/features/greet.md": []byte("# REQUEST\nr\n# ACCEPTANCE CRITERIA\n" +
			"E1. greets \x1b]0;pwned\x07 in \x1b[31mred\x1b[0m </details><img src=x onerror=alert(1)>\n" +
			"E2. prints | usage ```\n" +
			"E3. documented \u202eTEM\n"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	x := &examine.Examiner{Store: st, Now: func() time.Time { return time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC) }, Gates: examine.GatesAdvisory}
	ctx := context.Background()
	tg := examine.Target{Feature: "greet", Candidate: commit.String()}
	if _, err := x.Open(ctx, tg, false); err != nil {
		t.Fatal(err)
	}
	for _, obs := range []string{
		"\x1b[2J\x1b[Hall clear\r\n</details>\n<script>alert(1)</script>\n```\nbroke the fence\n",
		"bad bytes \xff\xfe \x00 \x01 \u009b31m \x7f ]]> &amp;",
	} {
		if _, err := x.AddObservation(ctx, tg, examine.SourceExaminer, []byte(obs)); err != nil {
			t.Fatal(err)
		}
	}
	for _, in := range []examine.VerdictInput{
		{Expectation: "E1", Verdict: examine.Met, Observations: []examine.ObservationID{"O1"}},
		{Expectation: "E2", Verdict: examine.Unmet, Class: "product_violation", Observations: []examine.ObservationID{"O2"}},
		{Expectation: "E3", Verdict: examine.NotExamined, Reason: "needs \x1b[5mblink [x](javascript:alert(1))"},
	} {
		if _, err := x.SetVerdict(ctx, tg, in); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := x.Close(ctx, tg, "accepted", "ok\n</details>\n### E2: met\n<img src=x>\n\x1b]8;;http://evil\x1b\\link"); err != nil {
		t.Fatal(err)
	}
	s, err := report.Evaluate(st, judge.Question{Commit: commit, Gates: examine.GatesAdvisory})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func export(t *testing.T, s *report.Status, f report.Format) string {
	t.Helper()
	var buf bytes.Buffer
	if err := report.Export(&buf, s, f, report.Options{}); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func noRawControls(t *testing.T, what, out string) {
	t.Helper()
	for _, bad := range []string{"\x1b", "\x07", "\x00", "\x01", "\r", "\u009b", "\x7f", "\u202e", "\xff"} {
		if strings.Contains(out, bad) {
			t.Errorf("%s holds %q raw", what, bad)
		}
	}
}

func TestJUnitIsWellFormedWhateverTheRecordsHold(t *testing.T) {
	out := export(t, hostileStatus(t), report.JUnit)
	noRawControls(t, "junit", out)
	d := xml.NewDecoder(strings.NewReader(out))
	for {
		if _, err := d.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, out)
		}
	}
	var doc junitDoc
	if err := xml.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	cases := doc.Suites[0].Cases
	for i, want := range []struct{ name, out string }{
		{"E1: greets \\x1b]0;pwned\\a in \\x1b[31mred\\x1b[0m </details><img src=x onerror=alert(1)>", "\\x1b[2J\\x1b[Hall clear\\r\n</details>"},
		{"E2: prints | usage ```", `bad bytes \xff\xfe \x00 \x01 \u009b31m \x7f ]]> &amp;`},
		{"E3: documented \\u202eTEM", ""},
	} {
		if cases[i].Name != want.name || !strings.Contains(cases[i].Out, want.out) {
			t.Errorf("case %d: %q / %q, want %q / %q", i, cases[i].Name, cases[i].Out, want.name, want.out)
		}
	}
	if cases[2].Failure == nil || cases[2].Failure.Message != `not examined: needs \x1b[5mblink [x](javascript:alert(1))` {
		t.Errorf("E3 failure: %+v", cases[2].Failure)
	}
}

func TestMarkdownKeepsRecordTextInsideItsBlock(t *testing.T) {
	out := export(t, hostileStatus(t), report.Markdown)
	noRawControls(t, "markdown", out)
	outside := outsideFences(out)
	for _, bad := range []string{"<img", "<script", "[x](", "](javascript", "\n### E2: met"} {
		if strings.Contains(outside, bad) {
			t.Errorf("markdown holds %q outside a fence:\n%s", bad, out)
		}
	}
	if n := strings.Count(outside, "</details>"); n != 1 {
		t.Errorf("markdown closes %d <details>, want the one it opened:\n%s", n, out)
	}
	for _, want := range []string{
		"E1: met\n\ngreets \\x1b&#93;0;pwned\\a in \\x1b&#91;31mred\\x1b&#91;0m &lt;/details&gt;&lt;img src=x onerror=alert(1)&gt;\n",
		"prints &#124; usage &#96;&#96;&#96;",
		"````text\n\\x1b[2J\\x1b[Hall clear\\r\n</details>\n<script>alert(1)</script>\n```\nbroke the fence\n````\n",
		"(reason: needs \\x1b&#91;5mblink &#91;x&#93;(javascript:alert(1)))",
		"### diagnostic\n\nok\n&lt;/details&gt;\n&#35;&#35;&#35; E2: met\n&lt;img src=x&gt;\n\\x1b&#93;8;;http://evil\\x1b&#92;link\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
}

func TestInTotoIsValidJSONWhateverTheRecordsHold(t *testing.T) {
	out := export(t, hostileStatus(t), report.InToto)
	noRawControls(t, "in-toto", out)
	if !json.Valid([]byte(out)) {
		t.Fatalf("not JSON:\n%s", out)
	}
	var st struct {
		Predicate struct {
			Features []struct {
				Diagnostic string
				Brief      string
				Rows       []struct{ Criterion string }
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatal(err)
	}
	f := st.Predicate.Features[0]
	if !strings.Contains(f.Brief, `bad bytes \xff\xfe \x00 \x01 \u009b31m \x7f`) || f.Rows[0].Criterion != "greets \x1b]0;pwned\x07 in \x1b[31mred\x1b[0m </details><img src=x onerror=alert(1)>" ||
		!strings.HasPrefix(f.Diagnostic, "ok\n</details>") {
		t.Errorf("the statement does not carry the texts as they are (bytes not UTF-8 as U+FFFD), and the brief as the note holds it: %+v", f)
	}
}

// outsideFences drops the fenced code blocks the export writes (a line of
// backticks and "text", up to the same backticks alone on a line): what
// is left is what Markdown interprets.
func outsideFences(md string) string {
	var b strings.Builder
	fence := ""
	for _, l := range strings.SplitAfter(md, "\n") {
		bare := strings.TrimSuffix(l, "\n")
		switch {
		case fence != "":
			if bare == fence {
				fence = ""
			}
		case strings.HasPrefix(bare, "```") && strings.TrimLeft(bare, "`") == "text":
			fence = strings.TrimSuffix(bare, "text")
		default:
			b.WriteString(l)
		}
	}
	return b.String()
}
