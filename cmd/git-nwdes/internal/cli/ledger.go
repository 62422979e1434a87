package cli

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/ledger"
	"github.com/nwdes/nwdes/refusal"
)

func ledgerFlag() cli.Flag {
	return &cli.StringFlag{Name: "ledger", Usage: "the ledger `NAME` (refs/nwdes/ledgers/NAME)", Required: true}
}

func (s *session) ledgerCmd() *cli.Command {
	return &cli.Command{
		Name:  "ledger",
		Usage: "append-only, hash-chained event ledgers, and grading a trial's window",
		Description: `A ledger keeps events in order with nothing dropped or rewritten after the
fact: each entry carries the SHA-256 of the entry before it, its sequence
number and its own digest. Between clones a ledger only moves forward. See
docs/ledgers.md.

EXAMPLES
   git nwdes ledger append --ledger trial-7 --event '{"at":"2026-11-30T10:00:00Z","kind":"dispatch"}'
   git nwdes ledger verify --ledger trial-7
   git nwdes ledger grade --start start.json --ledger trial-7
` + exitStatusAll(),
		Subcommands: []*cli.Command{
			s.ledgerAppendCmd(),
			s.ledgerShowCmd(),
			s.ledgerVerifyCmd(),
			s.ledgerSealCmd(),
			s.ledgerGradeCmd(),
		},
	}
}

// ledgerAppendOptions are ledger append's flags.
type ledgerAppendOptions struct {
	Ledger    string
	Event     string
	EventFile string
	FromFile  bool // --event-file given
	JSON      bool
}

func (s *session) ledgerAppendCmd() *cli.Command {
	return &cli.Command{
		Name:      "append",
		Usage:     "append one event (a JSON object, stored canonical)",
		UsageText: "git nwdes ledger append --ledger NAME (--event JSON | --event-file PATH) [--json]",
		Description: `EXAMPLES
   git nwdes ledger append --ledger trial-7 --event '{"at":"2026-11-30T10:00:00Z","kind":"dispatch"}'
   git nwdes ledger append --ledger trial-7 --event-file event.json
` + exitStatus(),
		Flags: []cli.Flag{ledgerFlag(),
			&cli.StringFlag{Name: "event", Usage: "the event, a JSON object"},
			&cli.StringFlag{Name: "event-file", Usage: "read the event from `PATH`"},
			jsonFlag()},
		Action: func(c *cli.Context) error {
			o := ledgerAppendOptions{Ledger: c.String("ledger"), Event: c.String("event"), EventFile: c.String("event-file"),
				FromFile: c.IsSet("event-file"), JSON: s.wantJSON(c)}
			if c.IsSet("event") == o.FromFile {
				return usagef("give exactly one of --event and --event-file")
			}
			return s.ledgerAppend(c.Context, o)
		},
	}
}

func (s *session) ledgerAppend(ctx context.Context, o ledgerAppendOptions) error {
	ev := []byte(o.Event)
	if o.FromFile {
		var err error
		if ev, err = s.readFileArg(o.EventFile, eventFileLimit); err != nil {
			return err
		}
	}
	st, err := s.open()
	if err != nil {
		return err
	}
	e, err := ledger.Append(ctx, st, o.Ledger, ev)
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(s.env.Stdout, e)
	}
	fmt.Fprintf(s.env.Stdout, "%d %s\n", e.Seq, e.Digest)
	return nil
}

// ledgerOptions are the flags of ledger show, verify and seal.
type ledgerOptions struct {
	Ledger string
	JSON   bool
}

func (s *session) ledgerShowCmd() *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "print a ledger's entries",
		UsageText: "git nwdes ledger show --ledger NAME [--json]",
		Description: `Every entry's digest and link is checked as it is read (LedgerBroken at
the first break).

EXAMPLES
   git nwdes ledger show --ledger trial-7
` + exitStatus(),
		Flags: []cli.Flag{ledgerFlag(), jsonFlag()},
		Action: func(c *cli.Context) error {
			return s.ledgerShow(ledgerOptions{Ledger: c.String("ledger"), JSON: s.wantJSON(c)})
		},
	}
}

func (s *session) ledgerShow(o ledgerOptions) error {
	st, err := s.open()
	if err != nil {
		return err
	}
	entries, seal, err := ledger.Entries(st, o.Ledger)
	if err != nil {
		return err
	}
	if o.JSON {
		if entries == nil {
			entries = []ledger.Entry{}
		}
		return writeJSON(s.env.Stdout, map[string]any{"ledger": o.Ledger, "entries": entries, "seal": seal})
	}
	for _, e := range entries {
		fmt.Fprintf(s.env.Stdout, "%d %s %s\n", e.Seq, e.Digest[:12], text.TerminalLine(string(e.Event)))
	}
	if seal != nil {
		fmt.Fprintf(s.env.Stdout, "sealed at %s: %d entries, final %s\n", seal.At, seal.Count, seal.Final[:12])
	}
	return nil
}

func (s *session) ledgerVerifyCmd() *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "re-derive every digest and walk the history; exit 1 naming the first break",
		UsageText: "git nwdes ledger verify --ledger NAME [--json]",
		Description: `Names the first break: an entry edited, reordered, dropped or truncated, a
history rewritten, a merge, a foreign parent, entries added after the seal
(LedgerBroken, exit 1).

EXAMPLES
   git nwdes ledger verify --ledger trial-7
` + exitStatus(judges("the chain does not hold: LedgerBroken, naming the first break")),
		Flags: []cli.Flag{ledgerFlag(), jsonFlag()},
		Action: func(c *cli.Context) error {
			return s.ledgerVerify(ledgerOptions{Ledger: c.String("ledger"), JSON: s.wantJSON(c)})
		},
	}
}

func (s *session) ledgerVerify(o ledgerOptions) error {
	s.wholeReadGC()
	st, err := s.open()
	if err != nil {
		return err
	}
	rep, err := ledger.Verify(st, o.Ledger)
	if err != nil {
		return findings(err, refusal.LedgerBroken)
	}
	if o.JSON {
		return writeJSON(s.env.Stdout, rep)
	}
	sealed := ""
	if rep.Sealed {
		sealed = ", sealed"
	}
	fmt.Fprintf(s.env.Stdout, "ledger %s holds: %d entries in %d commits%s, final %s\n", text.TerminalLine(rep.Ledger), rep.Entries, rep.Commits, sealed, rep.Final[:12])
	return nil
}

func (s *session) ledgerSealCmd() *cli.Command {
	return &cli.Command{
		Name:      "seal",
		Usage:     "record the count and final digest; later appends are refused",
		UsageText: "git nwdes ledger seal --ledger NAME",
		Description: `EXAMPLES
   git nwdes ledger seal --ledger trial-7
` + exitStatus(),
		Flags:  []cli.Flag{ledgerFlag()},
		Action: func(c *cli.Context) error { return s.ledgerSeal(c.Context, ledgerOptions{Ledger: c.String("ledger")}) },
	}
}

func (s *session) ledgerSeal(ctx context.Context, o ledgerOptions) error {
	st, err := s.open()
	if err != nil {
		return err
	}
	seal, err := ledger.SealLedger(ctx, st, o.Ledger, s.now())
	if err != nil {
		return err
	}
	fmt.Fprintf(s.env.Stdout, "sealed %s: %d entries, final %s\n", text.TerminalLine(o.Ledger), seal.Count, seal.Final)
	return nil
}
