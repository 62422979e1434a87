package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/gitstore/oid"
	gitremote "github.com/nwdes/nwdes/gitstore/remote"
	"github.com/nwdes/nwdes/internal/boundedio"
	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/refusal"
	"github.com/nwdes/nwdes/sandbox"
	"github.com/nwdes/nwdes/swarm"
)

func (s *session) swarmCmd() *cli.Command {
	remoteFlag := &cli.StringFlag{Name: "remote", Usage: "keep leases on git remote `NAME` (atomic push with the expected old value)"}
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
			{
				Name:  "worker",
				Usage: "check worker descriptions",
				Subcommands: []*cli.Command{{
					Name:      "check",
					Usage:     "validate a worker description, naming every problem",
					UsageText: "git nwdes swarm worker check FILE [--json]",
					Description: `A worker description is one JSON object: name, harness (a program path or
a name on PATH), harness_args ({prompt} and {model} are replaced), model,
deadline (a Go duration), slots, read_roots and env (names of variables the
harness may receive). Unknown fields are refused; every problem is reported
in one run (WorkerInvalid).

EXAMPLES
   git nwdes swarm worker check worker.json
` + exitStatus(),
					Flags: []cli.Flag{jsonFlag()},
					Action: func(c *cli.Context) error {
						asJSON := s.wantJSON(c)
						if c.Args().Len() != 1 {
							return usagef("name one worker description FILE")
						}
						w, err := s.readWorker(c.Args().First())
						if err != nil {
							return err
						}
						// Outside a repository the wall's roots are the
						// defaults; inside, nwdes.sandbox.root adds to them.
						var cfg *gitrepo.Config
						if st, err := s.open(); err == nil {
							cfg, _ = s.config(st.Location())
						}
						wall, err := s.jobWall(false, cfg)
						if err != nil {
							return err
						}
						if err := harnessReachable(wall, w); err != nil {
							return err
						}
						if asJSON {
							return writeJSON(s.env.Stdout, w)
						}
						fmt.Fprintf(s.env.Stdout, "worker %s: %s, deadline %s, %d slots\n", text.TerminalLine(w.Name), text.TerminalLine(w.Harness), w.Deadline, w.Slots)
						return nil
					},
				}},
			},
			{
				Name:      "add",
				Usage:     "check a card (as swarm card check) and queue it",
				UsageText: "git nwdes swarm add --card FILE [--deadline D] [--worker FILE] [--best-effort]",
				Description: `Checks the card as swarm card check does, naming every problem at once
(CardInvalid; a TEST oracle is run at BASE inside the wall), then queues
it (its label must be new: CardExists). --deadline overrides the card's
DEADLINE: and the worker's.

EXAMPLES
   git nwdes swarm add --card cards/fix-typo.md
   git nwdes swarm add --card cards/big.md --deadline 2h
` + exitStatus(),
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "card", Usage: "the card `FILE`", Required: true},
					durationFlag("deadline", "the job's deadline `D` (default: the card's, else the worker's)", 0),
					&cli.StringFlag{Name: "worker", Usage: "hold DEADLINE to the earlier jobs of the worker described in `FILE`"},
					&cli.BoolFlag{Name: "best-effort", Usage: "run TEST where the kernel cannot enforce the whole wall"},
				},
				Action: func(c *cli.Context) error {
					st, err := s.open()
					if err != nil {
						return err
					}
					b, err := s.readFileArg(c.String("card"), cardLimit)
					if err != nil {
						return err
					}
					if c.Duration("deadline") < 0 {
						return usagef("--deadline must be positive")
					}
					opts, err := s.cardCheckOptions(c, st, c.String("worker"), examine.DefaultGateTimeout)
					if err != nil {
						return err
					}
					opts.Deadline = c.Duration("deadline")
					check, err := swarm.AddCard(c.Context, b, opts, s.owner(), s.now())
					if err != nil {
						return err
					}
					s.warnCard(check)
					fmt.Fprintf(s.env.Stdout, "queued %s at %s\n", text.TerminalLine(check.Card.Label), check.Card.Sha12)
					return nil
				},
			},
			{
				Name:      "run",
				Usage:     "supervise: run queued cards until none is left (or forever with --follow)",
				UsageText: "git nwdes swarm run --worker FILE [--workers N] [--attempts N] [--remote NAME] [--follow] [--best-effort] [--gate [--gate-timeout D]] [--rework --examiner FILE [--limit N] [--land REMOTE]] [--json]",
				Description: `Takes a lease on each unfinished card in turn, stages its job directory
(.git/nwdes/swarm/jobs/<label>/<attempt>-<nonce>: the base's checkout in
repo/, scratch/, a private HOME and XDG_DATA_HOME), runs the harness inside
the wall with that directory as its write set and the job's deadline,
renews the lease while it runs, then writes exit.json, checks RESULT.md
against the card's contract line, harvests the commits the job made (its
HEAD, under refs/nwdes/swarm/heads/<label>/<attempt>-<nonce>, read and
checked by nwdes itself, bounded), records the job (refs/nwdes/swarm/jobs)
and releases the lease. The job's git identity is the worker's (identity,
or "nwdes worker <name> <<name>@nwdes.invalid>"); the host's git
configuration is not read there. A card waits for the cards its DEPENDS-ON
names to finish ok, and does not run when one finished otherwise. What the
harness reports in $NWDES_JOB_DIR/spent.json is read at each heartbeat:
over the card's or worker's budget the job ends "budget". A job that did
not start, or whose harness exited within the launch grace with no
result, is retried with a jittered backoff up to --attempts; any other
failure finishes the card. Several supervisors (processes, or machines with
--remote) share one queue; no card runs twice. On a terminal it shows a
live table; --json streams one event per line. A stop record (swarm stop)
ends running jobs at the next heartbeat.

With --gate, each harvested head is gated before its job is recorded: the
gates of the card's feature (FEATURE:, else TEST:'s) run as gate run
--feature F --candidate HEAD --base BASE runs them, their evidence is
recorded against the head, and the job record says what they showed
(met or not, each oracle proven or vacuous). The card's TEST oracle must
be proven there; when it is not, the record names it (GateNotMet,
GateVacuous, GateUnproven). A "gated" line reports each oracle as it ends.

With --rework (which implies --gate) the run is the whole loop, unattended:
the --worker runs the produce cards; after each head is harvested and
gated, an examine card for it (KIND: examine, CANDIDATE and BASE the head,
FEATURE the card's) is queued and run by the --examiner, another worker
description (nobody certifies their own work); once its journal is
replayed, the one judgment (as status asks it) says the head's outcome.
Accepted ends the lineage; refused becomes the next card as swarm rework
makes it, until the lineage holds its bound (--limit, git config
nwdes.swarm.reworks, default 2: ReworkLimit) or what is left is a
person's to decide (NeedsPerson). A stop or drop record naming a card of
the lineage (or swarm stop --all) ends it. With --land REMOTE accepted
heads join a landing queue and land one at a time, as swarm land lands
them, in the order they were accepted; a head whose branch moved is
rebased by land into a new candidate, which is gated (the new tip as
base), examined by the --examiner and judged in turn, and, accepted,
joins the queue again behind those waiting (not accepted: NeedsPerson).
Each step is a line (examine-queued, judged, rework-queued, land-queued,
landed, rebased, lineage-ended); the run ends when every lineage it drives has
ended, and exits 0 only when each was accepted (and landed, with --land),
1 when one ended otherwise. See docs/swarm.md (The loop).

EXAMPLES
   git nwdes swarm run --worker worker.json
   git nwdes swarm run --worker worker.json --gate
   git nwdes swarm run --worker producer.json --rework --examiner examiner.json --land origin
   git nwdes swarm run --worker worker.json --workers 4 --remote origin --follow
` + exitStatus(judges("with --rework, a lineage ended not accepted: at its bound, for a person, stopped, or not landed")),
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "worker", Usage: "the worker description `FILE`", Required: true},
					intFlag("workers", "jobs at once (default: the worker's slots)", 0),
					remoteFlag,
					&cli.BoolFlag{Name: "follow", Usage: "keep supervising when the queue is empty"},
					&cli.BoolFlag{Name: "best-effort", Usage: "run even where the kernel cannot enforce the whole wall"},
					&cli.BoolFlag{Name: "gate", Usage: "run the feature's gates (FEATURE, or TEST's) on each harvested head, with the card's BASE as --base"},
					durationFlag("gate-timeout", "with --gate, end each oracle after `D`", examine.DefaultGateTimeout),
					&cli.BoolFlag{Name: "rework", Usage: "run the loop unattended: gate each head, examine it with --examiner, rework what is refused, until accepted, the bound or a stop"},
					&cli.StringFlag{Name: "examiner", Usage: "with --rework, the examiner's worker description `FILE` (another worker than --worker)"},
					intFlag("limit", "with --rework, at most `N` reworks per lineage (default: git config nwdes.swarm.reworks, else 2)", 0),
					&cli.StringFlag{Name: "land", Usage: "with --rework, land each accepted head on the branch its card names, on the git remote `NAME` (as swarm land)"},
					hidden(durationFlag("heartbeat", "renew leases every `D`", 5*time.Second)),
					intFlag("attempts", "attempts at a card whose launch fails (it did not start, or exited within the launch grace with no result)", swarm.DefaultRetry().Attempts),
					hidden(durationFlag("launch-grace", "a harness that exits within `D` with no result failed to launch", swarm.DefaultRetry().LaunchGrace)),
					hidden(durationFlag("retry-backoff", "wait about `D` before the second attempt (doubled each time, jittered)", swarm.DefaultRetry().Backoff)),
					durationFlag("stale-after", "a lease from another host is stale once this supervisor has seen its heartbeat unchanged for `D`", swarm.DefaultStaleAfter),
					jsonFlag(),
				},
				Action: func(c *cli.Context) error {
					asJSON := s.wantJSON(c)
					st, err := s.open()
					if err != nil {
						return err
					}
					w, err := s.readWorker(c.String("worker"))
					if err != nil {
						return err
					}
					strict, err := gateStrict(c, s.cfg)
					if err != nil {
						return err
					}
					sup, err := s.supervisor(c, st, w, strict)
					if err != nil {
						return err
					}
					if c.Bool("gate") || c.Bool("rework") {
						if c.Duration("gate-timeout") <= 0 {
							return usagef("--gate-timeout must be positive")
						}
						sup.Gates = &swarm.HeadGates{Wall: sup.Wall, Timeout: c.Duration("gate-timeout")}
					}
					switch {
					case asJSON:
						enc := json.NewEncoder(s.env.Stdout)
						sup.Events = func(e swarm.Event) { _ = enc.Encode(e) }
					default:
						prog := &swarmProgress{w: s.env.Stderr, live: s.env.Terminal && !c.Bool("rework"), rows: map[string]*progressRow{}}
						sup.Events = prog.event
					}
					if c.Bool("rework") {
						return s.swarmLoop(c, st, sup, strict, asJSON)
					}
					if c.IsSet("examiner") || c.IsSet("limit") || c.IsSet("land") {
						return usagef("--examiner, --limit and --land go with --rework")
					}
					sum, err := sup.Run(c.Context)
					if err != nil {
						return err
					}
					if !asJSON {
						fmt.Fprintf(s.env.Stdout, "ran %d jobs (%d stopped)\n", sum.Ran, sum.Stopped)
						for label, why := range sum.Skipped {
							fmt.Fprintf(s.env.Stderr, "skipped %s: %s\n", text.TerminalLine(label), text.TerminalLine(why))
						}
						for _, label := range slices.Sorted(maps.Keys(sum.Blocked)) {
							fmt.Fprintf(s.env.Stderr, "blocked %s: %s\n", text.TerminalLine(label), text.TerminalLine(sum.Blocked[label]))
						}
					}
					return nil
				},
			},
			{
				Name:      "status",
				Usage:     "the queue, the leases and the finished jobs (each with its harvested head)",
				UsageText: "git nwdes swarm status [--remote NAME] [--json]",
				Description: `EXAMPLES
   git nwdes swarm status
   git nwdes swarm status --json
` + exitStatus(),
				Flags: []cli.Flag{remoteFlag, jsonFlag()},
				Action: func(c *cli.Context) error {
					asJSON := s.wantJSON(c)
					st, err := s.open()
					if err != nil {
						return err
					}
					return s.swarmStatus(c, st, asJSON)
				},
			},
			{
				Name:      "leases",
				Usage:     "list every lease with its state",
				UsageText: "git nwdes swarm leases [--remote NAME] [--json]",
				Description: `States: live (held by a live process on this host, within its time),
drift (its holder is alive but past its time), stranded (its holder on this
host is gone: the card runs again), held (from another host, heartbeat
within the stale window), stale (no heartbeat for the stale window: may be
taken over). With --remote the leases are the remote's, as last fetched.

EXAMPLES
   git nwdes swarm leases
   git nwdes swarm leases --remote origin --json
` + exitStatus(),
				Flags: []cli.Flag{remoteFlag, jsonFlag()},
				Action: func(c *cli.Context) error {
					asJSON := s.wantJSON(c)
					st, err := s.open()
					if err != nil {
						return err
					}
					rows, err := s.leaseRows(c, st)
					if err != nil {
						return err
					}
					if asJSON {
						return writeJSON(s.env.Stdout, rows)
					}
					for _, r := range rows {
						fmt.Fprintf(s.env.Stdout, "%-9s %s attempt %d by %s pid %d, heartbeat %s\n", r.State, text.TerminalLine(r.Label), r.Attempt, text.TerminalLine(r.Host), r.PID, r.Heartbeat)
					}
					return nil
				},
			},
			{
				Name:      "release",
				Usage:     "release a lease (a live one only with --force)",
				UsageText: "git nwdes swarm release --card LABEL [--force] [--remote NAME]",
				Description: `EXAMPLES
   git nwdes swarm release --card fix-typo
   git nwdes swarm release --card fix-typo --force --remote origin
` + exitStatus(),
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "card", Usage: "the card `LABEL`", Required: true},
					&cli.BoolFlag{Name: "force", Usage: "release it even while its holder lives"},
					remoteFlag,
				},
				Action: func(c *cli.Context) error {
					st, err := s.open()
					if err != nil {
						return err
					}
					rows, err := s.leaseRows(c, st)
					if err != nil {
						return err
					}
					for _, r := range rows {
						if r.Label != c.String("card") {
							continue
						}
						if (r.State == swarm.Live || r.State == swarm.Drift || r.State == swarm.Held) && !c.Bool("force") {
							return refusal.New(refusal.LeaseHeld, "stop the card (git nwdes swarm stop --card "+r.Label+"), or release it with --force",
								"the lease on %s is %s (pid %d on %s)", r.Label, r.State, r.PID, r.Host)
						}
						book, err := s.book(c, st)
						if err != nil {
							return err
						}
						if err := book.Release(c.Context, r.Label, r.tip); err != nil {
							return err
						}
						fmt.Fprintf(s.env.Stdout, "released %s\n", text.TerminalLine(r.Label))
						return nil
					}
					return refusal.New(refusal.MissingFact, "git nwdes swarm leases lists them", "no lease on %q", c.String("card"))
				},
			},
			{
				Name:      "reap",
				Usage:     "remove old job directories (their records stay)",
				UsageText: "git nwdes swarm reap [--older-than D] [--dry-run] [--remote NAME] [--json]",
				Description: `Removes the job directories under .git/nwdes/swarm/jobs older than D
(default 168h): those of recorded jobs (the record keeps exit.json and
RESULT.md), and those of attempts that never recorded (a killed
supervisor's) whose lease no longer holds. A directory with a file system
mounted inside it is kept and named; nothing is followed through a link.

EXAMPLES
   git nwdes swarm reap --dry-run
   git nwdes swarm reap --older-than 24h
` + exitStatus(),
				Flags: []cli.Flag{
					durationFlag("older-than", "reap directories older than `D`", 7*24*time.Hour),
					&cli.BoolFlag{Name: "dry-run", Usage: "name what would be removed, remove nothing"},
					remoteFlag, jsonFlag(),
				},
				Action: func(c *cli.Context) error {
					asJSON := s.wantJSON(c)
					st, err := s.open()
					if err != nil {
						return err
					}
					book, err := s.book(c, st)
					if err != nil {
						return err
					}
					me, err := swarm.Self(s.owner())
					if err != nil {
						return err
					}
					r, err := swarm.Reap(c.Context, st, book, filepath.Join(st.Location().CommonDir, "nwdes", "swarm", "jobs"), me, c.Duration("older-than"), s.now(), c.Bool("dry-run"))
					if err != nil {
						return err
					}
					if asJSON {
						return writeJSON(s.env.Stdout, r)
					}
					verb := "removed"
					if c.Bool("dry-run") {
						verb = "would remove"
					}
					for _, d := range r.Removed {
						fmt.Fprintf(s.env.Stdout, "%s %s\n", verb, text.TerminalLine(d))
					}
					for _, d := range r.Kept {
						fmt.Fprintf(s.env.Stdout, "kept %s\n", text.TerminalLine(d))
					}
					return nil
				},
			},
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

