package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/internal/boundedio"
	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/sandbox"
	"github.com/nwdes/nwdes/swarm"
)

func (s *session) swarmCmd() *cli.Command {
	return &cli.Command{
		Name:  "swarm",
		Usage: "run queued cards with one-task workers, coordinated by leases in git refs",
		Description: `A card is a task: line 1 is its contract line RESULT: <label> sha=<sha12>,
then headers (BASE: <commit>, DEADLINE:, PATHS:, DEPENDS-ON:, TEST:,
BUDGET:), then the task; the whole
card is the worker's prompt. A worker description says which harness runs
it. Supervisors take a lease on a card by compare-and-swap (in this
repository, or with --remote on a git remote that many machines share),
run the harness inside the wall in a job directory of its own, and record
how it ended. See docs/swarm.md.

EXAMPLES
   git nwdes swarm worker check worker.json
   git nwdes swarm card check cards/fix-typo.md
   git nwdes swarm add --card cards/fix-typo.md
   git nwdes swarm run --worker worker.json --workers 2
   git nwdes swarm status
` + exitStatusAll(),
		Subcommands: []*cli.Command{
			s.swarmCardCmd(),
			s.swarmReworkCmd(),
			s.swarmLandCmd(),
			s.swarmWorkerCmd(),
			s.swarmAddCmd(),
			s.swarmRunCmd(),
			s.swarmStatusCmd(),
			s.swarmLeasesCmd(),
			s.swarmReleaseCmd(),
			s.swarmReapCmd(),
			{
				Name:      "stop",
				Usage:     "stop a card, or every card: running jobs end, nothing new is taken",
				UsageText: "git nwdes swarm stop (--card LABEL | --all) [--reason TEXT]",
				Description: `Writes a stop record every supervisor honours at its next heartbeat (push
it with git nwdes push to reach supervisors on other machines). swarm
resume clears it.

EXAMPLES
   git nwdes swarm stop --all --reason "rate limited"
   git nwdes swarm stop --card fix-typo
` + exitStatus(),
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "card", Usage: "the card `LABEL`"},
					&cli.BoolFlag{Name: "all", Usage: "every card"},
					&cli.StringFlag{Name: "reason", Usage: "why"},
				},
				Action: func(c *cli.Context) error {
					card, err := cardOrAll(c)
					if err != nil {
						return err
					}
					st, err := s.open()
					if err != nil {
						return err
					}
					if err := swarm.SetStop(c.Context, st, swarm.Stop{Card: card, At: s.now().UTC().Format(time.RFC3339Nano), By: s.owner(), Reason: c.String("reason")}); err != nil {
						return err
					}
					fmt.Fprintf(s.env.Stdout, "stopped %s\n", text.TerminalLine(card))
					return nil
				},
			},
			{
				Name:      "resume",
				Usage:     "clear a stop record",
				UsageText: "git nwdes swarm resume (--card LABEL | --all)",
				Description: `--all clears every stop record.

EXAMPLES
   git nwdes swarm resume --all
` + exitStatus(),
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "card", Usage: "the card `LABEL`"},
					&cli.BoolFlag{Name: "all", Usage: "every stop record"},
				},
				Action: func(c *cli.Context) error {
					card, err := cardOrAll(c)
					if err != nil {
						return err
					}
					st, err := s.open()
					if err != nil {
						return err
					}
					if card == "all" {
						card = ""
					}
					if err := swarm.ClearStop(c.Context, st, card); err != nil {
						return err
					}
					fmt.Fprintln(s.env.Stdout, "resumed")
					return nil
				},
			},
			{
				Name:      "requeue",
				Usage:     "run a finished card again, as a new attempt",
				UsageText: "git nwdes swarm requeue [--reason R] LABEL",
				Description: `Writes a requeue record (refs/nwdes/swarm/control): the card's jobs so far
no longer finish it, and the next supervisor runs it as attempt n+1. A
card that is not queued (CardInvalid), dropped (CardDropped) or has no
finished attempt (CardNotFinished) is refused. Push it to reach other
machines.

EXAMPLES
   git nwdes swarm requeue --reason "the harness was misconfigured" fix-typo
` + exitStatus(),
				Flags: []cli.Flag{&cli.StringFlag{Name: "reason", Usage: "why"}},
				Action: func(c *cli.Context) error {
					label, err := oneLabel(c)
					if err != nil {
						return err
					}
					st, err := s.open()
					if err != nil {
						return err
					}
					r, err := swarm.RequeueCard(c.Context, st, label, s.owner(), c.String("reason"), s.now())
					if err != nil {
						return err
					}
					fmt.Fprintf(s.env.Stdout, "requeued %s (after attempt %d)\n", text.TerminalLine(label), r.After)
					return nil
				},
			},
			{
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
					st, err := s.open()
					if err != nil {
						return err
					}
					j, err := swarm.ShowJob(st, label, attempt)
					if err != nil {
						return err
					}
					if s.wantJSON(c) {
						return writeJSON(s.env.Stdout, j)
					}
					return s.renderJob(j)
				},
			},
			{
				Name:      "drop",
				Usage:     "never run a card (again)",
				UsageText: "git nwdes swarm drop [--reason R] LABEL",
				Description: `Writes a drop record (refs/nwdes/swarm/control): no supervisor takes the
card again, and one running it ends its job at the next heartbeat. A card
that is not queued is refused (CardInvalid). Push it to reach other
machines.

EXAMPLES
   git nwdes swarm drop --reason "done by hand" fix-typo
` + exitStatus(),
				Flags: []cli.Flag{&cli.StringFlag{Name: "reason", Usage: "why"}},
				Action: func(c *cli.Context) error {
					label, err := oneLabel(c)
					if err != nil {
						return err
					}
					st, err := s.open()
					if err != nil {
						return err
					}
					if err := swarm.DropCard(c.Context, st, label, s.owner(), c.String("reason"), s.now()); err != nil {
						return err
					}
					fmt.Fprintf(s.env.Stdout, "dropped %s\n", text.TerminalLine(label))
					return nil
				},
			},
		},
	}
}

