package cli

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/swarm"
)

// swarmLoop is swarm run --rework: the producer supervisor sup (its
// events already wired), an examiner supervisor for --examiner, and the
// loop between them (swarm.Loop). It exits 0 when every lineage ended
// accepted (and landed, with --land), 1 (a negative judgment: not
// accepted) when one ended at its bound, for a person, or stopped.
func (s *session) swarmLoop(c *cli.Context, st *gitstore.Store, sup *swarm.Supervisor, strict, asJSON bool) error {
	if c.Bool("follow") {
		return usagef("--rework ends when its lineages end: it does not --follow")
	}
	if c.String("examiner") == "" {
		return usagef("--rework needs --examiner FILE: the worker that examines the heads (nobody certifies their own work)")
	}
	ew, err := s.readWorker(c.String("examiner"))
	if err != nil {
		return err
	}
	ex, err := s.supervisor(c, st, ew, strict)
	if err != nil {
		return err
	}
	ex.Workers = 0 // the examiner's own slots
	limit, err := s.reworkLimit(c)
	if err != nil {
		return err
	}
	q, err := s.reworkQuestion()
	if err != nil {
		return err
	}
	check, err := s.cardCheckOptions(c, st, "", examine.DefaultGateTimeout)
	if err != nil {
		return err
	}
	l := &swarm.Loop{Producer: sup, Examiner: ex, Limit: limit, Question: q, Check: check, By: s.owner(), Now: s.env.Now, Events: sup.Events}
	if remote := c.String("land"); remote != "" {
		o := swarm.LandOptions{Store: st, Remote: remote, Sync: s.mergeOptions(st), Stderr: s.env.Stderr, By: s.owner(), Now: s.env.Now}
		if o.Gates, err = s.gatesMode(); err != nil {
			return err
		}
		if o.Proof, err = s.proofMode(); err != nil {
			return err
		}
		l.Land = func(ctx context.Context, label string) (*swarm.LandResult, error) {
			o := o
			o.Label = label
			return swarm.Land(ctx, o)
		}
	}
	sum, err := l.Run(c.Context)
	if err != nil {
		return err
	}
	if !asJSON {
		fmt.Fprintf(s.env.Stdout, "ran %d jobs (%d stopped)\n", sum.Ran, sum.Stopped)
		for _, r := range sum.Lineages {
			line := fmt.Sprintf("lineage %s: %s", r.Lineage, r.End)
			if r.Candidate != "" {
				line += " at " + text.Short(r.Candidate) + " (head " + text.Short(r.Head) + ", rebased)"
			} else if r.Head != "" {
				line += " at " + text.Short(r.Head)
			}
			line += " (card " + r.Card + "): " + r.Reason
			if r.Landed != "" {
				line += "; " + r.Landed
			}
			fmt.Fprintln(s.env.Stdout, text.TerminalLine(line))
		}
		for _, label := range slices.Sorted(maps.Keys(sum.Skipped)) {
			fmt.Fprintf(s.env.Stderr, "skipped %s: %s\n", text.TerminalLine(label), text.TerminalLine(sum.Skipped[label]))
		}
	}
	if !sum.Accepted() {
		return negative("a lineage was not accepted")
	}
	return nil
}
