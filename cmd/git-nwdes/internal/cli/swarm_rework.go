package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/judge"
	"github.com/nwdes/nwdes/refusal"
	"github.com/nwdes/nwdes/swarm"
)

func (s *session) swarmReworkCmd() *cli.Command {
	return &cli.Command{
		Name:      "rework",
		Usage:     "turn a rejected examination or an ECARTS verify of a harvested head into a new card, bounded per lineage",
		UsageText: "git nwdes swarm rework --feature F --candidate C [--limit N] [--label L] [--best-effort] [--json]",
		Description: `Asks the one judgment (as status does) what became of candidate C for
feature F: its published examination, or, with none, the newest verify
recorded for C. A rejected examination, one whose met expectations have
oracles not MET (GateNotMet), or an ECARTS verify becomes a new card,
checked and queued as swarm add does. The card carries every gap: each
unmet expectation with its class and the text of the observations it
cites, each oracle not MET with the end of its output, each file changed
outside the FILE SCOPE. Its headers are BASE: C (the rework starts from
the earlier attempt's work), FEATURE: F, PATHS: the FILE SCOPE,
REWORK-OF: <the card whose job produced C> <n> (its place in the
lineage), and the earlier card's DEADLINE, BUDGET, BRANCH, and TEST when
that oracle is still not MET at C. Its text ends with the lineage's task.
Its label is the lineage's first card's with -r<n>, unless --label.

A lineage holds at most --limit reworks (git config nwdes.swarm.reworks,
default 2); past it the rework is refused (ReworkLimit). What a worker
cannot rework is refused too (NeedsPerson): an abandoned criterion, an
indeterminate examination, an expectation_defect, a vacuous or unproven
oracle, a refused signature, a verify ERROR or only UNVERIFIABLE
criteria, or a C no card's job produced. An accepted C, or a CONFORME
verify, has nothing to rework (NothingToRework). Each refusal says what a
person must decide; nothing is written then.

EXAMPLES
   git nwdes swarm rework --feature greeting --candidate refs/nwdes/swarm/heads/fix/1-0123456789abcdef
   git nwdes swarm rework --feature greeting --candidate 1a2b3c4d --limit 3 --json
` + exitStatus(),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "feature", Usage: "the feature (its contract is .nwave/features/`NAME`.md)", Required: true},
			&cli.StringFlag{Name: "candidate", Usage: "the harvested head `REV` to rework", Required: true},
			intFlag("limit", "at most `N` reworks per lineage (default: git config nwdes.swarm.reworks, else 2)", 0),
			&cli.StringFlag{Name: "label", Usage: "the new card's `LABEL` (default: the lineage's first card's, with -r<n>)"},
			&cli.BoolFlag{Name: "best-effort", Usage: "run a carried TEST where the kernel cannot enforce the whole wall"},
			jsonFlag(),
		},
		Action: func(c *cli.Context) error {
			return s.swarmRework(c, reworkOptions{
				Feature: c.String("feature"), Candidate: c.String("candidate"), Label: c.String("label"), JSON: s.wantJSON(c),
			})
		},
	}
}

// reworkOptions are swarm rework's flags (--limit is read with the
// repository's nwdes.swarm.reworks, by reworkLimit).
type reworkOptions struct {
	Feature, Candidate, Label string
	JSON                      bool
}

func (s *session) swarmRework(c *cli.Context, o reworkOptions) error {
	st, err := s.open()
	if err != nil {
		return err
	}
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
	rw, err := swarm.ReworkCard(c.Context, swarm.ReworkOptions{
		Feature: o.Feature, Candidate: o.Candidate, Limit: limit, Label: o.Label,
		Question: q, Check: check, By: s.owner(), Now: s.now(),
	})
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(s.env.Stdout, rw)
	}
	for _, w := range rw.Warnings {
		fmt.Fprintf(s.env.Stderr, "warning: card %s: %s\n", text.TerminalLine(rw.Label), text.TerminalLine(w))
	}
	fmt.Fprintln(s.env.Stdout, text.TerminalLine(fmt.Sprintf("queued %s at %s: rework %d of at most %d in the lineage of %s (%s); %s",
		rw.Label, text.Short(rw.Base), rw.ReworkOf.N, rw.Limit, rw.Lineage, rw.Outcome, text.Plural(rw.GapsCount, "gap", "gaps"))))
	for _, g := range rw.Gaps {
		fmt.Fprintln(s.env.Stdout, "  "+text.TerminalLine(gapLine(g)))
	}
	return nil
}

// gapLine is one gap as swarm rework lists it.
func gapLine(g swarm.Gap) string {
	parts := []string{string(g.Kind)}
	for _, p := range []string{g.Expectation, g.Class, g.Path} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	line := strings.Join(parts, " ")
	if g.Criterion != "" {
		line += ": " + text.OneLine(g.Criterion)
	}
	return line
}

// reworkLimit is --limit, else git config nwdes.swarm.reworks, else
// swarm.DefaultReworks.
func (s *session) reworkLimit(c *cli.Context) (int, error) {
	if c.IsSet("limit") {
		n := c.Int("limit")
		if n < 0 || n > swarm.MaxReworkNumber {
			return 0, usagef("--limit is from 0 to %d", swarm.MaxReworkNumber)
		}
		return n, nil
	}
	if s.cfg == nil {
		return swarm.DefaultReworks, nil
	}
	v, ok := s.cfg.Get("nwdes.swarm.reworks")
	if !ok {
		return swarm.DefaultReworks, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 || n > swarm.MaxReworkNumber {
		return 0, refusal.New(refusal.ConfigurationMalformed, fmt.Sprintf("set nwdes.swarm.reworks to a whole number from 0 to %d", swarm.MaxReworkNumber),
			"git config nwdes.swarm.reworks is %q", v)
	}
	return n, nil
}

// reworkQuestion is the judgment asked of the candidate, with this
// side's settings, as status asks it.
func (s *session) reworkQuestion() (q judge.Question, err error) {
	q.Now = s.now()
	if q.Proof, err = s.proofMode(); err != nil {
		return q, err
	}
	q.Gates, err = s.gatesMode()
	return q, err
}

// printLineage prints the lineage of each card that has one to show: a
// feature its heads answer to, a rework it is or has. An examine card
// makes no head: its job's line says what it examined.
func (s *session) printLineage(lineage []swarm.CardLineage, left int) {
	for _, l := range lineage {
		if l.Kind == swarm.KindExamine || (l.Feature == "" && l.ReworkOf == nil && len(l.ReworkedBy) == 0) {
			continue
		}
		fmt.Fprintln(s.env.Stdout, text.TerminalLine(l.String()))
	}
	if left > 0 {
		fmt.Fprintf(s.env.Stdout, "lineage: %s more not shown (swarm status --json lists %d)\n", text.Plural(left, "card", "cards"), swarm.MaxLineageCards)
	}
}