func (s *session) book(c *cli.Context, st *gitstore.Store) (swarm.Book, error) {
	if r := c.String("remote"); r != "" {
		return &swarm.Remote{Store: st, Name: r, Sync: s.syncOptions()}, nil
	}
	return &swarm.Local{Store: st}, nil
}

func (s *session) supervisor(c *cli.Context, st *gitstore.Store, w *swarm.Worker, strict bool) (*swarm.Supervisor, error) {
	book, err := s.book(c, st)
	if err != nil {
		return nil, err
	}
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

// leaseRow is one lease as listed.
type leaseRow struct {
	Label     string      `json:"label"`
	State     swarm.State `json:"state"`
	Attempt   int         `json:"attempt"`
	Owner     string      `json:"owner"`
	Host      string      `json:"host"`
	PID       int         `json:"pid"`
	Until     string      `json:"until"`
	Heartbeat string      `json:"heartbeat"`
	Error     string      `json:"error,omitempty"`
	tip       oid.ID
}

func (s *session) leaseRows(c *cli.Context, st *gitstore.Store) ([]leaseRow, error) {
	book, err := s.book(c, st)
	if err != nil {
		return nil, err
	}
	if r := c.String("remote"); r != "" {
		if _, err := gitremote.New(st).Fetch(c.Context, r, s.syncOptions()); err != nil {
			return nil, err
		}
	}
	entries, err := book.List(c.Context)
	if err != nil {
		return nil, err
	}
	me, err := swarm.Self(s.owner())
	if err != nil {
		return nil, err
	}
	rows := []leaseRow{}
	for _, e := range entries {
		r := leaseRow{Label: e.Label, tip: e.Tip}
		l := e.Lease
		if l == nil {
			l = &swarm.Lease{}
			r.Error = e.Err.Error()
		}
		// A one-shot reader has watched nothing change: another host's
		// lease is held (staleness is the supervisors' own observation).
		r.State = swarm.StateOf(l, 0, me, s.now(), c.Duration("stale-after"))
		r.Attempt, r.Owner, r.Host, r.PID, r.Until, r.Heartbeat = l.Attempt, l.Owner, l.Host, l.PID, l.Until, l.Heartbeat
		rows = append(rows, r)
	}
	return rows, nil
}

type jobRow struct {
	Card      string `json:"card"`
	Attempt   int    `json:"attempt"`
	End       string `json:"end"`
	Result    string `json:"result"`
	Reason    string `json:"reason,omitempty"`
	Stopped   bool   `json:"stopped,omitempty"`
	Started   string `json:"started"`
	Ended     string `json:"ended"`
	Dir       string `json:"job_dir"`
	ExitCheck string `json:"exit_check"`
	// Harvest and Head say what became of the job's commits: the head
	// harvested into this repository under HeadRef (swarm.Job).
	Harvest      string   `json:"harvest,omitempty"`
	HarvestNote  string   `json:"harvest_note,omitempty"`
	Head         string   `json:"head,omitempty"`
	HeadRef      string   `json:"head_ref,omitempty"`
	Commits      int      `json:"commits,omitempty"`
	Changed      []string `json:"changed,omitempty"`
	ChangedCount int      `json:"changed_count,omitempty"`
	// Outside are the changed paths the card's PATHS does not cover.
	Outside      []string `json:"outside,omitempty"`
	OutsideCount int      `json:"outside_count,omitempty"`
	// Spent is the harness's last reading, Budget the job's budget.
	Spent        *swarm.Spent `json:"spent,omitempty"`
	SpentProblem string       `json:"spent_problem,omitempty"`
	Budget       string       `json:"budget,omitempty"`
	Retry        bool         `json:"retry,omitempty"`
	RetryAfter   string       `json:"retry_after,omitempty"`
	// Identity is the git identity the worker ran with; Journal and
	// Examination what became of an examine card's journal (swarm.Job).
	Identity    string             `json:"identity,omitempty"`
	Journal     string             `json:"journal,omitempty"`
	Examination string             `json:"examination,omitempty"`
	Gate        *swarm.GateSummary `json:"gate,omitempty"`
}

func (s *session) swarmStatus(c *cli.Context, st *gitstore.Store, asJSON bool) error {
	if r := c.String("remote"); r != "" {
		if _, err := gitremote.New(st).Fetch(c.Context, r, s.syncOptions()); err != nil {
			return err
		}
	}
	queue, err := swarm.Queue(st)
	if err != nil {
		return err
	}
	jobs, err := swarm.Jobs(st)
	if err != nil {
		return err
	}
	leases, err := s.leaseRows(c, st)
	if err != nil {
		return err
	}
	stops, err := swarm.Stops(st)
	if err != nil {
		return err
	}
	ctl, err := swarm.ReadControl(st)
	if err != nil {
		return err
	}
	finished := swarm.Finished(jobs, ctl)
	blocked := swarm.Blocked(queue, jobs, ctl)
	rows := []jobRow{}
	var spent swarm.Spent // summed over the jobs whose harness reported
	reported := 0
	for _, j := range jobs {
		check := "ok"
		if why := swarm.VerifyExit(&j); why != "" {
			check = why
		}
		rows = append(rows, jobRow{Card: j.Label, Attempt: j.Attempt, End: string(j.End), Result: string(j.Result), Reason: j.Reason,
			Stopped: j.Stopped, Started: j.Started, Ended: j.Ended, Dir: j.JobDir, ExitCheck: check,
			Harvest: j.Harvest, HarvestNote: j.HarvestNote, Head: j.Head, HeadRef: j.HeadRef, Commits: j.Commits,
			Changed: j.Changed, ChangedCount: j.ChangedCount, Outside: j.Outside, OutsideCount: j.OutsideCount,
			Spent: j.Spent, SpentProblem: j.SpentProblem, Budget: j.Budget, Retry: j.Retry, RetryAfter: j.RetryAfter,
			Identity: j.Identity, Journal: j.Journal, Examination: j.Examination, Gate: j.Gate})
		if j.Spent != nil {
			spent.Add(*j.Spent)
			reported++
		}
	}
	queued, dropped := []string{}, []string{}
	for _, q := range queue {
		if _, ok := ctl.Dropped[q.Card.Label]; ok {
			dropped = append(dropped, q.Card.Label)
		} else if !finished[q.Card.Label] {
			queued = append(queued, q.Card.Label)
		}
	}
	stopped := []string{}
	for k := range stops {
		stopped = append(stopped, k)
	}
	sort.Strings(stopped)
	rd, err := examine.NewVerifiedReader(st)
	if err != nil {
		return err
	}
	landings, err := swarm.Landings(st, "")
	if err != nil {
		return err
	}
	lineage, lineageLeft, err := swarm.Lineages(rd, queue, jobs, landings)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(s.env.Stdout, map[string]any{"queued": queued, "jobs": rows, "leases": leases, "stopped": stopped, "dropped": dropped,
			"blocked": blocked, "spent": spent, "spent_jobs": reported, "lineage": lineage, "lineage_left_out": lineageLeft})
	}
	defer s.printLineage(lineage, lineageLeft)
	fmt.Fprintf(s.env.Stdout, "queued: %d", len(queued))
	if len(queued) > 0 {
		fmt.Fprintf(s.env.Stdout, " (%s)", text.TerminalLine(strings.Join(queued, ", ")))
	}
	fmt.Fprintln(s.env.Stdout)
	if len(stopped) > 0 {
		fmt.Fprintf(s.env.Stdout, "stopped: %s\n", text.TerminalLine(strings.Join(stopped, ", ")))
	}
	if len(dropped) > 0 {
		fmt.Fprintf(s.env.Stdout, "dropped: %s\n", text.TerminalLine(strings.Join(dropped, ", ")))
	}
	for _, label := range slices.Sorted(maps.Keys(blocked)) {
		fmt.Fprintln(s.env.Stdout, text.TerminalLine("blocked "+label+": "+blocked[label]))
	}
	if reported > 0 {
		fmt.Fprintf(s.env.Stdout, "spent: %s (reported by %s of %d)\n", spentText(spent), text.Plural(reported, "job", "jobs"), len(rows))
	}
	for _, l := range leases {
		fmt.Fprintf(s.env.Stdout, "lease %-9s %s attempt %d on %s\n", l.State, text.TerminalLine(l.Label), l.Attempt, text.TerminalLine(l.Host))
	}
	for _, r := range rows {
		line := fmt.Sprintf("job %s #%d: %s, result %s", r.Card, r.Attempt, r.End, r.Result)
		if r.Reason != "" {
			line += " (" + r.Reason + ")"
		}
		if r.ExitCheck != "ok" {
			line += "; exit record: " + r.ExitCheck
		}
		switch {
		case r.Journal != "":
			line += "; journal " + r.Journal
		case r.Head != "":
			line += fmt.Sprintf("; head %s (%s, %s, %s changed)", text.Short(r.Head), r.Harvest,
				text.Plural(r.Commits, "commit", "commits"), text.Plural(r.ChangedCount, "path", "paths"))
		case r.Harvest == swarm.HarvestNone:
			line += "; no commits"
		case r.Harvest == swarm.HarvestRefused:
			line += "; harvest refused: " + r.HarvestNote
		}
		if r.OutsideCount > 0 {
			line += fmt.Sprintf("; %s outside PATHS", text.Plural(r.OutsideCount, "path", "paths"))
		}
		if r.Spent != nil {
			line += "; spent " + spentText(*r.Spent)
		}
		if r.Gate != nil {
			line += "; " + r.Gate.String()
		}
		fmt.Fprintln(s.env.Stdout, text.TerminalLine(line))
	}
	return nil
}

