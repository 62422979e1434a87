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

// Options shape an export.
type Options struct {
	// MaxBytes bounds the size of a Markdown export, in bytes; 0 leaves
	// it unbounded. A summary that would be larger is cut at whole table
	// rows and whole feature sections (a brief at whole expectations),
	// never inside a fence or a tag, and ends with a line that names what
	// was left out and how to read it whole. It is at least MinMaxBytes.
	// JUnit and in-toto exports are never cut.
	MaxBytes int
}

// DefaultMaxBytes is the bound for Markdown that lands on GitHub: a
// pull-request comment holds at most 65,536 characters (a byte bound
// never lets more characters through) and a step summary 1 MiB.
const DefaultMaxBytes = 65536

// MinMaxBytes is the least bound that leaves room for the heading, the
// table's head and the closing note.
const MinMaxBytes = 2048

// Export writes s in format f.
func Export(w io.Writer, s *Status, f Format, o Options) error {
	if o.MaxBytes < 0 || o.MaxBytes > 0 && o.MaxBytes < MinMaxBytes {
		return fmt.Errorf("bound the export to 0 (unbounded) or at least %d bytes, not %d", MinMaxBytes, o.MaxBytes)
	}
	switch f {
	case JUnit:
		return WriteJUnit(w, s)
	case Markdown:
		return WriteMarkdown(w, s, o.MaxBytes)
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
// outcomes, then one <details> per feature, its summary line
// "feature: outcome", holding the examination's brief. Every text a
// commit or a record supplies is escaped (text.MarkdownInline,
// MarkdownBlock, MarkdownCode): it can neither leave the table cell or the
// <details> it is in, nor open a tag, a link or an image.
//
// When maxBytes is not 0 the summary is at most maxBytes long (see
// Options.MaxBytes): whole table rows are kept first, then whole
// sections in feature order, then, in what room is left, the briefs that
// did not fit, cut at whole expectations.
func WriteMarkdown(w io.Writer, s *Status, maxBytes int) error {
	var head strings.Builder
	verdict := "accepted"
	if !s.Accepted {
		verdict = "**not accepted**"
	}
	fmt.Fprintf(&head, "## nwdes acceptance of %s: %s\n\n", text.MarkdownCode(text.Short(s.Commit)), verdict)
	if len(s.Features) == 0 {
		head.WriteString("No feature contract (`.nwave/features/*.md`) at this commit.\n")
		_, err := io.WriteString(w, head.String())
		return err
	}
	head.WriteString("| feature | outcome | expectations | gates | verify | examination |\n|---|---|---|---|---|---|\n")
	rows := make([]string, len(s.Features))
	secs := make([]section, len(s.Features))
	total := head.Len()
	for i := range s.Features {
		rows[i] = tableRow(&s.Features[i])
		secs[i] = featureSection(s, &s.Features[i])
		total += len(rows[i]) + len(secs[i].whole())
	}
	if maxBytes == 0 || total <= maxBytes {
		var b strings.Builder
		b.WriteString(head.String())
		for _, r := range rows {
			b.WriteString(r)
		}
		for _, sec := range secs {
			b.WriteString(sec.whole())
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	_, err := io.WriteString(w, boundedMarkdown(s, head.String(), rows, secs, maxBytes))
	return err
}

// tableRow is f's line in the summary's table.
func tableRow(f *Feature) string {
	in := text.MarkdownInline
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
	outcome := outcomeLabel(f)
	if !f.OK() {
		outcome = "**" + outcome + "**"
	}
	return fmt.Sprintf("| %s | %s | %s | %s | %s | %s |\n", in(f.Feature), outcome, exp, gates, verify, record)
}

// outcomeLabel is what the summary calls f's standing.
func outcomeLabel(f *Feature) string {
	switch {
	case f.Problem != "":
		return ProblemLabel(f)
	case f.Outcome == examine.None:
		return "not examined"
	}
	return text.MarkdownInline(string(f.Outcome))
}

// section is one feature's <details>: open and close enclose the parts,
// which are whole and can be cut only between them (parts[0] is never
// left out of a cut section).
type section struct {
	feature     string
	open, close string
	parts       []string
	// labels name parts[1:] for the line that says where a brief was cut.
	labels []string
}

func (sec section) whole() string {
	return sec.open + strings.Join(sec.parts, "") + sec.close
}

// cut returns the section holding as many leading parts as fit in n
// bytes, at least the first two (a brief's facts and its first
// expectation), and a line saying what was left out; false when those do
// not fit.
func (sec section) cut(n int, maxBytes int) (string, bool) {
	var b strings.Builder
	b.WriteString(sec.open)
	b.WriteString(sec.parts[0])
	k := 1
	for ; k < len(sec.parts); k++ {
		if b.Len()+len(sec.parts[k])+len(sec.close)+cutLineMax > n {
			break
		}
		b.WriteString(sec.parts[k])
	}
	if k < 2 {
		return "", false
	}
	if k == len(sec.parts) {
		b.WriteString(sec.close)
		return b.String(), b.Len() <= n
	}
	left := sec.labels[k-1:]
	what := "the diagnostic"
	if rows := len(left) - 1; rows > 0 {
		what = fmt.Sprintf("%s from %s on, and the diagnostic", text.Plural(rows, "expectation", "expectations"), left[0])
	}
	fmt.Fprintf(&b, "\n**Cut here** to stay within %d bytes: %s left out; the note at the end says how to read it whole.\n", maxBytes, what)
	b.WriteString(sec.close)
	if b.Len() > n {
		return "", false
	}
	return b.String(), true
}

// cutLineMax bounds the line a cut section ends with.
const cutLineMax = 256

// featureSection folds what the summary says of f under a <details>
// whose summary line is "feature: outcome".
func featureSection(s *Status, f *Feature) section {
	in := text.MarkdownInline
	sec := section{feature: f.Feature, close: "\n</details>\n"}
	summary := in(f.Feature) + ": " + outcomeLabel(f)
	switch {
	case f.Problem != "":
		sec.parts = []string{text.MarkdownBlock(f.Problem) + "\n"}
	case f.examination == nil:
		summary = in(f.Feature) + ": not examined at this commit"
		sec.parts = []string{fmt.Sprintf("Examine it: %s.\n",
			text.MarkdownCode("git nwdes examine open --feature "+f.Feature+" --candidate "+text.Short(s.Commit)))}
	default:
		sec.parts = markdownBriefParts(f.examination)
		for _, r := range f.examination.Rows {
			sec.labels = append(sec.labels, in(string(r.Expectation)))
		}
		sec.labels = append(sec.labels, "the diagnostic")
	}
	sec.open = "\n<details><summary>" + summary + "</summary>\n\n"
	return sec
}

// noteMax bounds the note that ends a cut summary; each list of names in
// it holds at most noteNamesMax bytes.
const (
	noteMax      = 1536
	noteNamesMax = 300
)

// boundedMarkdown assembles at most maxBytes of the summary: the heading
// and the table's head, as many table rows as fit, the sections that fit
// whole in feature order, then cut ones in the room left, and a note
// naming what was left out.
func boundedMarkdown(s *Status, head string, rows []string, secs []section, maxBytes int) string {
	room := maxBytes - len(head) - noteMax
	kept := 0
	for kept < len(rows) && len(rows[kept]) <= room {
		room -= len(rows[kept])
		kept++
	}
	out := make([]string, len(secs))
	for i, sec := range secs {
		if w := sec.whole(); len(w) <= room {
			out[i], room = w, room-len(w)
		}
	}
	var partial, omitted []string
	for i, sec := range secs {
		if out[i] != "" {
			continue
		}
		if sec.labels == nil {
			omitted = append(omitted, sec.feature)
			continue
		}
		if c, ok := sec.cut(room, maxBytes); ok {
			out[i], room = c, room-len(c)
			partial = append(partial, sec.feature)
			continue
		}
		omitted = append(omitted, sec.feature)
	}
	var b strings.Builder
	b.WriteString(head)
	for _, r := range rows[:kept] {
		b.WriteString(r)
	}
	for _, o := range out {
		b.WriteString(o)
	}
	var left []string
	if n := len(rows) - kept; n > 0 {
		left = append(left, fmt.Sprintf("the table's %s from %s on", text.Plural(n, "row", "rows"), text.MarkdownInline(s.Features[kept].Feature)))
	}
	if len(omitted) > 0 {
		left = append(left, "the "+plural(len(omitted), "section")+" of "+names(omitted))
	}
	if len(partial) > 0 {
		left = append(left, "part of the "+plural(len(partial), "brief")+" of "+names(partial))
	}
	fmt.Fprintf(&b, "\n---\n\n**Cut to stay within %d bytes:** left out %s. Read it whole with %s, or the briefs with %s after %s.\n",
		maxBytes, strings.Join(left, "; "),
		text.MarkdownCode("git nwdes export --commit "+s.Commit+" --format markdown --max-bytes 0"),
		text.MarkdownCode("git log -1 --notes=nwdes "+s.Commit), text.MarkdownCode("git nwdes fetch"))
	return b.String()
}

// plural is noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}

// names lists features for the note, escaped, in at most noteNamesMax
// bytes and a count of the rest.
func names(features []string) string {
	var b strings.Builder
	for i, f := range features {
		n := text.MarkdownInline(f)
		if i > 0 && b.Len()+len(n)+2 > noteNamesMax {
			fmt.Fprintf(&b, " and %d more", len(features)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(n)
	}
	return b.String()
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
	return strings.Join(markdownBriefParts(ex), "")
}

// markdownBriefParts is markdownBrief in the parts a size bound may cut
// it at: the heading and the examination's facts, each expectation with
// the texts it cites, and the diagnostic.
func markdownBriefParts(ex *examine.Examination) []string {
	in := text.MarkdownInline
	var parts []string
	var b strings.Builder
	fmt.Fprintf(&b, "## nwdes acceptance brief: %s: %s\n\n", in(ex.Feature), in(string(ex.Outcome)))
	fmt.Fprintf(&b, "- candidate: %s\n- contract: %s (blob %s)\n- closed: %s\n",
		in(ex.Candidate), in(ex.ContractPath), in(text.Short(ex.ContractBlob)), in(ex.ClosedAt))
	for _, r := range ex.Rows {
		parts = append(parts, b.String())
		b.Reset()
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
	parts = append(parts, b.String())
	return append(parts, fmt.Sprintf("\n### diagnostic\n\n%s\n", text.MarkdownBlock(strings.TrimRight(ex.Diagnostic, "\n"))))
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
