package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/internal/text"
)

// Format is an export format.
type Format string

const (
	JUnit    Format = "junit"
	Markdown Format = "markdown"
	InToto   Format = "intoto"
)

// Formats lists the export formats.
var Formats = []Format{JUnit, Markdown, InToto}

// Export writes s in format f.
func Export(w io.Writer, s *Status, f Format) error {
	switch f {
	case JUnit:
		return WriteJUnit(w, s)
	case Markdown:
		return WriteMarkdown(w, s)
	case InToto:
		return WriteInToto(w, s)
	}
	return fmt.Errorf("unknown export format %q", f)
}

// JUnit XML, in the shape CI systems read (Jenkins, GitLab, GitHub
// reporters): one testsuite per feature, one testcase per expectation.
// A met expectation passes; unmet is a failure typed by its class;
// not_examined is a failure too (typed "not_examined"), because
// indeterminate is not accepted; a feature without an examination fails
// every expectation of its contract with type "not_examined_at_commit".

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Error     *junitFailure `xml:"error,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Type    string `xml:"type,attr"`
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes s as JUnit XML. Every text in it goes through
// text.XMLText, so the document is well-formed XML 1.0 whatever the
// records hold: a control character or a byte that is not UTF-8 shows as
// its escape (\x1b, \xff), as on a terminal, never as a character XML
// forbids and never silently as U+FFFD.
func WriteJUnit(w io.Writer, s *Status) error {
	x := text.XMLText
	out := junitSuites{Name: "nwdes acceptance " + x(s.Commit)}
	for i := range s.Features {
		f := &s.Features[i]
		suite := junitSuite{Name: x(f.Feature), Properties: []junitProperty{
			{"commit", x(s.Commit)}, {"outcome", x(string(f.Outcome))}, {"contract", x(f.Contract)},
		}}
		if f.Record != "" {
			suite.Properties = append(suite.Properties, junitProperty{"record", x(string(examine.Ref) + ":" + f.Record)})
		}
		class := x("nwdes." + f.Feature)
		switch {
		case f.Problem != "":
			suite.Cases = append(suite.Cases, junitCase{Name: "contract", Classname: class,
				Error: &junitFailure{Type: strings.ReplaceAll(ProblemLabel(f), " ", "_"), Message: x(f.Problem)}})
		case f.examination != nil:
			ex := f.examination
			for _, r := range ex.Rows {
				c := junitCase{Name: x(string(r.Expectation) + ": " + text.OneLine(r.Criterion)), Classname: class, SystemOut: x(citedText(ex, r))}
				switch r.Verdict {
				case examine.Unmet:
					c.Failure = &junitFailure{Type: x(string(r.Class)), Message: x(fmt.Sprintf("unmet (%s)", r.Class)), Text: c.SystemOut}
				case examine.NotExamined:
					c.Failure = &junitFailure{Type: "not_examined", Message: x("not examined: " + text.OneLine(r.Reason))}
				}
				suite.Cases = append(suite.Cases, c)
			}
		default:
			for _, cr := range f.contract.Criteria {
				suite.Cases = append(suite.Cases, junitCase{Name: x(string(cr.ID) + ": " + text.OneLine(cr.Text)), Classname: class,
					Failure: &junitFailure{Type: "not_examined_at_commit", Message: x("no published examination of " + f.Feature + " at " + s.Commit)}})
			}
		}
		for _, c := range suite.Cases {
			suite.Tests++
			if c.Failure != nil {
				suite.Failures++
			}
			if c.Error != nil {
				suite.Errors++
			}
		}
		out.Tests += suite.Tests
		out.Failures += suite.Failures
		out.Errors += suite.Errors
		out.Suites = append(out.Suites, suite)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// citedText renders the texts a row cites, each headed by its source.
func citedText(ex *examine.Examination, r examine.PublishedRow) string {
	var b strings.Builder
	for _, c := range r.Cites {
		if c < 0 || c >= len(ex.Texts) {
			continue
		}
		t := ex.Texts[c]
		fmt.Fprintf(&b, "observed (%s)%s:\n%s", t.Source, examine.CarriedFrom(t), t.Text)
		if len(t.Text) == 0 || t.Text[len(t.Text)-1] != '\n' {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// WriteMarkdown writes a summary fit for a CI job summary
// ($GITHUB_STEP_SUMMARY, a merge request comment): a table of features and
// outcomes, then each examination's brief folded under <details>. Every
// text a commit or a record supplies is escaped (text.MarkdownInline,
// MarkdownBlock, MarkdownCode): it can neither leave the table cell or the
// <details> it is in, nor open a tag, a link or an image.
func WriteMarkdown(w io.Writer, s *Status) error {
	in := text.MarkdownInline
	var b strings.Builder
	verdict := "accepted"
	if !s.Accepted {
		verdict = "**not accepted**"
	}
	fmt.Fprintf(&b, "## nwdes acceptance of %s: %s\n\n", text.MarkdownCode(text.Short(s.Commit)), verdict)
	if len(s.Features) == 0 {
		b.WriteString("No feature contract (`.nwave/features/*.md`) at this commit.\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	b.WriteString("| feature | outcome | expectations | gates | verify | examination |\n|---|---|---|---|---|---|\n")
	for _, f := range s.Features {
		outcome := in(string(f.Outcome))
		switch {
		case f.Problem != "":
			outcome = "**" + ProblemLabel(&f) + "**"
		case f.Outcome == examine.None:
			outcome = "**not examined**"
		case f.Outcome != examine.Accepted:
			outcome = "**" + outcome + "**"
		}
		exp, gates, verify, record := "–", "–", "–", "–"
		if f.Expectations != nil {
			exp = fmt.Sprintf("%d met, %d unmet, %d not examined", f.Expectations.Met, f.Expectations.Unmet, f.Expectations.NotExamined)
		}
		if f.Gates != nil {
			gates = in(f.Gates.State)
		}
		if f.Verify != nil {
			verify = cell(text.MarkdownCode(f.Verify.Verdict))
		}
		if f.Record != "" {
			record = cell(text.MarkdownCode(f.Record))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", in(f.Feature), outcome, exp, gates, verify, record)
	}
	for _, f := range s.Features {
		switch {
		case f.Problem != "":
			fmt.Fprintf(&b, "\n### %s: %s\n\n%s\n", in(f.Feature), ProblemLabel(&f), text.MarkdownBlock(f.Problem))
		case f.examination == nil:
			fmt.Fprintf(&b, "\n### %s: not examined at this commit\n\nExamine it: %s.\n", in(f.Feature),
				text.MarkdownCode("git nwdes examine open --feature "+f.Feature+" --candidate "+text.Short(s.Commit)))
		default:
			fmt.Fprintf(&b, "\n<details><summary>%s: %s — acceptance brief</summary>\n\n%s\n</details>\n", in(f.Feature), in(string(f.Outcome)), markdownBrief(f.examination))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// cell makes a code span fit for a table cell: GFM splits a row at every
// "|" not escaped, code spans included.
func cell(code string) string { return strings.ReplaceAll(code, "|", `\|`) }

// markdownBrief is examine.RenderBrief with every text a record holds
// escaped for Markdown. The note keeps the brief as examine renders it;
// the export lands on a page other people read, inside a <details> the
// text must not get out of. Cited texts keep their fence (longer than any
// backtick run in them) with their controls escaped; the diagnostic
// becomes literal paragraphs. TestTheMarkdownBriefIsTheNotesBrief keeps
// the two renderings alike.
func markdownBrief(ex *examine.Examination) string {
	in := text.MarkdownInline
	var b strings.Builder
	fmt.Fprintf(&b, "## nwdes acceptance brief: %s: %s\n\n", in(ex.Feature), in(string(ex.Outcome)))
	fmt.Fprintf(&b, "- candidate: %s\n- contract: %s (blob %s)\n- closed: %s\n",
		in(ex.Candidate), in(ex.ContractPath), in(text.Short(ex.ContractBlob)), in(ex.ClosedAt))
	for _, r := range ex.Rows {
		fmt.Fprintf(&b, "\n### %s: %s", in(string(r.Expectation)), in(string(r.Verdict)))
		switch {
		case r.Class != "":
			fmt.Fprintf(&b, " (%s)", in(string(r.Class)))
		case r.Reason != "":
			fmt.Fprintf(&b, " (reason: %s)", in(text.OneLine(r.Reason)))
		}
		fmt.Fprintf(&b, "\n\n%s\n", in(text.OneLine(r.Criterion)))
		for _, c := range r.Cites {
			if c < 0 || c >= len(ex.Texts) {
				continue
			}
			t := ex.Texts[c]
			body := text.Terminal(string(t.Text))
			fence := examine.Fence([]byte(body))
			fmt.Fprintf(&b, "\nobserved (%s)%s:\n\n%stext\n%s", in(string(t.Source)), examine.CarriedFrom(t), fence, body)
			noFinalNewline := len(body) > 0 && body[len(body)-1] != '\n'
			if noFinalNewline {
				b.WriteString("\n")
			}
			b.WriteString(fence + "\n")
			if noFinalNewline {
				b.WriteString("(no newline at end of text)\n")
			}
		}
	}
	fmt.Fprintf(&b, "\n### diagnostic\n\n%s\n", text.MarkdownBlock(strings.TrimRight(ex.Diagnostic, "\n")))
	return b.String()
}

// In-toto Statement v1 (https://github.com/in-toto/attestation, spec/v1):
// the subject is the commit, by its git commit id; the predicate, of type
// PredicateType, carries the status and, per examined feature, the brief
// and its rows. It is unsigned: sign it with the attestation tooling of
// your CI (a DSSE envelope) if it must be verified later.

// StatementType is the in-toto Statement v1 type.
const StatementType = "https://in-toto.io/Statement/v1"

// PredicateType names nwdes's acceptance predicate, version 1.
const PredicateType = "https://nwdes.dev/attestation/acceptance/v1"

type statement struct {
	Type          string     `json:"_type"`
	Subject       []subject  `json:"subject"`
	PredicateType string     `json:"predicateType"`
	Predicate     *predicate `json:"predicate"`
}

type subject struct {
	Name   string            `json:"name"`
	Digest map[string]string `json:"digest"`
}

type predicate struct {
	Commit   string          `json:"commit"`
	Accepted bool            `json:"accepted"`
	Features []predFeature   `json:"features"`
	Records  predRecordsRefs `json:"records"`
}

type predRecordsRefs struct {
	Examinations string `json:"examinations"`
	Notes        string `json:"notes"`
}

type predFeature struct {
	Feature      string          `json:"feature"`
	Outcome      examine.Outcome `json:"outcome"`
	Contract     predContract    `json:"contract"`
	Record       string          `json:"record,omitempty"`
	ClosedAt     string          `json:"closed_at,omitempty"`
	Expectations *Counts         `json:"expectations,omitempty"`
	Gates        *Gates          `json:"gates,omitempty"`
	Verify       *Verify         `json:"verify,omitempty"`
	Problem      string          `json:"problem,omitempty"`
	Rows         []predRow       `json:"rows,omitempty"`
	Diagnostic   string          `json:"diagnostic,omitempty"`
	// Brief is the acceptance brief in Markdown, as the note shows it.
	Brief string `json:"brief,omitempty"`
}

type predContract struct {
	Path string `json:"path"`
	Blob string `json:"blob,omitempty"`
}

type predRow struct {
	Expectation examine.ExpectationID `json:"expectation"`
	Criterion   string                `json:"criterion"`
	Verdict     examine.Verdict       `json:"verdict"`
	Class       examine.Class         `json:"class,omitempty"`
	Reason      string                `json:"reason,omitempty"`
}

// WriteInToto writes s as an in-toto Statement v1. Texts keep their
// bytes, JSON-escaped (encoding/json replaces a byte that is not UTF-8
// with U+FFFD); text.JSON also escapes DEL, C1 and bidirectional controls,
// so the document is valid JSON whatever the records hold and prints
// safely.
func WriteInToto(w io.Writer, s *Status) error {
	p := &predicate{Commit: s.Commit, Accepted: s.Accepted, Features: []predFeature{},
		Records: predRecordsRefs{Examinations: string(examine.Ref), Notes: "refs/notes/nwdes"}}
	for i := range s.Features {
		f := &s.Features[i]
		pf := predFeature{Feature: f.Feature, Outcome: f.Outcome, Contract: predContract{Path: f.Contract},
			Record: f.Record, ClosedAt: f.ClosedAt, Expectations: f.Expectations, Gates: f.Gates, Verify: f.Verify, Problem: f.Problem}
		if ex := f.examination; ex != nil {
			pf.Contract.Blob = ex.ContractBlob
			pf.Diagnostic = ex.Diagnostic
			pf.Brief = examine.RenderBrief(ex)
			for _, r := range ex.Rows {
				pf.Rows = append(pf.Rows, predRow{Expectation: r.Expectation, Criterion: r.Criterion, Verdict: r.Verdict, Class: r.Class, Reason: r.Reason})
			}
		}
		p.Features = append(p.Features, pf)
	}
	st := statement{
		Type:          StatementType,
		Subject:       []subject{{Name: s.Commit, Digest: map[string]string{"gitCommit": s.Commit}}},
		PredicateType: PredicateType,
		Predicate:     p,
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(st); err != nil {
		return err
	}
	_, err := w.Write(text.JSON(buf.Bytes()))
	return err
}

// ProblemLabel names why a feature could not be judged: its examination
// does not hold up, or its contract could not be read.
func ProblemLabel(f *Feature) string {
	if f.Outcome == examine.Invalid {
		return "invalid examination"
	}
	return "contract unreadable"
}
