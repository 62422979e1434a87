package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/internal/text"
	reports "github.com/nwdes/nwdes/report"
)

// featuresOptions are features's flags.
type featuresOptions struct {
	Commit string
	JSON   bool
}

func (s *session) featuresCmd() *cli.Command {
	return &cli.Command{
		Name:      "features",
		Usage:     "list the feature contracts at a commit: E IDs, oracles, outcome",
		UsageText: "git nwdes features [--commit REV] [--json]",
		Description: `Reads the contracts committed at .nwave/features/*.md in the commit (HEAD
by default) and prints one line per feature: its expectations, how many
carry an oracle, and the outcome of its newest examination at that commit.
A contract that does not parse is listed with the reason.

EXAMPLES
   git nwdes features
   git nwdes features --commit main --json
` + exitStatus(),
		Flags: []cli.Flag{commitFlag(), jsonFlag()},
		Action: func(c *cli.Context) error {
			return s.features(featuresOptions{Commit: c.String("commit"), JSON: s.wantJSON(c)})
		},
	}
}

func (s *session) features(o featuresOptions) error {
	st, err := s.open()
	if err != nil {
		return err
	}
	commit, err := st.Resolve(o.Commit)
	if err != nil {
		return err
	}
	rows, err := reports.Features(st, commit)
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(s.env.Stdout, map[string]any{"commit": commit.String(), "features": rows})
	}
	if len(rows) == 0 {
		fmt.Fprintf(s.env.Stdout, "no feature contract (.nwave/features/*.md) at %s\n", text.Short(commit.String()))
		return nil
	}
	tw := tabwriter.NewWriter(s.env.Stdout, 0, 4, 2, ' ', 0)
	for _, r := range rows {
		detail := fmt.Sprintf("%s (%s)", text.Plural(len(r.Expectations), "expectation", "expectations"), text.Plural(r.Oracles, "oracle", "oracles"))
		if r.Problem != "" {
			detail = text.TerminalLine(r.Problem)
		}
		outcome := r.Outcome
		if outcome == string(examine.None) {
			outcome = "not examined"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", text.TerminalLine(r.Feature), outcome, detail)
	}
	return tw.Flush()
}
