package cli

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/swarm"
)

// swarmStopOptions are swarm stop's and swarm resume's flags: Card is a
// label, or "all" for --all.
type swarmStopOptions struct {
	Card   string
	Reason string
}

func (s *session) swarmStopCmd() *cli.Command {
	return &cli.Command{
		Name:      "stop",
		Usage:     "stop a card, or every card: running jobs end, nothing new is taken",
		UsageText: "git nwdes swarm stop (--card LABEL | --all) [--reason TEXT]",
		Description: `Writes a stop record every supervisor honours at its next heartbeat (push
it with git nwdes push to reach supervisors on other machines). swarm
resume clears it.

EXAMPLES
   git nwdes swarm stop --all --reason "rate limited"
   git nwdes swarm stop --card fix-typo
` + exitStatus(),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "card", Usage: "the card `LABEL`"},
			&cli.BoolFlag{Name: "all", Usage: "every card"},
			&cli.StringFlag{Name: "reason", Usage: "why"},
		},
		Action: func(c *cli.Context) error {
			card, err := cardOrAll(c)
			if err != nil {
				return err
			}
			return s.swarmStop(c, swarmStopOptions{Card: card, Reason: c.String("reason")})
		},
	}
}

func (s *session) swarmStop(c *cli.Context, o swarmStopOptions) error {
	st, err := s.open()
	if err != nil {
		return err
	}
	if err := swarm.SetStop(c.Context, st, swarm.Stop{Card: o.Card, At: s.now().UTC().Format(time.RFC3339Nano), By: s.owner(), Reason: o.Reason}); err != nil {
		return err
	}
	fmt.Fprintf(s.env.Stdout, "stopped %s\n", text.TerminalLine(o.Card))
	return nil
}

func (s *session) swarmResumeCmd() *cli.Command {
	return &cli.Command{
		Name:      "resume",
		Usage:     "clear a stop record",
		UsageText: "git nwdes swarm resume (--card LABEL | --all)",
		Description: `--all clears every stop record.

EXAMPLES
   git nwdes swarm resume --all
` + exitStatus(),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "card", Usage: "the card `LABEL`"},
			&cli.BoolFlag{Name: "all", Usage: "every stop record"},
		},
		Action: func(c *cli.Context) error {
			card, err := cardOrAll(c)
			if err != nil {
				return err
			}
			return s.swarmResume(c, swarmStopOptions{Card: card})
		},
	}
}

func (s *session) swarmResume(c *cli.Context, o swarmStopOptions) error {
	st, err := s.open()
	if err != nil {
		return err
	}
	card := o.Card
	if card == "all" {
		card = "" // every stop record
	}
	if err := swarm.ClearStop(c.Context, st, card); err != nil {
		return err
	}
	fmt.Fprintln(s.env.Stdout, "resumed")
	return nil
}
