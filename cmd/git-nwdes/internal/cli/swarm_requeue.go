package cli

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/swarm"
)

// swarmControlOptions are swarm requeue's and swarm drop's argument and
// flag: the card's label and why.
type swarmControlOptions struct {
	Label  string
	Reason string
}

// controlOptions binds a control verb's LABEL and --reason.
func controlOptions(c *cli.Context) (swarmControlOptions, error) {
	label, err := oneLabel(c)
	return swarmControlOptions{Label: label, Reason: c.String("reason")}, err
}

func (s *session) swarmRequeueCmd() *cli.Command {
	return &cli.Command{
		Name:      "requeue",
		Usage:     "run a finished card again, as a new attempt",
		UsageText: "git nwdes swarm requeue [--reason R] LABEL",
		Description: `Writes a requeue record (refs/nwdes/swarm/control): the card's jobs so far
no longer finish it, and the next supervisor runs it as attempt n+1. A
card that is not queued (CardInvalid), dropped (CardDropped) or has no
finished attempt (CardNotFinished) is refused. Push it to reach other
machines.

EXAMPLES
   git nwdes swarm requeue --reason "the harness was misconfigured" fix-typo
` + exitStatus(),
		Flags: []cli.Flag{&cli.StringFlag{Name: "reason", Usage: "why"}},
		Action: func(c *cli.Context) error {
			o, err := controlOptions(c)
			if err != nil {
				return err
			}
			return s.swarmRequeue(c, o)
		},
	}
}

func (s *session) swarmRequeue(c *cli.Context, o swarmControlOptions) error {
	st, err := s.open()
	if err != nil {
		return err
	}
	r, err := swarm.RequeueCard(c.Context, st, o.Label, s.owner(), o.Reason, s.now())
	if err != nil {
		return err
	}
	fmt.Fprintf(s.env.Stdout, "requeued %s (after attempt %d)\n", text.TerminalLine(o.Label), r.After)
	return nil
}

func (s *session) swarmDropCmd() *cli.Command {
	return &cli.Command{
		Name:      "drop",
		Usage:     "never run a card (again)",
		UsageText: "git nwdes swarm drop [--reason R] LABEL",
		Description: `Writes a drop record (refs/nwdes/swarm/control): no supervisor takes the
card again, and one running it ends its job at the next heartbeat. A card
that is not queued is refused (CardInvalid). Push it to reach other
machines.

EXAMPLES
   git nwdes swarm drop --reason "done by hand" fix-typo
` + exitStatus(),
		Flags: []cli.Flag{&cli.StringFlag{Name: "reason", Usage: "why"}},
		Action: func(c *cli.Context) error {
			o, err := controlOptions(c)
			if err != nil {
				return err
			}
			return s.swarmDrop(c, o)
		},
	}
}

func (s *session) swarmDrop(c *cli.Context, o swarmControlOptions) error {
	st, err := s.open()
	if err != nil {
		return err
	}
	if err := swarm.DropCard(c.Context, st, o.Label, s.owner(), o.Reason, s.now()); err != nil {
		return err
	}
	fmt.Fprintf(s.env.Stdout, "dropped %s\n", text.TerminalLine(o.Label))
	return nil
}
