package cli

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/swarm"
)

// swarmShowOptions are swarm show's argument and --attempt (--json is
// read once the job is, below).
type swarmShowOptions struct {
	Label   string
	Attempt int
}

func (s *session) swarmShowCmd() *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "show one job: its result, head, changed paths, timeline and the tail of its log",
		UsageText: "git nwdes swarm show [--attempt N] [--json] LABEL",
		Description: `Reads the job's record (refs/nwdes/swarm/jobs) alone, so it works in any
clone that fetched it: end, result, reason, the harvested head and the
paths it changes, the timeline, and the last 8 KiB of harness.log. The
latest attempt unless --attempt. None recorded is refused (JobNotFound).

EXAMPLES
   git nwdes swarm show fix-typo
   git nwdes swarm show --attempt 1 --json fix-typo
` + exitStatus(),
		Flags: []cli.Flag{intFlag("attempt", "the attempt `N` (default: the latest)", 0), jsonFlag()},
		Action: func(c *cli.Context) error {
			label, attempt, err := labelAndAttempt(c)
			if err != nil {
				return err
			}
			return s.swarmShow(c, swarmShowOptions{Label: label, Attempt: attempt})
		},
	}
}

func (s *session) swarmShow(c *cli.Context, o swarmShowOptions) error {
	st, err := s.open()
	if err != nil {
		return err
	}
	j, err := swarm.ShowJob(st, o.Label, o.Attempt)
	if err != nil {
		return err
	}
	// --json shapes the output from here on: a refusal before the job is
	// read has always been reported as text.
	if s.wantJSON(c) {
		return writeJSON(s.env.Stdout, j)
	}
	return s.renderJob(j)
}

// renderJob prints one job as swarm show shows it.
func (s *session) renderJob(j *swarm.Shown) error {
	w := s.env.Stdout
	line := fmt.Sprintf("job %s #%d: %s, result %s", j.Label, j.Attempt, j.End, j.Result)
	if j.Reason != "" {
		line += " (" + j.Reason + ")"
	}
	fmt.Fprintln(w, text.TerminalLine(line))
	fmt.Fprintln(w, text.TerminalLine(fmt.Sprintf("worker %s, started %s, ended %s", j.Worker, j.Started, j.Ended)))
	switch {
	case j.Head != "":
		fmt.Fprintln(w, text.TerminalLine(fmt.Sprintf("head %s (%s, %s), %s", j.Head, j.Harvest,
			text.Plural(j.Commits, "commit", "commits"), j.HeadRef)))
		fmt.Fprintln(w, text.TerminalLine(fmt.Sprintf("changed (%d):", j.ChangedCount)))
		for _, p := range j.Changed {
			fmt.Fprintln(w, "  "+text.TerminalLine(p))
		}
		if n := j.ChangedCount - len(j.Changed); n > 0 {
			fmt.Fprintf(w, "  … and %d more\n", n)
		}
	case j.Harvest == swarm.HarvestRefused:
		fmt.Fprintln(w, text.TerminalLine("harvest refused: "+j.HarvestNote))
	case j.Harvest != "":
		fmt.Fprintln(w, "no commits")
	}
	if j.OutsideCount > 0 {
		fmt.Fprintln(w, text.TerminalLine(fmt.Sprintf("outside PATHS (%d):", j.OutsideCount)))
		for _, p := range j.Outside {
			fmt.Fprintln(w, "  "+text.TerminalLine(p))
		}
	}
	if j.Spent != nil || j.Budget != "" || j.SpentProblem != "" {
		line := "spent: nothing reported"
		if j.Spent != nil {
			line = "spent: " + spentText(*j.Spent)
		}
		if j.Budget != "" {
			line += " (budget " + j.Budget + ")"
		}
		if j.SpentProblem != "" {
			line += "; " + j.SpentProblem
		}
		fmt.Fprintln(w, text.TerminalLine(line))
	}
	if j.Retry {
		fmt.Fprintln(w, text.TerminalLine("retried: the card runs again after "+j.RetryAfter))
	}
	for _, l := range j.Lost {
		fmt.Fprintln(w, text.TerminalLine("not written: "+l))
	}
	if len(j.Timeline) > 0 {
		fmt.Fprintln(w, "timeline:")
		for _, st := range j.Timeline {
			fmt.Fprintln(w, "  "+text.TerminalLine(strings.TrimSpace(fmt.Sprintf("%s %-9s %s", st.At, st.Step, st.Detail))))
		}
		if j.Renewals > 0 {
			fmt.Fprintf(w, "  (%s)\n", text.Plural(j.Renewals, "renewal", "renewals"))
		}
	}
	if j.LogTail != "" {
		fmt.Fprintf(w, "harness.log (the last %d of %d bytes):\n", len(j.LogTail), j.LogBytes)
		tail := text.Terminal(j.LogTail)
		fmt.Fprint(w, tail)
		if !strings.HasSuffix(tail, "\n") {
			fmt.Fprintln(w)
		}
	}
	return nil
}
