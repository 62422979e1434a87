package cli

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/swarm"
)

// swarmStatusOptions are swarm status's flags.
type swarmStatusOptions struct {
	Remote string
	JSON   bool
}

func (s *session) swarmStatusCmd() *cli.Command {
	return &cli.Command{
		Name:      "status",
		Usage:     "the queue, the leases and the finished jobs (each with its harvested head)",
		UsageText: "git nwdes swarm status [--remote NAME] [--json]",
		Description: `EXAMPLES
   git nwdes swarm status
   git nwdes swarm status --json
` + exitStatus(),
		Flags: []cli.Flag{swarmRemoteFlag(), jsonFlag()},
		Action: func(c *cli.Context) error {
			return s.swarmStatus(c, swarmStatusOptions{JSON: s.wantJSON(c), Remote: c.String("remote")})
		},
	}
}

func (s *session) swarmStatus(c *cli.Context, o swarmStatusOptions) error {
	st, err := s.open()
	if err != nil {
		return err
	}
	q, err := s.leaseQuery(st, o.Remote)
	if err != nil {
		return err
	}
	r, err := swarm.ReadStatus(c.Context, q)
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(s.env.Stdout, r)
	}
	s.renderSwarmStatus(r)
	return nil
}

// renderSwarmStatus prints the report: the queue, the stop and drop records,
// the blocked cards, what was spent, the leases, the jobs, then each
// card's lineage.
func (s *session) renderSwarmStatus(r *swarm.Report) {
	w := s.env.Stdout
	fmt.Fprintf(w, "queued: %d", len(r.Queued))
	if len(r.Queued) > 0 {
		fmt.Fprintf(w, " (%s)", text.TerminalLine(strings.Join(r.Queued, ", ")))
	}
	fmt.Fprintln(w)
	if len(r.Stopped) > 0 {
		fmt.Fprintf(w, "stopped: %s\n", text.TerminalLine(strings.Join(r.Stopped, ", ")))
	}
	if len(r.Dropped) > 0 {
		fmt.Fprintf(w, "dropped: %s\n", text.TerminalLine(strings.Join(r.Dropped, ", ")))
	}
	for _, label := range slices.Sorted(maps.Keys(r.Blocked)) {
		fmt.Fprintln(w, text.TerminalLine("blocked "+label+": "+r.Blocked[label]))
	}
	if r.SpentJobs > 0 {
		fmt.Fprintf(w, "spent: %s (reported by %s of %d)\n", spentText(r.Spent), text.Plural(r.SpentJobs, "job", "jobs"), len(r.Jobs))
	}
	for _, l := range r.Leases {
		fmt.Fprintf(w, "lease %-9s %s attempt %d on %s\n", l.State, text.TerminalLine(l.Label), l.Attempt, text.TerminalLine(l.Host))
	}
	for _, j := range r.Jobs {
		fmt.Fprintln(w, text.TerminalLine(jobLine(j)))
	}
	s.printLineage(r.Lineage, r.LineageLeftOut)
}

// jobLine is one job as swarm status lists it.
func jobLine(r swarm.JobRow) string {
	line := fmt.Sprintf("job %s #%d: %s, result %s", r.Card, r.Attempt, r.End, r.Result)
	if r.Reason != "" {
		line += " (" + r.Reason + ")"
	}
	if r.ExitCheck != "ok" {
		line += "; exit record: " + r.ExitCheck
	}
	switch {
	case r.Journal != "":
		line += "; journal " + r.Journal
	case r.Head != "":
		line += fmt.Sprintf("; head %s (%s, %s, %s changed)", text.Short(r.Head), r.Harvest,
			text.Plural(r.Commits, "commit", "commits"), text.Plural(r.ChangedCount, "path", "paths"))
	case r.Harvest == swarm.HarvestNone:
		line += "; no commits"
	case r.Harvest == swarm.HarvestRefused:
		line += "; harvest refused: " + r.HarvestNote
	}
	if r.OutsideCount > 0 {
		line += fmt.Sprintf("; %s outside PATHS", text.Plural(r.OutsideCount, "path", "paths"))
	}
	if r.Spent != nil {
		line += "; spent " + spentText(*r.Spent)
	}
	if r.Gate != nil {
		line += "; " + r.Gate.String()
	}
	return line
}
