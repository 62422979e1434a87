package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/internal/text"
)

func (s *session) gateCmd() *cli.Command {
	return &cli.Command{
		Name:  "gate",
		Usage: "run a feature's command oracles and read their evidence",
		Description: `A criterion of the contract may carry an oracle, two indented lines under
it: CHECK: a shell command, EXPECT: a marker. The oracle is MET only when
the command exits 0 and the marker is in its standard output. gate run
executes every oracle against the candidate's committed tree and records
what happened as evidence in refs/nwdes/gates; gate status reads that
evidence and never executes anything.

EXAMPLES
   git nwdes gate run --feature greeting
   git nwdes gate status --feature greeting
` + exitStatusAll(),
		Subcommands: []*cli.Command{s.gateRunCmd(), s.gateStatusCmd()},
	}
}

func (s *session) gateRunCmd() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "run every oracle against the candidate's committed tree and record the evidence",
		UsageText: "git nwdes gate run --feature F [--candidate REV] [--base REV] [--contract PATH] [--timeout D] [--jobs N] [--best-effort] [--sign] [--json]",
		Description: `Always runs, whatever evidence exists. A contract that does not parse runs
nothing at all. Each oracle runs with /bin/sh -c inside the wall (see
git nwdes sandbox -h and docs/sandbox.md), in a fresh export of the
candidate commit's tree (never the working tree) that the wall makes and
owns: it may write only there, read only there and in the OS and toolchain
roots, reach no network, see no other process, and receives PATH, LANG,
and a HOME and TMPDIR inside the job only. At --timeout it gets TERM, then
KILL after a grace. When the kernel cannot enforce the wall the run is
refused (SandboxUnavailable) unless --best-effort or git config
nwdes.sandbox.bestEffort=true, and then the evidence records what was not
enforced. A run the wall had to stop is NOT-MET. Each outcome is recorded as evidence for the
candidate commit; when the feature has a draft examination, it is also
added to the draft as an observation with source gate, to be cited like
any other. Abandoned criteria are not run. Prints one line per oracle,
beginning with its E ID and its state.

With --base REV (the commit the change started from: the card's BASE, or
the protected branch), every oracle also runs at REV, first, exactly as at
the candidate (its own export, in the wall), and the evidence records both
runs. A MET oracle is then proven (NOT-MET at REV) or vacuous (MET at REV
too: it does not show that the change made it pass); without --base it is
unproven. Where the judging side sets git config nwdes.gates.proof=required,
a met verdict on a vacuous or unproven oracle is refused (GateVacuous,
GateUnproven).

With --jobs N, up to N oracles run at the same time, each still in its
own export and its own job of the wall, the next one's made while they
run: ask for it only for oracles that do not need the machine to
themselves (timing, load). One at a time (the default), each oracle has
it to itself. The evidence and the output keep the contract's order.

EXAMPLES
   git nwdes gate run --feature greeting
   git nwdes gate run --feature greeting --candidate HEAD~1 --timeout 30s
   git nwdes gate run --feature greeting --base main
` + exitStatus(judges("some oracle that counts is NOT-MET or pending")),
		Flags: append(targetFlags(),
			&cli.StringFlag{Name: "base", Usage: "also run every oracle at `REV`, to prove the change made it pass (proven, or vacuous)"},
			durationFlag("timeout", "end each oracle after `D` (TERM, a grace, then KILL)", examine.DefaultGateTimeout),
			intFlag("jobs", "run up to `N` oracles at the same time, each in its own job", 1),
			&cli.BoolFlag{Name: "best-effort", Usage: "run where the kernel cannot enforce the wall, recording what was missing"},
			&cli.BoolFlag{Name: "sign", Usage: "sign each evidence record with your SSH signing key (default: git config nwdes.sign; docs/trust.md)"},
			jsonFlag(),
		),
		Action: func(c *cli.Context) error {
			return s.gateRun(c.Context, gateRunOptions{Target: target(c), Base: c.String("base"), Timeout: c.Duration("timeout"), Jobs: c.Int("jobs"),
				BestEffort: c.Bool("best-effort"), Sign: signFlag(c), JSON: s.wantJSON(c)})
		},
	}
}

// gateRunOptions are gate run's flags.
type gateRunOptions struct {
	Target     examine.Target
	Base       string
	Timeout    time.Duration
	Jobs       int
	BestEffort bool
	Sign       signOption
	JSON       bool
}

func (s *session) gateRun(ctx context.Context, o gateRunOptions) error {
	st, err := s.open()
	if err != nil {
		return err
	}
	if o.Timeout <= 0 {
		return usagef("--timeout must be positive")
	}
	if o.Jobs < 1 {
		return usagef("--jobs is at least 1")
	}
	cfg, err := s.config(st.Location())
	if err != nil {
		return err
	}
	strict, err := wallStrict(o.BestEffort, cfg)
	if err != nil {
		return err
	}
	w, err := s.jobWall(strict, cfg)
	if err != nil {
		return err
	}
	g := &examine.Gates{
		Store:    st,
		Wall:     w,
		Progress: s.gateProgress(o.JSON),
		WorkTree: workTreeFor(st, o.Target.Candidate),
		Base:     o.Base,
		Timeout:  o.Timeout,
		Jobs:     o.Jobs,
		Now:      s.env.Now,
	}
	if g.Sign, _, err = s.signerFor(o.Sign); err != nil {
		return err
	}
	rep, err := g.Run(ctx, o.Target)
	if rep != nil {
		s.renderGates(rep, o.JSON, true)
	}
	if err != nil {
		return err
	}
	return gateJudgment(rep)
}

