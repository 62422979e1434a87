package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/swarm"
)

// cardCheckOptions are swarm card check's flags.
type cardCheckOptions struct {
	Card    string
	Worker  string
	Timeout time.Duration
	JSON    bool
}

func (s *session) swarmCardCmd() *cli.Command {
	return &cli.Command{
		Name:  "card",
		Usage: "check cards",
		Subcommands: []*cli.Command{{
			Name:      "check",
			Usage:     "check a card against this repository, naming every problem",
			UsageText: "git nwdes swarm card check [--worker FILE] [--timeout D] [--best-effort] [--json] CARD",
			Description: `Checks the card as swarm add does, and reports every problem at once
(CardInvalid): line 1 and the headers; BASE a commit of this repository;
PATHS globs inside the tree; each DEPENDS-ON a queued card, with no cycle;
BUDGET's bounds; TEST <feature> E<n> an oracle of the feature's contract
at BASE that is NOT-MET there — run, as gate run runs it, inside the wall
(its evidence is recorded as gate run records it). A DEADLINE below the
95th percentile of earlier jobs with the same TEST (of the worker --worker
describes, when given) is a warning on stderr. Nothing is queued.

EXAMPLES
   git nwdes swarm card check cards/fix-typo.md
   git nwdes swarm card check --worker worker.json --json cards/greet.md
` + exitStatus(),
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "worker", Usage: "hold DEADLINE to the earlier jobs of the worker described in `FILE`"},
				durationFlag("timeout", "end TEST's oracle run after `D`", examine.DefaultGateTimeout),
				&cli.BoolFlag{Name: "best-effort", Usage: "run TEST where the kernel cannot enforce the whole wall"},
				jsonFlag(),
			},
			Action: func(c *cli.Context) error {
				o := cardCheckOptions{Worker: c.String("worker"), Timeout: c.Duration("timeout"), JSON: s.wantJSON(c)}
				if c.NArg() != 1 {
					return usagef("name one CARD file, after the flags")
				}
				o.Card = c.Args().First()
				return s.swarmCardCheck(c, o)
			},
		}},
	}
}

func (s *session) swarmCardCheck(c *cli.Context, o cardCheckOptions) error {
	if o.Timeout <= 0 {
		return usagef("--timeout must be positive")
	}
	st, err := s.open()
	if err != nil {
		return err
	}
	b, err := s.readFileArg(o.Card, cardLimit)
	if err != nil {
		return err
	}
	opts, err := s.cardCheckOptions(c, st, o.Worker, o.Timeout)
	if err != nil {
		return err
	}
	check, err := swarm.CheckCard(c.Context, b, opts)
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(s.env.Stdout, map[string]any{"label": check.Card.Label, "base": check.Card.Base, "warnings": orNoWarnings(check.Warnings)})
	}
	s.warnCard(check)
	fmt.Fprintf(s.env.Stdout, "card %s: ok\n", text.TerminalLine(check.Card.Label))
	return nil
}

// cardCheckOptions is what a card is checked against here: this
// repository, TEST run through the gates in this repository's wall, and
// the worker a DEADLINE is held to.
func (s *session) cardCheckOptions(c *cli.Context, st *gitstore.Store, workerFile string, timeout time.Duration) (swarm.CheckOptions, error) {
	o := swarm.CheckOptions{Store: st}
	if workerFile != "" {
		w, err := s.readWorker(workerFile)
		if err != nil {
			return o, err
		}
		o.Worker = w.Name
	}
	// The wall is made only for a card with a TEST: a card without one
	// is checked, and queued, wherever the wall's configuration stands.
	o.Oracle = func(ctx context.Context, t swarm.TestRef, at oid.ID) (bool, string, error) {
		cfg, err := s.config(st.Location())
		if err != nil {
			return false, "", err
		}
		strict, err := gateStrict(c, cfg) // --best-effort, or nwdes.sandbox.bestEffort
		if err != nil {
			return false, "", err
		}
		wall, err := s.jobWall(strict, cfg)
		if err != nil {
			return false, "", err
		}
		return swarm.GateOracle(st, wall, timeout, s.env.Now)(ctx, t, at)
	}
	return o, nil
}

func (s *session) warnCard(check *swarm.CardCheck) {
	for _, w := range check.Warnings {
		fmt.Fprintf(s.env.Stderr, "warning: card %s: %s\n", text.TerminalLine(check.Card.Label), text.TerminalLine(w))
	}
}

func orNoWarnings(w []string) []string {
	if w == nil {
		return []string{}
	}
	return w
}
