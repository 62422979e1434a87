package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/ledger"
	"github.com/nwdes/nwdes/refusal"
	"github.com/nwdes/nwdes/trace"
	"github.com/nwdes/nwdes/trial"
)

func (s *session) ledgerCmd() *cli.Command {
	ledgerFlag := &cli.StringFlag{Name: "ledger", Usage: "the ledger `NAME` (refs/nwdes/ledgers/NAME)", Required: true}
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
			{
				Name:      "append",
				Usage:     "append one event (a JSON object, stored canonical)",
				UsageText: "git nwdes ledger append --ledger NAME (--event JSON | --event-file PATH) [--json]",
				Description: `EXAMPLES
   git nwdes ledger append --ledger trial-7 --event '{"at":"2026-11-30T10:00:00Z","kind":"dispatch"}'
   git nwdes ledger append --ledger trial-7 --event-file event.json
` + exitStatus(),
				Flags: []cli.Flag{ledgerFlag,
					&cli.StringFlag{Name: "event", Usage: "the event, a JSON object"},
					&cli.StringFlag{Name: "event-file", Usage: "read the event from `PATH`"},
					jsonFlag()},
				Action: func(c *cli.Context) error {
					asJSON := s.wantJSON(c)
					if c.IsSet("event") == c.IsSet("event-file") {
						return usagef("give exactly one of --event and --event-file")
					}
					ev := []byte(c.String("event"))
					if c.IsSet("event-file") {
						var err error
						if ev, err = s.readFileArg(c.String("event-file"), eventFileLimit); err != nil {
							return err
						}
					}
					st, err := s.open()
					if err != nil {
						return err
					}
					e, err := ledger.Append(c.Context, st, c.String("ledger"), ev)
					if err != nil {
						return err
					}
					if asJSON {
						return writeJSON(s.env.Stdout, e)
					}
					fmt.Fprintf(s.env.Stdout, "%d %s\n", e.Seq, e.Digest)
					return nil
				},
			},
			{
				Name:      "show",
				Usage:     "print a ledger's entries",
				UsageText: "git nwdes ledger show --ledger NAME [--json]",
				Description: `Every entry's digest and link is checked as it is read (LedgerBroken at
the first break).

EXAMPLES
   git nwdes ledger show --ledger trial-7
` + exitStatus(),
				Flags: []cli.Flag{ledgerFlag, jsonFlag()},
				Action: func(c *cli.Context) error {
					asJSON := s.wantJSON(c)
					st, err := s.open()
					if err != nil {
						return err
					}
					entries, seal, err := ledger.Entries(st, c.String("ledger"))
					if err != nil {
						return err
					}
					if asJSON {
						if entries == nil {
							entries = []ledger.Entry{}
						}
						return writeJSON(s.env.Stdout, map[string]any{"ledger": c.String("ledger"), "entries": entries, "seal": seal})
					}
					for _, e := range entries {
						fmt.Fprintf(s.env.Stdout, "%d %s %s\n", e.Seq, e.Digest[:12], text.TerminalLine(string(e.Event)))
					}
					if seal != nil {
						fmt.Fprintf(s.env.Stdout, "sealed at %s: %d entries, final %s\n", seal.At, seal.Count, seal.Final[:12])
					}
					return nil
				},
			},
			{
				Name:      "verify",
				Usage:     "re-derive every digest and walk the history; exit 1 naming the first break",
				UsageText: "git nwdes ledger verify --ledger NAME [--json]",
				Description: `Names the first break: an entry edited, reordered, dropped or truncated, a
history rewritten, a merge, a foreign parent, entries added after the seal
(LedgerBroken, exit 1).

EXAMPLES
   git nwdes ledger verify --ledger trial-7
` + exitStatus(judges("the chain does not hold: LedgerBroken, naming the first break")),
				Flags: []cli.Flag{ledgerFlag, jsonFlag()},
				Action: func(c *cli.Context) error {
					asJSON := s.wantJSON(c)
					st, err := s.open()
					if err != nil {
						return err
					}
					rep, err := ledger.Verify(st, c.String("ledger"))
					if err != nil {
						return findings(err, refusal.LedgerBroken)
					}
					if asJSON {
						return writeJSON(s.env.Stdout, rep)
					}
					sealed := ""
					if rep.Sealed {
						sealed = ", sealed"
					}
					fmt.Fprintf(s.env.Stdout, "ledger %s holds: %d entries in %d commits%s, final %s\n", text.TerminalLine(rep.Ledger), rep.Entries, rep.Commits, sealed, rep.Final[:12])
					return nil
				},
			},
			{
				Name:      "seal",
				Usage:     "record the count and final digest; later appends are refused",
				UsageText: "git nwdes ledger seal --ledger NAME",
				Description: `EXAMPLES
   git nwdes ledger seal --ledger trial-7
` + exitStatus(),
				Flags: []cli.Flag{ledgerFlag},
				Action: func(c *cli.Context) error {
					st, err := s.open()
					if err != nil {
						return err
					}
					seal, err := ledger.SealLedger(c.Context, st, c.String("ledger"), s.now())
					if err != nil {
						return err
					}
					fmt.Fprintf(s.env.Stdout, "sealed %s: %d entries, final %s\n", text.TerminalLine(c.String("ledger")), seal.Count, seal.Final)
					return nil
				},
			},
			{
				Name:      "grade",
				Usage:     "grade a trial's window: was it clean?",
				UsageText: "git nwdes ledger grade --start START.json (--ledger NAME | --file LEDGER.jsonl) [--json]",
				Description: `Grades a trial's events (dispatch, segment_start, segment_end, window_open,
window_close, intervention) against the window its start record declares.
A ledger or a record the rules rule out is refused before a result
(TrialInvalid, naming the rule). A preflight entry in the ledger (kind "preflight") is
cited, not graded. The output is byte-stable. See docs/ledgers.md.

EXAMPLES
   git nwdes ledger grade --start start.json --ledger trial-7
   git nwdes ledger grade --start start.json --file trial.jsonl --json
` + exitStatus(judges("an intervention fell inside the window")),
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "start", Usage: "the trial's start record `FILE`", Required: true},
					&cli.StringFlag{Name: "ledger", Usage: "the ledger `NAME`"},
					&cli.StringFlag{Name: "file", Usage: "a ledger `FILE` of JSON lines"},
					&cli.TimestampFlag{Name: "at", Usage: "grade as of `TIME` (RFC 3339; default now): the output is then the same bytes on every run", Layout: time.RFC3339Nano},
					jsonFlag(),
				},
				Action: func(c *cli.Context) error {
					asJSON := s.wantJSON(c)
					if c.IsSet("ledger") == c.IsSet("file") {
						return usagef("give exactly one of --ledger and --file")
					}
					sb, err := s.readFileArg(c.String("start"), startLimit)
					if err != nil {
						return err
					}
					start, err := trial.ParseStart(sb)
					if err != nil {
						return err
					}
					var events []trial.Event
					var cites []map[string]any
					if c.IsSet("file") {
						b, err := s.readFileArg(c.String("file"), ledgerFileLimit)
						if err != nil {
							return err
						}
						if events, err = trial.ParseEvents(b); err != nil {
							return err
						}
					} else {
						st, err := s.open()
						if err != nil {
							return err
						}
						entries, _, err := ledger.Entries(st, c.String("ledger"))
						if err != nil {
							return err
						}
						for _, e := range entries {
							// The kind by its exact key (encoding/json would
							// also take "KIND"): a preflight is cited, with
							// its time, not graded.
							var fields map[string]json.RawMessage
							_ = json.Unmarshal(e.Event, &fields)
							if string(fields["kind"]) == `"preflight"` {
								var at string
								if json.Unmarshal(fields["at"], &at) != nil {
									return refusal.New(refusal.TrialInvalid, "append preflights with git nwdes trial preflight --ledger",
										"ledger-malformed (ledger entry %d): a preflight without a time", e.Seq)
								}
								if _, err := time.Parse(time.RFC3339Nano, at); err != nil {
									return refusal.New(refusal.TrialInvalid, "append preflights with git nwdes trial preflight --ledger",
										"ledger-malformed (ledger entry %d): the preflight's time %q is not RFC 3339", e.Seq, at)
								}
								cites = append(cites, map[string]any{"seq": e.Seq, "digest": e.Digest, "at": at})
								continue
							}
							var ev trial.Event
							if err := json.Unmarshal(e.Event, &ev); err != nil {
								return refusal.New(refusal.TrialInvalid, "append only trial events to the trial's ledger",
									"ledger entry %d: %v", e.Seq, err)
							}
							ev.Line = e.Seq
							events = append(events, ev)
						}
					}
					at := s.now()
					if ts := c.Timestamp("at"); ts != nil {
						at = *ts
					}
					for _, ct := range cites {
						when, _ := time.Parse(time.RFC3339Nano, ct["at"].(string))
						if when.After(at) {
							return refusal.New(refusal.TrialInvalid, "record the preflight before the dispatch, never after the grading moment",
								"line-after-grading (ledger entry %d): the preflight is dated %s, after the grading moment %s", ct["seq"], ct["at"], at.UTC().Format(time.RFC3339Nano))
						}
						ct["beforeOpen"] = when.Before(start.Window.OpensAt)
					}
					rep, err := trial.Grade(start, events, at)
					if err != nil {
						return err
					}
					if asJSON {
						if len(cites) == 0 {
							s.env.Stdout.Write(rep.JSON())
						} else {
							var m map[string]any
							_ = json.Unmarshal(rep.JSON(), &m)
							m["preflight"] = cites
							writeJSON(s.env.Stdout, m)
						}
					} else {
						fmt.Fprint(s.env.Stdout, rep.Text())
						for _, ct := range cites {
							fmt.Fprintf(s.env.Stdout, "preflight: ledger entry %d (%s)\n", ct["seq"], ct["digest"].(string)[:12])
						}
					}
					if !rep.Clean() {
						return negative("an intervention fell inside the window")
					}
					return nil
				},
			},
		},
	}
}

