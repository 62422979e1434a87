package cli

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/examine"
)

// verdictSetOptions are examine verdict set's flags.
type verdictSetOptions struct {
	Target  examine.Target
	Verdict examine.VerdictInput
}

func (s *session) examineVerdictCmd() *cli.Command {
	return &cli.Command{
		Name:  "verdict",
		Usage: "set the verdict on an expectation",
		Subcommands: []*cli.Command{{
			Name:      "set",
			Usage:     "set (or replace) the verdict on one expectation",
			UsageText: "git nwdes examine verdict set --feature F --expectation E<n> --verdict met|unmet|not_examined [--class C] [--reason R] [--observation O<n> ...]",
			Description: `met and unmet cite at least one recorded observation; unmet also takes
--class (oracle_gap, product_violation, expectation_defect, observation_gap,
unstable); not_examined takes --reason and cites nothing.

EXAMPLES
   git nwdes examine verdict set --feature greeting --expectation E1 --verdict met --observation O1
   git nwdes examine verdict set --feature greeting --expectation E2 --verdict unmet --class product_violation --observation O2
   git nwdes examine verdict set --feature greeting --expectation E3 --verdict not_examined --reason "needs a network"
` + exitStatus(),
			Flags: append(targetFlags(),
				&cli.StringFlag{Name: "expectation", Usage: "the expectation `E<n>`", Required: true},
				&cli.StringFlag{Name: "verdict", Usage: "met, unmet or not_examined", Required: true},
				&cli.StringFlag{Name: "class", Usage: "why unmet: oracle_gap, product_violation, expectation_defect, observation_gap, unstable"},
				&cli.StringFlag{Name: "reason", Usage: "why not examined"},
				&cli.StringSliceFlag{Name: "observation", Usage: "cite observation `O<n>` (repeatable)"},
			),
			Action: func(c *cli.Context) error {
				o := verdictSetOptions{Target: target(c), Verdict: examine.VerdictInput{
					Expectation: examine.ExpectationID(c.String("expectation")), Verdict: examine.Verdict(c.String("verdict")),
					Class: examine.Class(c.String("class")), Reason: c.String("reason"),
				}}
				for _, id := range c.StringSlice("observation") {
					o.Verdict.Observations = append(o.Verdict.Observations, examine.ObservationID(id))
				}
				return s.verdictSet(c.Context, o)
			},
		}},
	}
}

func (s *session) verdictSet(ctx context.Context, o verdictSetOptions) error {
	return s.withExaminer(func(x *examine.Examiner) (*examine.Result, error) {
		return x.SetVerdict(ctx, o.Target, o.Verdict)
	})
}
