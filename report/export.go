package report

import (
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

// WriteJUnit writes s as JUnit XML.
func WriteJUnit(w io.Writer, s *Status) error {
	out := junitSuites{Name: "nwdes acceptance " + s.Commit}
	for i := range s.Features {
		f := &s.Features[i]
		suite := junitSuite{Name: f.Feature, Properties: []junitProperty{
			{"commit", s.Commit}, {"outcome", string(f.Outcome)}, {"contract", f.Contract},
		}}
		if f.Record != "" {
			suite.Properties = append(suite.Properties, junitProperty{"record", string(examine.Ref) + ":" + f.Record})
		}
		class := "nwdes." + f.Feature
		switch {
		case f.Problem != "":
			suite.Cases = append(suite.Cases, junitCase{Name: "contract", Classname: class,
				Error: &junitFailure{Type: "contract_unreadable", Message: f.Problem}})
		case f.examination != nil:
			ex := f.examination
			for _, r := range ex.Rows {
				c := junitCase{Name: string(r.Expectation) + ": " + text.OneLine(r.Criterion), Classname: class, SystemOut: citedText(ex, r)}
				switch r.Verdict {
				case examine.Unmet:
					c.Failure = &junitFailure{Type: string(r.Class), Message: fmt.Sprintf("unmet (%s)", r.Class), Text: c.SystemOut}
				case examine.NotExamined:
					c.Failure = &junitFailure{Type: "not_examined", Message: "not examined: " + text.OneLine(r.Reason)}
				}
				suite.Cases = append(suite.Cases, c)
			}
		default:
			for _, cr := range f.contract.Criteria {
				suite.Cases = append(suite.Cases, junitCase{Name: string(cr.ID) + ": " + text.OneLine(cr.Text), Classname: class,
					Failure: &junitFailure{Type: "not_examined_at_commit", Message: "no published examination of " + f.Feature + " at " + s.Commit}})
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
// encoding/xml replaces characters XML cannot hold with U+FFFD.
func citedText(ex *examine.Examination, r examine.PublishedRow) string {
	var b strings.Builder
	for _, c := range r.Cites {
		t := ex.Texts[c]
		fmt.Fprintf(&b, "observed (%s):\n%s", t.Source, t.Text)
		if len(t.Text) == 0 || t.Text[len(t.Text)-1] != '\n' {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// WriteMarkdown writes a summary fit for a CI job summary
// ($GITHUB_STEP_SUMMARY, a merge request comment): a table of features and
// outcomes, then each examination's brief folded under <details>.
func WriteMarkdown(w io.Writer, s *Status) error {
	var b strings.Builder
	verdict := "accepted"
	if !s.Accepted {
		verdict = "**not accepted**"
	}
	fmt.Fprintf(&b, "## nwdes acceptance of `%s`: %s\n\n", s.Commit[:12], verdict)
	if len(s.Features) == 0 {
		b.WriteString("No feature contract (`.nwave/features/*.md`) at this commit.\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	b.WriteString("| feature | outcome | expectations | gates | verify | examination |\n|---|---|---|---|---|---|\n")
	for _, f := range s.Features {
		outcome := string(f.Outcome)
		switch {
		case f.Problem != "":
			outcome = "**contract unreadable**"
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
			gates = f.Gates.State
		}
		if f.Verify != nil {
			verify = "`" + f.Verify.Verdict + "`"
		}
		if f.Record != "" {
			record = "`" + f.Record + "`"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", f.Feature, outcome, exp, gates, verify, record)
	}
	for _, f := range s.Features {
		switch {
		case f.Problem != "":
			fmt.Fprintf(&b, "\n### %s: contract unreadable\n\n%s\n", f.Feature, mdEscape(f.Problem))
		case f.examination == nil:
			fmt.Fprintf(&b, "\n### %s: not examined at this commit\n\nExamine it: `git nwdes examine open --feature %s --candidate %s`.\n", f.Feature, f.Feature, s.Commit[:12])
		default:
			fmt.Fprintf(&b, "\n<details><summary>%s: %s — acceptance brief</summary>\n\n%s\n</details>\n", f.Feature, f.Outcome, examine.RenderBrief(f.examination))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mdEscape(s string) string {
	r := strings.NewReplacer("<", "&lt;", ">", "&gt;", "|", "\\|", "`", "\\`", "*", "\\*", "_", "\\_")
	return r.Replace(s)
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

// WriteInToto writes s as an in-toto Statement v1.
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
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(st)
}
