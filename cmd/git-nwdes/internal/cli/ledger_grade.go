package cli

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/ledger"
	"github.com/nwdes/nwdes/trial"
)

// ledgerGradeOptions are ledger grade's flags.
type ledgerGradeOptions struct {
	Start  string
	Ledger string
	File   string
	OfFile bool // --file given, not --ledger
	At     *time.Time
	JSON   bool
}

func (s *session) ledgerGradeCmd() *cli.Command {
	return &cli.Command{
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
			o := ledgerGradeOptions{Start: c.String("start"), Ledger: c.String("ledger"), File: c.String("file"), OfFile: c.IsSet("file"), At: c.Timestamp("at"), JSON: s.wantJSON(c)}
			if c.IsSet("ledger") == o.OfFile {
				return usagef("give exactly one of --ledger and --file")
			}
			if c.IsSet("file") {
				o.File = c.String("file")
			}
			return s.ledgerGrade(o)
		},
	}
}

func (s *session) ledgerGrade(o ledgerGradeOptions) error {
	sb, err := s.readFileArg(o.Start, startLimit)
	if err != nil {
		return err
	}
	start, err := trial.ParseStart(sb)
	if err != nil {
		return err
	}
	events, cites, err := s.trialEvents(o)
	if err != nil {
		return err
	}
	at := s.now()
	if o.At != nil {
		at = *o.At
	}
	rep, err := trial.GradeCiting(start, events, cites, at)
	if err != nil {
		return err
	}
	if o.JSON {
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
			fmt.Fprintf(s.env.Stdout, "preflight: ledger entry %d (%s)\n", ct.Seq, ct.Digest[:12])
		}
	}
	if !rep.Clean() {
		return negative("an intervention fell inside the window")
	}
	return nil
}

// trialEvents are the events --file holds, or those of --ledger with the
// preflights it cites.
func (s *session) trialEvents(o ledgerGradeOptions) ([]trial.Event, []trial.PreflightCite, error) {
	if o.OfFile {
		b, err := s.readFileArg(o.File, ledgerFileLimit)
		if err != nil {
			return nil, nil, err
		}
		events, err := trial.ParseEvents(b)
		return events, nil, err
	}
	st, err := s.open()
	if err != nil {
		return nil, nil, err
	}
	entries, _, err := ledger.Entries(st, o.Ledger)
	if err != nil {
		return nil, nil, err
	}
	lines := make([]trial.LedgerEntry, len(entries))
	for i, e := range entries {
		lines[i] = trial.LedgerEntry{Seq: e.Seq, Digest: e.Digest, Event: e.Event}
	}
	return trial.LedgerEvents(lines)
}
