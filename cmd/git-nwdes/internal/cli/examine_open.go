package cli

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/examine"
)

// examineOpenOptions are examine open's flags.
type examineOpenOptions struct {
	Target      examine.Target
	FromCurrent bool
	Retarget    bool
}

func (s *session) examineOpenCmd() *cli.Command {
	return &cli.Command{
		Name:      "open",
		Usage:     "start a draft examination of a feature",
		UsageText: "git nwdes examine open --feature F [--from-current | --retarget] [--candidate REV] [--contract PATH]",
		Description: `Starts a draft of the candidate commit (HEAD unless --candidate): the
draft records which commit it examines, and every observation the commit
it was made at. A feature that already has a draft of this candidate is
left as it is (exit 0); one whose draft examines another commit is refused
(CandidateMoved), since evidence belongs to the commit it was observed at.
--retarget moves the draft to this candidate: observations keep the commit
they were made at, and one made elsewhere is cited only after
examine observation carry (the brief then says where it was observed).
--from-current replaces the draft with one rebuilt from the feature's last
published examination: its cited texts as observations of the commit they
were made at, its verdicts kept for expectations the contract still has.

EXAMPLES
   git nwdes examine open --feature greeting
   git nwdes examine open --feature greeting --retarget
   git nwdes examine open --feature greeting --from-current
` + exitStatus(),
		Flags: append(targetFlags(),
			&cli.BoolFlag{Name: "from-current", Usage: "rebuild the draft from the last published examination"},
			&cli.BoolFlag{Name: "retarget", Usage: "move the draft to this candidate"}),
		Action: func(c *cli.Context) error {
			return s.examineOpen(c.Context, examineOpenOptions{Target: target(c), FromCurrent: c.Bool("from-current"), Retarget: c.Bool("retarget")})
		},
	}
}

func (s *session) examineOpen(ctx context.Context, o examineOpenOptions) error {
	return s.withExaminer(func(x *examine.Examiner) (*examine.Result, error) {
		if !o.Retarget {
			return x.Open(ctx, o.Target, o.FromCurrent)
		}
		if o.FromCurrent {
			return nil, usagef("give one of --from-current and --retarget")
		}
		return x.Retarget(ctx, o.Target)
	})
}