func (s *session) traceCmd() *cli.Command {
	storeFlag := &cli.StringFlag{Name: "store", Usage: "the trace store `NAME` (refs/nwdes/traces/NAME)", Required: true}
	idFlags := []cli.Flag{
		&cli.StringFlag{Name: "session", Usage: "the session `S` every event must name", Required: true},
		&cli.StringFlag{Name: "attempt", Usage: "the attempt `A` every event must name", Required: true},
	}
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
			{
				Name:      "validate",
				Usage:     "validate a bundle and print its receipt",
				UsageText: "git nwdes trace validate --session S --attempt A BUNDLE",
				Description: `Prints the receipt (canonical JSON bound to the exact bytes), or refuses
naming the first defect (TraceInvalid, exit 1).

EXAMPLES
   git nwdes trace validate --session s1 --attempt a1 bundle.json
` + exitStatus(judges("the bundle is not valid: TraceInvalid, naming the first defect")),
				Flags: idFlags,
				Action: func(c *cli.Context) error {
					b, err := s.bundleArg(c)
					if err != nil {
						return err
					}
					r, err := trace.Validate(c.String("session"), c.String("attempt"), b)
					if err != nil {
						return findings(err, refusal.TraceInvalid)
					}
					fmt.Fprintf(s.env.Stdout, "%s\n", r.Bytes())
					return nil
				},
			},
			{
				Name:      "append",
				Usage:     "validate a bundle and keep it, with its receipt, in a trace store",
				UsageText: "git nwdes trace append --store NAME --session S --attempt A BUNDLE",
				Description: `One compare-and-swap of the store's ref; an identical replay returns the same
storage receipt and adds nothing. A full store refuses (TraceStoreFull).

EXAMPLES
   git nwdes trace append --store runs --session s1 --attempt a1 bundle.json
` + exitStatus(),
				Flags: append([]cli.Flag{storeFlag}, idFlags...),
				Action: func(c *cli.Context) error {
					b, err := s.bundleArg(c)
					if err != nil {
						return err
					}
					st, err := s.open()
					if err != nil {
						return err
					}
					r, err := (&trace.Store{Store: st}).Append(c.Context, c.String("store"), c.String("session"), c.String("attempt"), b)
					if err != nil {
						return err
					}
					out, err := r.Bytes()
					if err != nil {
						return err
					}
					fmt.Fprintf(s.env.Stdout, "%s\n", out)
					return nil
				},
			},
			{
				Name:      "read",
				Usage:     "write a stored bundle's exact bytes to a new file (mode 0400)",
				UsageText: "git nwdes trace read --store NAME --receipt R --output PATH",
				Description: `Re-checks the receipt against the stored bytes (ReceiptMismatch) and
re-validates them; refuses an output path that exists (OutputExists).

EXAMPLES
   git nwdes trace read --store runs --receipt sha256:… --output copy.json
` + exitStatus(),
				Flags: []cli.Flag{storeFlag,
					&cli.StringFlag{Name: "receipt", Usage: "the receipt `R` (sha256:…)", Required: true},
					&cli.StringFlag{Name: "output", Usage: "a new file `PATH`", Required: true}},
				Action: func(c *cli.Context) error {
					st, err := s.open()
					if err != nil {
						return err
					}
					b, err := (&trace.Store{Store: st}).Read(c.String("store"), c.String("receipt"))
					if err != nil {
						return err
					}
					out := c.String("output")
					if !filepath.IsAbs(out) {
						out = filepath.Join(s.dir, out)
					}
					if err := trace.WriteOut(b, out); err != nil {
						return err
					}
					fmt.Fprintf(s.env.Stdout, "wrote %d bytes to %s\n", len(b), text.TerminalLine(out))
					return nil
				},
			},
			{
				Name:      "list",
				Usage:     "list a trace store's bundles",
				UsageText: "git nwdes trace list --store NAME [--json]",
				Description: `EXAMPLES
   git nwdes trace list --store runs
` + exitStatus(),
				Flags: []cli.Flag{storeFlag, jsonFlag()},
				Action: func(c *cli.Context) error {
					asJSON := s.wantJSON(c)
					st, err := s.open()
					if err != nil {
						return err
					}
					entries, err := (&trace.Store{Store: st}).List(c.String("store"))
					if err != nil {
						return err
					}
					if asJSON {
						if entries == nil {
							entries = []trace.Entry{}
						}
						return writeJSON(s.env.Stdout, entries)
					}
					for _, e := range entries {
						fmt.Fprintf(s.env.Stdout, "%s %s/%s %d events, %d bytes\n", e.Receipt, text.TerminalLine(e.Session), text.TerminalLine(e.Attempt), e.Count, e.BundleBytes)
					}
					return nil
				},
			},
		},
	}
}

