package cli

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/swarm"
)

// swarmReleaseOptions are swarm release's flags.
type swarmReleaseOptions struct {
	Card   string
	Force  bool
	Remote string
}

func (s *session) swarmReleaseCmd() *cli.Command {
	return &cli.Command{
		Name:      "release",
		Usage:     "release a lease (a live one only with --force)",
		UsageText: "git nwdes swarm release --card LABEL [--force] [--remote NAME]",
		Description: `EXAMPLES
   git nwdes swarm release --card fix-typo
   git nwdes swarm release --card fix-typo --force --remote origin
` + exitStatus(),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "card", Usage: "the card `LABEL`", Required: true},
			&cli.BoolFlag{Name: "force", Usage: "release it even while its holder lives"},
			swarmRemoteFlag(),
		},
		Action: func(c *cli.Context) error {
			return s.swarmRelease(c, swarmReleaseOptions{Card: c.String("card"), Force: c.Bool("force"), Remote: c.String("remote")})
		},
	}
}

func (s *session) swarmRelease(c *cli.Context, o swarmReleaseOptions) error {
	st, err := s.open()
	if err != nil {
		return err
	}
	q, err := s.leaseQuery(st, o.Remote)
	if err != nil {
		return err
	}
	if err := swarm.ReleaseLease(c.Context, q, o.Card, o.Force); err != nil {
		return err
	}
	fmt.Fprintf(s.env.Stdout, "released %s\n", text.TerminalLine(o.Card))
	return nil
}
