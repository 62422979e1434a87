package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/swarm"
)

// swarmRunOptions are the flags swarm run reads itself. The supervisor's
// own (--workers, --follow, --remote, --attempts, the durations) are read
// by supervisor, and the loop's by swarmLoop, both from the context, as
// the examiner's supervisor is built the same way.
type swarmRunOptions struct {
	Worker      string
	Gate        bool
	GateTimeout time.Duration
	Rework      bool
	// LoopFlags is whether any flag that only --rework uses was given.
	LoopFlags bool
	JSON      bool
}

func (s *session) swarmRunCmd() *cli.Command {
	return &cli.Command{
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
			swarmRemoteFlag(),
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
			return s.swarmRun(c, swarmRunOptions{JSON: s.wantJSON(c), Worker: c.String("worker"),
				Gate: c.Bool("gate"), GateTimeout: c.Duration("gate-timeout"), Rework: c.Bool("rework"),
				LoopFlags: c.IsSet("examiner") || c.IsSet("limit") || c.IsSet("land")})
		},
	}
}

func (s *session) swarmRun(c *cli.Context, o swarmRunOptions) error {
	st, err := s.open()
	if err != nil {
		return err
	}
	w, err := s.readWorker(o.Worker)
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
	if o.Gate || o.Rework {
		if o.GateTimeout <= 0 {
			return usagef("--gate-timeout must be positive")
		}
		sup.Gates = &swarm.HeadGates{Wall: sup.Wall, Timeout: o.GateTimeout}
	}
	sup.Events = s.runEvents(o)
	if o.Rework {
		return s.swarmLoop(c, st, sup, strict, o.JSON)
	}
	if o.LoopFlags {
		return usagef("--examiner, --limit and --land go with --rework")
	}
	sum, err := sup.Run(c.Context)
	if err != nil {
		return err
	}
	if !o.JSON {
		s.renderRun(sum)
	}
	return nil
}

// runEvents shows a run's events: one JSON object per line with --json,
// else progress on stderr (a live table on a terminal, except in the
// loop, whose steps are lines).
func (s *session) runEvents(o swarmRunOptions) func(swarm.Event) {
	if o.JSON {
		enc := json.NewEncoder(s.env.Stdout)
		return func(e swarm.Event) { _ = enc.Encode(e) }
	}
	prog := &swarmProgress{w: s.env.Stderr, live: s.env.Terminal && !o.Rework, rows: map[string]*progressRow{}}
	return prog.event
}

func (s *session) renderRun(sum *swarm.Summary) {
	fmt.Fprintf(s.env.Stdout, "ran %d jobs (%d stopped)\n", sum.Ran, sum.Stopped)
	for label, why := range sum.Skipped {
		fmt.Fprintf(s.env.Stderr, "skipped %s: %s\n", text.TerminalLine(label), text.TerminalLine(why))
	}
	for _, label := range slices.Sorted(maps.Keys(sum.Blocked)) {
		fmt.Fprintf(s.env.Stderr, "blocked %s: %s\n", text.TerminalLine(label), text.TerminalLine(sum.Blocked[label]))
	}
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
