package workspace

import (
	"fmt"
	"strings"

	"github.com/nwdes/nwdes/examine"
)

// Bundle is what an examiner is given: the task and its rules, the
// feature's expectations, the commands it may probe, the verbs to use, and
// the workspace. It holds no source, diff, checkout path or private plan.
type Bundle struct {
	Feature      string        `json:"feature"`
	Candidate    string        `json:"candidate"`
	Workspace    string        `json:"workspace"`
	Projection   string        `json:"projection"`
	PublicFiles  int           `json:"public_files"`
	Expectations []Expectation `json:"expectations"`
	Commands     []string      `json:"commands"`
	Verbs        []string      `json:"verbs"`
	Task         []string      `json:"task"`
}

// Expectation is one E ID and what it asks.
type Expectation struct {
	ID   examine.ExpectationID `json:"id"`
	Text string                `json:"text"`
}

// NewBundle assembles the bundle of a prompt.
func NewBundle(c *examine.Candidate, w *examine.Workspace, p *examine.Projection, commands []string) *Bundle {
	f := c.Feature
	b := &Bundle{
		Feature: f, Candidate: c.Commit.String(), Workspace: w.Path, Projection: p.Tree.String(),
		PublicFiles: len(p.Files), Commands: append([]string{}, commands...),
		Verbs: []string{
			"git nwdes examine read --workspace " + w.Path + " [PATH]",
			"git nwdes examine probe --workspace " + w.Path + " -- NAME [ARGS...]",
			"git nwdes examine observation add --feature " + f + " --text TEXT",
			"git nwdes examine verdict set --feature " + f + " --expectation E1 --verdict met --observation O1",
			"git nwdes examine close --feature " + f + " --outcome accepted --diagnostic TEXT",
		},
		Task: []string{
			"Judge feature " + f + " from a user's point of view: only what the candidate makes public counts.",
			"Gather evidence in the workspace alone: read its public prose with examine read, run the candidate's declared commands with examine probe. Do not look at source, diffs, plans or the producer's judgments.",
			"Keep fixtures and anything you write in the workspace's scratch directory; a probed command runs there, with scratch as its HOME and TMPDIR, and its arguments must stay inside the workspace.",
			"Record each observation with examine observation add before you cite it, and cite the O ID it prints.",
			"Set a verdict on every expectation: met or unmet citing observations (unmet with its class), or not_examined with a reason.",
			"Close with --outcome accepted: nwdes publishes the outcome your verdicts derive. A successful close removes this workspace.",
			"Remove only what you created outside the workspace for this examination, and name anything you could not remove.",
		},
	}
	if b.Commands == nil {
		b.Commands = []string{}
	}
	for _, cr := range c.Contract.Criteria {
		b.Expectations = append(b.Expectations, Expectation{ID: cr.ID, Text: cr.Text})
	}
	if b.Expectations == nil {
		b.Expectations = []Expectation{}
	}
	return b
}

// Text renders the bundle for a person or an agent's prompt: TASK, the
// expectations, the commands, the verbs, and last the WORKSPACE: line.
func (b *Bundle) Text() string {
	var s strings.Builder
	fmt.Fprintf(&s, "TASK\n")
	for _, t := range b.Task {
		fmt.Fprintf(&s, "- %s\n", t)
	}
	fmt.Fprintf(&s, "\nEXPECTATIONS (feature %s, candidate %s)\n", b.Feature, b.Candidate)
	for _, e := range b.Expectations {
		fmt.Fprintf(&s, "%s: %s\n", e.ID, e.Text)
	}
	fmt.Fprintf(&s, "\nPUBLIC: %d files of projection %s under public/\n", b.PublicFiles, b.Projection)
	if len(b.Commands) == 0 {
		fmt.Fprintf(&s, "COMMANDS: none declared (examine probe refuses every command)\n")
	} else {
		fmt.Fprintf(&s, "COMMANDS: %s\n", strings.Join(b.Commands, ", "))
	}
	fmt.Fprintf(&s, "\nVERBS\n")
	for _, v := range b.Verbs {
		fmt.Fprintf(&s, "%s\n", v)
	}
	fmt.Fprintf(&s, "\nWORKSPACE: %s\n", b.Workspace)
	return s.String()
}