// swarmRemoteFlag is --remote of the verbs that read or keep leases.
func swarmRemoteFlag() cli.Flag {
	return &cli.StringFlag{Name: "remote", Usage: "keep leases on git remote `NAME` (atomic push with the expected old value)"}
}

// oneLabel is the verb's one argument, a card label.
func oneLabel(c *cli.Context) (string, error) {
	if c.NArg() != 1 {
		return "", usagef("give one card LABEL, after the flags")
	}
	return c.Args().First(), nil
}

func cardOrAll(c *cli.Context) (string, error) {
	switch {
	case c.IsSet("card") == c.Bool("all"):
		return "", usagef("give exactly one of --card LABEL and --all")
	case c.Bool("all"):
		return "all", nil
	}
	return c.String("card"), nil
}

func (s *session) now() time.Time {
	if s.env.Now != nil {
		return s.env.Now()
	}
	return time.Now()
}

// owner names who queued or stops: git's user.email, else the user.
func (s *session) owner() string {
	if s.cfg != nil {
		if v, _ := s.cfg.Get("user.email"); v != "" {
			return v
		}
	}
	if u := s.env.Getenv("USER"); u != "" {
		return u
	}
	return "unknown"
}

// readFileArg reads a file argument (relative to -C), or stdin for "-",
// through boundedio: a regular file only, at most lim.
func (s *session) readFileArg(p string, lim boundedio.Limit) ([]byte, error) {
	if p == "-" {
		return boundedio.ReadAll(s.env.Stdin, "stdin", lim)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(s.dir, p)
	}
	return boundedio.ReadFile(p, lim)
}

func (s *session) readWorker(p string) (*swarm.Worker, error) {
	b, err := s.readFileArg(p, workerLimit)
	if err != nil {
		return nil, err
	}
	return swarm.ParseWorker(b)
}

// book keeps the leases in this repository, or on the git remote named.
func (s *session) book(st *gitstore.Store, remote string) swarm.Book {
	if remote != "" {
		return &swarm.Remote{Store: st, Name: remote, Sync: s.syncOptions()}
	}
	return &swarm.Local{Store: st}
}

// leaseQuery reads the leases of this repository, or of the git remote
// named, as this process at this time. A one-shot reader has watched no
// heartbeat stay unchanged, so no stale window is given.
func (s *session) leaseQuery(st *gitstore.Store, remote string) (swarm.LeaseQuery, error) {
	me, err := swarm.Self(s.owner())
	if err != nil {
		return swarm.LeaseQuery{}, err
	}
	return swarm.LeaseQuery{Store: st, Book: s.book(st, remote), Remote: remote, Sync: s.syncOptions(), Here: me, Now: s.now()}, nil
}

func (s *session) supervisor(c *cli.Context, st *gitstore.Store, w *swarm.Worker, strict bool) (*swarm.Supervisor, error) {
	book := s.book(st, c.String("remote"))
	me, err := swarm.Self(s.owner())
	if err != nil {
		return nil, err
	}
	wall, err := s.jobWall(strict, s.cfg)
	if err != nil {
		return nil, err
	}
	if err := harnessReachable(wall, w); err != nil {
		return nil, err
	}
	if c.Int("attempts") < 1 {
		return nil, usagef("--attempts is at least 1")
	}
	jobs := filepath.Join(st.Location().CommonDir, "nwdes", "swarm", "jobs")
	if r, err := filepath.EvalSymlinks(st.Location().CommonDir); err == nil {
		// The wall walks its write set following no link: name the
		// repository as it is.
		jobs = filepath.Join(r, "nwdes", "swarm", "jobs")
	}
	return &swarm.Supervisor{
		Store: st, Book: book, Remote: c.String("remote"), Sync: s.mergeOptions(st), Wall: wall, Worker: w,
		Workers: c.Int("workers"), Follow: c.Bool("follow"),
		JobsDir: jobs,
		Holder:  me, StaleAfter: c.Duration("stale-after"), Heartbeat: c.Duration("heartbeat"),
		Export: examine.ExportTree, Now: s.env.Now,
		Examining: s.examining(c, st),
		Retry:     swarm.RetryPolicy{Attempts: c.Int("attempts"), LaunchGrace: c.Duration("launch-grace"), Backoff: c.Duration("retry-backoff")},
	}, nil
}

// harnessReachable refuses a harness named by absolute path that no root
// of the wall and none of the worker's read_roots holds: every job would
// end "did not start".
func harnessReachable(wall *sandbox.Wall, w *swarm.Worker) error {
	if !filepath.IsAbs(w.Harness) || wall.Holds(w.Harness, w.ReadRoots) {
		return nil
	}
	return sandbox.OutsideRootsError("harness", w.Harness)
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

// spentText is a reading as status and show print it.
func spentText(sp swarm.Spent) string {
	b := swarm.Budget(sp)
	if t := b.String(); t != "" {
		return t
	}
	return "nothing"
}
