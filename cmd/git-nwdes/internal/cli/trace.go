package cli

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/refusal"
	"github.com/nwdes/nwdes/trace"
)

func storeFlag() cli.Flag {
	return &cli.StringFlag{Name: "store", Usage: "the trace store `NAME` (refs/nwdes/traces/NAME)", Required: true}
}

func idFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "session", Usage: "the session `S` every event must name", Required: true},
		&cli.StringFlag{Name: "attempt", Usage: "the attempt `A` every event must name", Required: true},
	}
}

// traceOptions are the trace verbs' flags and BUNDLE argument.
type traceOptions struct {
	Store   string
	Session string
	Attempt string
	Bundle  []string // the arguments: one BUNDLE file
	Receipt string
	Output  string
	JSON    bool
}

func traceFlags(c *cli.Context) traceOptions {
	return traceOptions{Store: c.String("store"), Session: c.String("session"), Attempt: c.String("attempt"),
		Bundle: c.Args().Slice(), Receipt: c.String("receipt"), Output: c.String("output")}
}

func (s *session) traceCmd() *cli.Command {
	return &cli.Command{
		Name:  "trace",
		Usage: "validate sealed trace bundles and keep them byte for byte",
		Description: `A trace bundle is a bounded canonical document of events (each naming its
session, attempt and trace, each fact recorded, computed, unavailable or
not-applicable) joined by a SHA-256 chain closed by a seal. See
docs/ledgers.md.

EXAMPLES
   git nwdes trace validate --session s1 --attempt a1 bundle.json
   git nwdes trace append --store runs --session s1 --attempt a1 bundle.json
   git nwdes trace read --store runs --receipt sha256:… --output copy.json
` + exitStatusAll(),
		Subcommands: []*cli.Command{
			s.traceValidateCmd(),
			s.traceAppendCmd(),
			s.traceReadCmd(),
			s.traceListCmd(),
		},
	}
}

func (s *session) traceValidateCmd() *cli.Command {
	return &cli.Command{
		Name:      "validate",
		Usage:     "validate a bundle and print its receipt",
		UsageText: "git nwdes trace validate --session S --attempt A BUNDLE",
		Description: `Prints the receipt (canonical JSON bound to the exact bytes), or refuses
naming the first defect (TraceInvalid, exit 1).

EXAMPLES
   git nwdes trace validate --session s1 --attempt a1 bundle.json
` + exitStatus(judges("the bundle is not valid: TraceInvalid, naming the first defect")),
		Flags:  idFlags(),
		Action: func(c *cli.Context) error { return s.traceValidate(traceFlags(c)) },
	}
}

func (s *session) traceValidate(o traceOptions) error {
	b, err := s.bundleArg(o.Bundle)
	if err != nil {
		return err
	}
	r, err := trace.Validate(o.Session, o.Attempt, b)
	if err != nil {
		return findings(err, refusal.TraceInvalid)
	}
	fmt.Fprintf(s.env.Stdout, "%s\n", r.Bytes())
	return nil
}

func (s *session) traceAppendCmd() *cli.Command {
	return &cli.Command{
		Name:      "append",
		Usage:     "validate a bundle and keep it, with its receipt, in a trace store",
		UsageText: "git nwdes trace append --store NAME --session S --attempt A BUNDLE",
		Description: `One compare-and-swap of the store's ref; an identical replay returns the same
storage receipt and adds nothing. A full store refuses (TraceStoreFull).

EXAMPLES
   git nwdes trace append --store runs --session s1 --attempt a1 bundle.json
` + exitStatus(),
		Flags:  append([]cli.Flag{storeFlag()}, idFlags()...),
		Action: func(c *cli.Context) error { return s.traceAppend(c.Context, traceFlags(c)) },
	}
}

func (s *session) traceAppend(ctx context.Context, o traceOptions) error {
	b, err := s.bundleArg(o.Bundle)
	if err != nil {
		return err
	}
	st, err := s.open()
	if err != nil {
		return err
	}
	r, err := (&trace.Store{Store: st}).Append(ctx, o.Store, o.Session, o.Attempt, b)
	if err != nil {
		return err
	}
	out, err := r.Bytes()
	if err != nil {
		return err
	}
	fmt.Fprintf(s.env.Stdout, "%s\n", out)
	return nil
}

func (s *session) traceReadCmd() *cli.Command {
	return &cli.Command{
		Name:      "read",
		Usage:     "write a stored bundle's exact bytes to a new file (mode 0400)",
		UsageText: "git nwdes trace read --store NAME --receipt R --output PATH",
		Description: `Re-checks the receipt against the stored bytes (ReceiptMismatch) and
re-validates them; refuses an output path that exists (OutputExists).

EXAMPLES
   git nwdes trace read --store runs --receipt sha256:… --output copy.json
` + exitStatus(),
		Flags: []cli.Flag{storeFlag(),
			&cli.StringFlag{Name: "receipt", Usage: "the receipt `R` (sha256:…)", Required: true},
			&cli.StringFlag{Name: "output", Usage: "a new file `PATH`", Required: true}},
		Action: func(c *cli.Context) error { return s.traceRead(traceFlags(c)) },
	}
}

func (s *session) traceRead(o traceOptions) error {
	st, err := s.open()
	if err != nil {
		return err
	}
	b, err := (&trace.Store{Store: st}).Read(o.Store, o.Receipt)
	if err != nil {
		return err
	}
	out := o.Output
	if !filepath.IsAbs(out) {
		out = filepath.Join(s.dir, out)
	}
	if err := trace.WriteOut(b, out); err != nil {
		return err
	}
	fmt.Fprintf(s.env.Stdout, "wrote %d bytes to %s\n", len(b), text.TerminalLine(out))
	return nil
}

func (s *session) traceListCmd() *cli.Command {
	return &cli.Command{
		Name:      "list",
		Usage:     "list a trace store's bundles",
		UsageText: "git nwdes trace list --store NAME [--json]",
		Description: `EXAMPLES
   git nwdes trace list --store runs
` + exitStatus(),
		Flags: []cli.Flag{storeFlag(), jsonFlag()},
		Action: func(c *cli.Context) error {
			o := traceFlags(c)
			o.JSON = s.wantJSON(c)
			return s.traceList(o)
		},
	}
}

func (s *session) traceList(o traceOptions) error {
	st, err := s.open()
	if err != nil {
		return err
	}
	entries, err := (&trace.Store{Store: st}).List(o.Store)
	if err != nil {
		return err
	}
	if o.JSON {
		if entries == nil {
			entries = []trace.Entry{}
		}
		return writeJSON(s.env.Stdout, entries)
	}
	for _, e := range entries {
		fmt.Fprintf(s.env.Stdout, "%s %s/%s %d events, %d bytes\n", e.Receipt, text.TerminalLine(e.Session), text.TerminalLine(e.Attempt), e.Count, e.BundleBytes)
	}
	return nil
}

func (s *session) bundleArg(args []string) ([]byte, error) {
	if len(args) != 1 {
		return nil, usagef("name one BUNDLE file")
	}
	return s.readFileArg(args[0], bundleLimit)
}
