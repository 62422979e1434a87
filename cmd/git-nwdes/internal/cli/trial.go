package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/ledger"
	"github.com/nwdes/nwdes/trial"
)

// preflightOptions are trial preflight's flags.
type preflightOptions struct {
	Start  string
	Ledger string
	JSON   bool
}

func (s *session) trialCmd() *cli.Command {
	return &cli.Command{
		Name:  "trial",
		Usage: "read a trial's preconditions immediately before its dispatch",
		Subcommands: []*cli.Command{{
			Name:      "preflight",
			Usage:     "take the readings the start record asks for: each true, false or unknown",
			UsageText: "git nwdes trial preflight --start START.json [--ledger NAME] [--json]",
			Description: `Readings: the window is ahead and is the one this dispatch opens; the
supervisor process is alive (by its kernel state letter), outside this
session, and advanced its witness; the store is the same store at the start
and the end. A reading that could not be taken is unknown, never false.
With --ledger
the readings are appended to the trial's ledger (kind "preflight"), so the
grade can cite them. See docs/ledgers.md.

EXAMPLES
   git nwdes trial preflight --start start.json
   git nwdes trial preflight --start start.json --ledger trial-7 --json
` + exitStatus(judges("a reading is false"), decides("a reading is unknown, none false")),
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "start", Usage: "the trial's start record `FILE`", Required: true},
				&cli.StringFlag{Name: "ledger", Usage: "append the readings to ledger `NAME`"},
				jsonFlag(),
			},
			Action: func(c *cli.Context) error {
				return s.trialPreflight(c.Context, preflightOptions{Start: c.String("start"), Ledger: c.String("ledger"), JSON: s.wantJSON(c)})
			},
		}},
	}
}

func (s *session) trialPreflight(ctx context.Context, o preflightOptions) error {
	sb, err := s.readFileArg(o.Start, startLimit)
	if err != nil {
		return err
	}
	start, err := trial.ParseStart(sb)
	if err != nil {
		return err
	}
	req, err := trial.RequestFor(start)
	if err != nil {
		return err
	}
	st, err := s.open()
	if err != nil {
		return err
	}
	rd, err := trial.Preflight(ctx, *req, st, s.now)
	if err != nil {
		return err
	}
	if o.Ledger != "" {
		if _, err := ledger.Append(ctx, st, o.Ledger, rd.LedgerEvent(s.now())); err != nil {
			return err
		}
	}
	if o.JSON {
		s.env.Stdout.Write(append(rd.JSON(), '\n'))
	} else {
		for _, r := range rd.List {
			fmt.Fprintf(s.env.Stdout, "%-10s %-7s %s\n", r.Name, r.Answer, text.TerminalLine(r.Detail))
		}
		fmt.Fprintf(s.env.Stdout, "span %s\n", rd.Span.Last.Sub(rd.Span.First).Round(time.Millisecond))
	}
	switch rd.Overall() {
	case trial.AnswerTrue:
		return nil
	case trial.AnswerFalse:
		return negative("a reading is false")
	}
	return undecided("a reading is unknown")
}
