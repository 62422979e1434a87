package cli

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/swarm"
)

// swarmLeasesOptions are swarm leases's flags.
type swarmLeasesOptions struct {
	Remote string
	JSON   bool
}

func (s *session) swarmLeasesCmd() *cli.Command {
	return &cli.Command{
		Name:      "leases",
		Usage:     "list every lease with its state",
		UsageText: "git nwdes swarm leases [--remote NAME] [--json]",
		Description: `States: live (held by a live process on this host, within its time),
drift (its holder is alive but past its time), stranded (its holder on this
host is gone: the card runs again), held (from another host, heartbeat
within the stale window), stale (no heartbeat for the stale window: may be
taken over). With --remote the leases are the remote's, as last fetched.

EXAMPLES
   git nwdes swarm leases
   git nwdes swarm leases --remote origin --json
` + exitStatus(),
		Flags: []cli.Flag{swarmRemoteFlag(), jsonFlag()},
		Action: func(c *cli.Context) error {
			return s.swarmLeases(c, swarmLeasesOptions{JSON: s.wantJSON(c), Remote: c.String("remote")})
		},
	}
}

func (s *session) swarmLeases(c *cli.Context, o swarmLeasesOptions) error {
	st, err := s.open()
	if err != nil {
		return err
	}
	q, err := s.leaseQuery(st, o.Remote)
	if err != nil {
		return err
	}
	rows, err := swarm.Leases(c.Context, q)
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(s.env.Stdout, rows)
	}
	for _, r := range rows {
		fmt.Fprintf(s.env.Stdout, "%-9s %s attempt %d by %s pid %d, heartbeat %s\n", r.State, text.TerminalLine(r.Label), r.Attempt, text.TerminalLine(r.Host), r.PID, r.Heartbeat)
	}
	return nil
}
