package cli

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/swarm"
)

// swarmAddOptions are swarm add's flags (--best-effort is read where the
// card's TEST runs, by cardCheckOptions).
type swarmAddOptions struct {
	Card     string
	Deadline time.Duration
	Worker   string
}

func (s *session) swarmAddCmd() *cli.Command {
	return &cli.Command{
		Name:      "add",
		Usage:     "check a card (as swarm card check) and queue it",
		UsageText: "git nwdes swarm add --card FILE [--deadline D] [--worker FILE] [--best-effort]",
		Description: `Checks the card as swarm card check does, naming every problem at once
(CardInvalid; a TEST oracle is run at BASE inside the wall), then queues
it (its label must be new: CardExists). --deadline overrides the card's
DEADLINE: and the worker's.

EXAMPLES
   git nwdes swarm add --card cards/fix-typo.md
   git nwdes swarm add --card cards/big.md --deadline 2h
` + exitStatus(),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "card", Usage: "the card `FILE`", Required: true},
			durationFlag("deadline", "the job's deadline `D` (default: the card's, else the worker's)", 0),
			&cli.StringFlag{Name: "worker", Usage: "hold DEADLINE to the earlier jobs of the worker described in `FILE`"},
			&cli.BoolFlag{Name: "best-effort", Usage: "run TEST where the kernel cannot enforce the whole wall"},
		},
		Action: func(c *cli.Context) error {
			return s.swarmAdd(c, swarmAddOptions{Card: c.String("card"), Deadline: c.Duration("deadline"), Worker: c.String("worker")})
		},
	}
}

func (s *session) swarmAdd(c *cli.Context, o swarmAddOptions) error {
	st, err := s.open()
	if err != nil {
		return err
	}
	b, err := s.readFileArg(o.Card, cardLimit)
	if err != nil {
		return err
	}
	if o.Deadline < 0 {
		return usagef("--deadline must be positive")
	}
	opts, err := s.cardCheckOptions(c, st, o.Worker, examine.DefaultGateTimeout)
	if err != nil {
		return err
	}
	opts.Deadline = o.Deadline
	check, err := swarm.AddCard(c.Context, b, opts, s.owner(), s.now())
	if err != nil {
		return err
	}
	s.warnCard(check)
	fmt.Fprintf(s.env.Stdout, "queued %s at %s\n", text.TerminalLine(check.Card.Label), check.Card.Sha12)
	return nil
}
