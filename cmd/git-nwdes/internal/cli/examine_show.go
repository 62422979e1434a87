package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/refusal"
)

// examineShowOptions are examine show's flags.
type examineShowOptions struct {
	Feature string
	JSON    bool
}

func (s *session) examineShowCmd() *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "show the draft and the last published examination",
		UsageText: "git nwdes examine show [--feature F] [--json]",
		Description: `EXAMPLES
   git nwdes examine show --feature greeting
   git nwdes examine show --feature greeting --json
` + exitStatus(),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "feature", Usage: "the feature `NAME` (may be left out when HEAD has one contract)"},
			jsonFlag(),
		},
		Action: func(c *cli.Context) error {
			return s.examineShow(c, examineShowOptions{Feature: c.String("feature"), JSON: s.wantJSON(c)})
		},
	}
}

func (s *session) examineShow(c *cli.Context, o examineShowOptions) error {
	x, err := s.examiner()
	if err != nil {
		return err
	}
	feature := o.Feature
	if feature == "" {
		cand, err := examine.Load(x.Store, examine.Target{})
		if err != nil {
			return err
		}
		feature = cand.Feature
	}
	c.Set("feature", feature)
	d, ex, err := x.Show(feature)
	if err != nil {
		return err
	}
	if d == nil && ex == nil {
		return refusal.New(refusal.MissingFact, fmt.Sprintf("open one: git nwdes examine open --feature %s", feature),
			"feature %s has no draft and no published examination", feature)
	}
	if o.JSON {
		return writeJSON(s.env.Stdout, map[string]any{"draft": draftJSON(d), "published": examinationJSON(ex)})
	}
	s.withPager(false, func(w io.Writer) { s.renderShowTo(w, feature, d, ex) })
	return nil
}

// renderShowTo prints the draft and the published examination for people.
// Every text from a record is escaped: one-line values with
// text.TerminalLine, observations quoted (%q escapes as TerminalLine
// does), and the brief, which keeps its lines, with text.Terminal.
func (s *session) renderShowTo(w io.Writer, feature string, d *examine.Draft, ex *examine.Examination) {
	s.renderDraftTo(w, feature, d)
	if ex == nil {
		fmt.Fprintln(w, "\nno published examination")
		return
	}
	fmt.Fprintf(w, "\npublished: %s\n\n%s", text.TerminalLine(ex.Path), text.Terminal(examine.RenderBrief(ex)))
}

func (s *session) renderDraftTo(w io.Writer, feature string, d *examine.Draft) {
	esc := text.TerminalLine
	if d == nil {
		fmt.Fprintf(w, "feature %s has no draft\n", esc(feature))
		return
	}
	at := ""
	if d.Candidate != "" {
		at = " at " + text.Short(d.Candidate)
	}
	fmt.Fprintf(w, "draft of %s%s: %s, %s\n", esc(feature), at,
		text.Plural(len(d.Observations), "observation", "observations"), text.Plural(len(d.Verdicts), "verdict", "verdicts"))
	for _, o := range d.Observations {
		where := ""
		if o.Commit != d.Candidate {
			// Made at another commit: cited only once carried over.
			where = " at " + text.Short(o.Commit)
			if o.Commit == "" {
				where = " at an unrecorded commit"
			}
			if o.Carried {
				where += ", carried over"
			}
		}
		fmt.Fprintf(w, "  %s (%s%s) %q\n", esc(string(o.ID)), esc(string(o.Source)), where, text.Truncate(string(o.Text), 70))
	}
	for _, v := range d.Verdicts {
		extra := string(v.Class)
		if v.Reason != "" {
			extra = "reason: " + v.Reason
		}
		var cites []string
		for _, o := range v.Observations {
			cites = append(cites, string(o))
		}
		fmt.Fprintf(w, "  %s %s %s cites [%s]\n", esc(string(v.Expectation)), esc(string(v.Verdict)), esc(extra), esc(strings.Join(cites, " ")))
	}
	if open := unjudged(d); len(open) > 0 {
		fmt.Fprintf(w, "  not yet judged: %s\n", esc(strings.Join(open, ", ")))
	}
}

// unjudged lists the expectations of the draft's contract that have no
// verdict yet.
func unjudged(d *examine.Draft) []string {
	has := map[examine.ExpectationID]bool{}
	for _, v := range d.Verdicts {
		has[v.Expectation] = true
	}
	out := []string{}
	for _, r := range d.Rows {
		if !has[r] {
			out = append(out, string(r))
		}
	}
	return out
}

type observationJSON struct {
	ID      examine.ObservationID `json:"id"`
	Source  examine.Source        `json:"source"`
	Commit  string                `json:"commit,omitempty"`
	Carried bool                  `json:"carried,omitempty"`
	Gate    *examine.GateCitation `json:"gate,omitempty"`
	Text    string                `json:"text"`
}

func draftJSON(d *examine.Draft) any {
	if d == nil {
		return nil
	}
	obs := []observationJSON{}
	for _, o := range d.Observations {
		obs = append(obs, observationJSON{o.ID, o.Source, o.Commit, o.Carried, o.Gate, string(o.Text)})
	}
	return map[string]any{"feature": d.Feature, "candidate": d.Candidate, "observations": obs, "verdicts": d.Verdicts,
		"rows": d.Rows, "unjudged": unjudged(d)}
}

func examinationJSON(ex *examine.Examination) any {
	if ex == nil {
		return nil
	}
	texts := []map[string]string{}
	for _, t := range ex.Texts {
		texts = append(texts, map[string]string{"source": string(t.Source), "text": string(t.Text)})
	}
	out := map[string]any{
		"feature": ex.Feature, "candidate": ex.Candidate, "contract_path": ex.ContractPath,
		"contract_blob": ex.ContractBlob, "outcome": ex.Outcome, "diagnostic": ex.Diagnostic,
		"closed_at": ex.ClosedAt, "rows": ex.Rows, "texts": texts, "record": ex.Path,
	}
	if s := examine.SignedBy(ex); s != "" {
		out["signature"] = s
	}
	return out
}