// swarmProgress shows a run: on a terminal a table redrawn in place, one
// row per job (card, state, elapsed of deadline, end and result);
// otherwise one plain line per event.
type swarmProgress struct {
	mu    sync.Mutex
	w     io.Writer
	live  bool
	rows  map[string]*progressRow
	order []string
	drawn int
}

type progressRow struct {
	state, end, result string
	attempt            int
	started            time.Time
	deadline           time.Duration
	elapsed            time.Duration
}

func (p *swarmProgress) event(e swarm.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.live {
		line := fmt.Sprintf("%s %s", e.Kind, e.Label)
		if e.Attempt > 0 {
			line += fmt.Sprintf(" #%d", e.Attempt)
		}
		if e.End != "" {
			line += " " + string(e.End) + ", result " + string(e.Result)
		}
		if e.Detail != "" {
			line += ": " + e.Detail
		}
		fmt.Fprintf(p.w, "swarm: %s\n", text.TerminalLine(line))
		return
	}
	key := e.Label
	r := p.rows[key]
	if r == nil && key != "" {
		r = &progressRow{}
		p.rows[key] = r
		p.order = append(p.order, key)
	}
	if r != nil {
		r.state = string(e.Kind)
		if e.Attempt > 0 {
			r.attempt = e.Attempt
		}
		if e.Deadline > 0 {
			r.deadline = e.Deadline
		}
		if e.Kind == swarm.EventStarted {
			r.started = e.Time
		}
		if e.Elapsed > 0 {
			r.elapsed = e.Elapsed
		}
		if e.End != "" {
			r.end, r.result = string(e.End), string(e.Result)
		}
	}
	p.redraw()
}

func (p *swarmProgress) redraw() {
	var b strings.Builder
	if p.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA\x1b[J", p.drawn)
	}
	counts := map[string]int{}
	for _, k := range p.order {
		r := p.rows[k]
		st := r.state
		switch st {
		case "recorded", "released":
			st = r.result
		}
		counts[st]++
		el := r.elapsed
		if !r.started.IsZero() && r.end == "" {
			el = time.Since(r.started).Truncate(time.Second)
		}
		fmt.Fprintf(&b, "  %-24s #%-2d %-9s %8s / %-8s %s\n", k, r.attempt, st, el.Truncate(time.Second), r.deadline, r.end)
	}
	fmt.Fprintf(&b, "  running %d, done %d, blocked %d, refused %d\n", counts["started"]+counts["renewed"], counts["ok"], counts["blocked"], counts["refused"])
	p.drawn = len(p.order) + 1
	io.WriteString(p.w, b.String())
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