func (s *session) bundleArg(c *cli.Context) ([]byte, error) {
	if c.Args().Len() != 1 {
		return nil, usagef("name one BUNDLE file")
	}
	return s.readFileArg(c.Args().First(), bundleLimit)
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
				asJSON := s.wantJSON(c)
				sb, err := s.readFileArg(c.String("start"), startLimit)
				if err != nil {
					return err
				}
				start, err := trial.ParseStart(sb)
				if err != nil {
					return err
				}
				req, err := trial.ParseRequest(start.Readings)
				if err != nil {
					return err
				}
				// The window read is the record's own, the one the grade
				// measures; a readings.window that says otherwise is refused.
				open, close := start.Window.OpensAt.UTC().Format(time.RFC3339Nano), start.Window.ClosesAt.UTC().Format(time.RFC3339Nano)
				for _, w := range []struct{ got, want string }{{req.Window.Open, open}, {req.Window.Close, close}} {
					if w.got == "" {
						continue
					}
					if t, err := time.Parse(time.RFC3339Nano, w.got); err != nil || t.UTC().Format(time.RFC3339Nano) != w.want {
						return refusal.New(refusal.TrialInvalid, "leave readings.window out, or give it the record's window",
							"readings.window says %s, the record's window %s to %s", w.got, open, close)
					}
				}
				req.Window.Open, req.Window.Close = open, close
				st, err := s.open()
				if err != nil {
					return err
				}
				rd, err := trial.Preflight(c.Context, *req, st, s.now)
				if err != nil {
					return err
				}
				if name := c.String("ledger"); name != "" {
					ev := fmt.Sprintf(`{"at":%q,"kind":"preflight","readings":%s}`, s.now().UTC().Format(time.RFC3339Nano), rd.JSON())
					if _, err := ledger.Append(c.Context, st, name, []byte(ev)); err != nil {
						return err
					}
				}
				if asJSON {
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
			},
		}},
	}
}