// gateStatusOptions are gate status's flags.
type gateStatusOptions struct {
	Target examine.Target
	JSON   bool
}

func (s *session) gateStatusCmd() *cli.Command {
	return &cli.Command{
		Name:      "status",
		Usage:     "show each oracle's state at the candidate from recorded evidence (runs nothing)",
		UsageText: "git nwdes gate status --feature F [--candidate REV] [--contract PATH] [--json]",
		Description: `Never executes and never writes. One line per oracle: E<n> MET, NOT-MET
or pending, from the newest evidence recorded for this candidate commit and
this very oracle. Evidence recorded only for another commit leaves the
state pending and says that it is stale. A MET oracle is also named
proven, vacuous or unproven (git nwdes gate run --base).

EXAMPLES
   git nwdes gate status --feature greeting
   git nwdes gate status --feature greeting --candidate main --json
` + exitStatus(judges("some oracle that counts is NOT-MET or pending")),
		Flags: append(targetFlags(), jsonFlag()),
		Action: func(c *cli.Context) error {
			return s.gateStatus(gateStatusOptions{Target: target(c), JSON: s.wantJSON(c)})
		},
	}
}

func (s *session) gateStatus(o gateStatusOptions) error {
	st, err := s.open()
	if err != nil {
		return err
	}
	rep, err := examine.GateStatus(st, o.Target)
	if err != nil {
		return err
	}
	s.renderGates(rep, o.JSON, false)
	return gateJudgment(rep)
}

func gateJudgment(rep *examine.GateReport) error {
	if rep.Passed() {
		return nil
	}
	return negative("some oracle is not MET")
}

// renderGates prints a gate report; notes quote commands, markers and
// reasons from the contract, escaped as one value each.
func (s *session) renderGates(rep *examine.GateReport, asJSON, ran bool) {
	esc := text.TerminalLine
	s.printNotices(rep.Notices)
	if asJSON {
		writeJSON(s.env.Stdout, rep)
		return
	}
	w := s.env.Stdout
	for _, r := range rep.Rows {
		line := fmt.Sprintf("%s %s — %s", esc(string(r.Expectation)), esc(string(r.State)), esc(r.Note))
		if r.Evidence != nil && r.Evidence.Base != nil && r.Proof != "" {
			line += "; " + esc(r.Evidence.ProofNote())
		}
		if r.Observation != "" {
			line += fmt.Sprintf(" (draft observation %s)", esc(string(r.Observation)))
		}
		fmt.Fprintln(w, line)
		if ran && r.State == examine.GateNotMet && r.Evidence != nil {
			for _, l := range r.Evidence.FailureTail(3) {
				fmt.Fprintf(w, "    | %s\n", l)
			}
			if r.Evidence.Wall != nil {
				if h := s.homeHint(r.Evidence.Wall.Path); h != "" {
					fmt.Fprintf(w, "    %s\n", esc(h))
				}
			}
		}
	}
	if len(rep.NoOracle) > 0 {
		ids := make([]string, len(rep.NoOracle))
		for i, id := range rep.NoOracle {
			ids[i] = esc(string(id))
		}
		fmt.Fprintf(w, "without an oracle: %s (judged by the examination)\n", strings.Join(ids, ", "))
	}
	switch {
	case len(rep.Rows) == 0:
		fmt.Fprintf(w, "%s has no oracle at %s: nothing to run\n", esc(rep.Feature), esc(text.Short(rep.Candidate)))
	case ran && recorded(rep):
		fmt.Fprintf(w, "candidate %s; evidence recorded in refs/nwdes/gates\n", esc(text.Short(rep.Candidate)))
	case ran:
		fmt.Fprintf(w, "candidate %s; every oracle is abandoned: nothing ran, nothing recorded\n", esc(text.Short(rep.Candidate)))
	default:
		fmt.Fprintf(w, "candidate %s\n", esc(text.Short(rep.Candidate)))
	}
}

// recorded reports whether a run recorded any evidence.
func recorded(rep *examine.GateReport) bool {
	for _, r := range rep.Rows {
		if r.Evidence != nil {
			return true
		}
	}
	return false
}

// gateProgress reports each oracle as it starts and ends, on stderr, when
// stderr is a terminal and the output is for a person: a long gate run is
// never a silent terminal, and a log or a pipe gets nothing extra.
func (s *session) gateProgress(asJSON bool) func(*examine.GateRow, bool, time.Duration) {
	if asJSON || !s.env.Terminal {
		return nil
	}
	return func(r *examine.GateRow, done bool, took time.Duration) {
		if !done {
			fmt.Fprintf(s.env.Stderr, "gate %s: running %s\n", text.TerminalLine(string(r.Expectation)), text.TerminalLine(text.Truncate(r.Check, 60)))
			return
		}
		fmt.Fprintf(s.env.Stderr, "gate %s: %s in %s\n", text.TerminalLine(string(r.Expectation)), r.State, took.Round(time.Millisecond))
	}
}

// workTreeFor is the work tree to compare with the candidate: the
// repository's, when the candidate is HEAD (given or left out).
func workTreeFor(st *gitstore.Store, candidate string) string {
	if candidate != "" && candidate != "HEAD" {
		return ""
	}
	return st.Location().WorkTree
}
