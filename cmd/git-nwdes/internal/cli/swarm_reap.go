package cli

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/swarm"
)

// swarmReapOptions are swarm reap's flags.
type swarmReapOptions struct {
	OlderThan time.Duration
	DryRun    bool
	Remote    string
	JSON      bool
}

func (s *session) swarmReapCmd() *cli.Command {
	return &cli.Command{
		Name:      "reap",
		Usage:     "remove old job directories (their records stay)",
		UsageText: "git nwdes swarm reap [--older-than D] [--dry-run] [--remote NAME] [--json]",
		Description: `Removes the job directories under .git/nwdes/swarm/jobs older than D
(default 168h): those of recorded jobs (the record keeps exit.json and
RESULT.md), and those of attempts that never recorded (a killed
supervisor's) whose lease no longer holds. A directory with a file system
mounted inside it is kept and named; nothing is followed through a link.

EXAMPLES
   git nwdes swarm reap --dry-run
   git nwdes swarm reap --older-than 24h
` + exitStatus(),
		Flags: []cli.Flag{
			durationFlag("older-than", "reap directories older than `D`", 7*24*time.Hour),
			&cli.BoolFlag{Name: "dry-run", Usage: "name what would be removed, remove nothing"},
			swarmRemoteFlag(), jsonFlag(),
		},
		Action: func(c *cli.Context) error {
			return s.swarmReap(c, swarmReapOptions{JSON: s.wantJSON(c), OlderThan: c.Duration("older-than"), DryRun: c.Bool("dry-run"), Remote: c.String("remote")})
		},
	}
}

func (s *session) swarmReap(c *cli.Context, o swarmReapOptions) error {
	st, err := s.open()
	if err != nil {
		return err
	}
	me, err := swarm.Self(s.owner())
	if err != nil {
		return err
	}
	r, err := swarm.Reap(c.Context, st, s.book(st, o.Remote), filepath.Join(st.Location().CommonDir, "nwdes", "swarm", "jobs"), me, o.OlderThan, s.now(), o.DryRun)
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(s.env.Stdout, r)
	}
	verb := "removed"
	if o.DryRun {
		verb = "would remove"
	}
	for _, d := range r.Removed {
		fmt.Fprintf(s.env.Stdout, "%s %s\n", verb, text.TerminalLine(d))
	}
	for _, d := range r.Kept {
		fmt.Fprintf(s.env.Stdout, "kept %s\n", text.TerminalLine(d))
	}
	return nil
}
