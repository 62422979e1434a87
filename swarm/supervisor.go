package swarm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/sandbox"
)

// Supervisor runs queued cards with one worker description, as many at a
// time as Workers, until no card is left to run (or forever with Follow).
type Supervisor struct {
	Store *gitstore.Store
	// Book keeps the leases: Local, or Remote for supervisors on many
	// machines sharing a remote.
	Book Book
	// Remote, when set, is fetched before each look at the queue and
	// pushed to after each recorded job, so that clones sharing it see
	// one queue and one ledger.
	Remote string
	Sync   gitstore.SyncOptions
	Wall   *sandbox.Wall
	Worker *Worker
	// Workers is how many jobs run at once (the worker's slots when 0).
	Workers int
	Follow  bool
	// JobsDir is where job directories are made.
	JobsDir string
	Holder  Holder
	// StaleAfter is the stale window for leases from other hosts.
	StaleAfter time.Duration
	// Heartbeat is how often a running job's lease is renewed and the
	// stop records read (default 5s); Poll how often an idle supervisor
	// looks at the queue again (default 1s).
	Heartbeat, Poll time.Duration
	// Grace is added to a job's deadline for its lease's Until.
	Grace time.Duration
	// Export writes a commit's tree into a directory (examine.ExportTree).
	Export func(st gitstore.CommitReader, commit oid.ID, dir string) error
	// HarvestLimits bound what is copied of a job's commits
	// (DefaultHarvestLimits when zero).
	HarvestLimits gitstore.AdoptLimits
	// Retry says how a launch failure is tried again (DefaultRetry's
	// values for its zero fields).
	Retry RetryPolicy
	// Rand, when set, is the source of the retry backoff's jitter, in
	// [0, 1) (math/rand/v2's when nil).
	Rand func() float64
	// Examining, when set, lets the supervisor run examine cards
	// (examinecard.go); without it they are skipped.
	Examining *Examining
	// Gates, when set, runs the feature's gates on each harvested head
	// before its job is recorded (swarm run --gate; gate.go).
	Gates *HeadGates
	// Only, when set, says which queued cards this supervisor takes; the
	// others are left for another (swarm run --rework runs a producer
	// and an examiner, each taking only its own kind of card).
	Only func(*Card) bool
	// Events, when set, receives what happens, in order per job.
	Events func(Event)
	Now    func() time.Time

	// Watch remembers when this supervisor first saw each lease's
	// heartbeat (staleness is measured by its own clock); one is made,
	// on Now, when nil.
	Watch *Watch

	watchOnce sync.Once
	trOnce    sync.Once
	tr        *transport // the clone's swarm transport (remote mode)

	mu      sync.Mutex        // serialises Events
	state   sync.Mutex        // guards running and skipped
	running map[string]bool   // nonces of this supervisor's running jobs
	skipped map[string]string // cards this run cannot stage, and why
	blocked map[string]string // cards whose DEPENDS-ON failed, as last said

	ledger    ledger // the queue, jobs and control records last read, parsed (cache.go)
	spareOnce sync.Once
	spare     *spares // spare job directories made while jobs run (spare.go)

	// machineFault, when set, fails the machinery's writes in job
	// directories (machine.fault); set by tests only.
	machineFault func(name string) error
}

func (s *Supervisor) spares() *spares {
	s.spareOnce.Do(func() { s.spare = newSpares(s.JobsDir, s.Holder) })
	return s.spare
}

func (s *Supervisor) setRunning(nonce string, on bool) {
	s.state.Lock()
	defer s.state.Unlock()
	if s.running == nil {
		s.running = map[string]bool{}
	}
	if on {
		s.running[nonce] = true
	} else {
		delete(s.running, nonce)
	}
}

// orphan reports a lease this very process holds for no job it runs (a
// job whose renewal or release failed): it may take it again.
func (s *Supervisor) orphan(l *Lease) bool {
	s.state.Lock()
	defer s.state.Unlock()
	return l != nil && l.Holder == s.Holder && !s.running[l.Nonce]
}

func (s *Supervisor) skip(label, why string) {
	s.state.Lock()
	defer s.state.Unlock()
	if s.skipped == nil {
		s.skipped = map[string]string{}
	}
	s.skipped[label] = why
}

// noteBlocked remembers why a card does not run, reporting whether that
// is news (said once, unless why changes); unblock forgets it.
func (s *Supervisor) noteBlocked(label, why string) bool {
	s.state.Lock()
	defer s.state.Unlock()
	if s.blocked == nil {
		s.blocked = map[string]string{}
	}
	news := s.blocked[label] != why
	s.blocked[label] = why
	return news
}

func (s *Supervisor) unblock(label string) {
	s.state.Lock()
	defer s.state.Unlock()
	delete(s.blocked, label)
}

func (s *Supervisor) isSkipped(label string) bool {
	s.state.Lock()
	defer s.state.Unlock()
	_, ok := s.skipped[label]
	return ok
}

// EventKind names what an Event says happened.
type EventKind string

// The kinds of events a supervisor emits (docs/swarm.md lists them; a test
// holds the two together).
const (
	EventTaken         EventKind = "taken"          // a lease was taken on a card
	EventSkipped       EventKind = "skipped"        // a card this clone cannot stage was left for others
	EventBlocked       EventKind = "blocked"        // a card whose DEPENDS-ON failed, was dropped or is not queued does not run
	EventStarted       EventKind = "started"        // the harness started
	EventRenewed       EventKind = "renewed"        // the lease was renewed
	EventRenewFailed   EventKind = "renew-failed"   // a renewal failed for another reason than a lost lease; tried again
	EventLost          EventKind = "lost"           // the lease moved under its holder: the job is not recorded
	EventStopped       EventKind = "stopped"        // a stop record ended the job
	EventIdle          EventKind = "idle"           // the job wrote nothing and used no CPU for the worker's idle time: ended
	EventBudget        EventKind = "budget"         // a reading of spent.json passed the budget, or readings stopped arriving: ended
	EventSyncFailed    EventKind = "sync-failed"    // a fetch, or a read of the stop records, failed while the job ran; tried again at the next heartbeat
	EventGated         EventKind = "gated"          // an oracle ran at a harvested head (swarm run --gate) or a rebased candidate (the loop), then the gates' summary
	EventRecorded      EventKind = "recorded"       // the job's record was written (and pushed)
	EventRetry         EventKind = "retry"          // the job failed to launch: its card runs again after a backoff
	EventReleased      EventKind = "released"       // the lease was released
	EventReleaseFailed EventKind = "release-failed" // the lease could not be released (tried three times)
	// What the unattended loop (swarm run --rework; loop.go) decided.
	EventExamineQueued EventKind = "examine-queued" // an examine card was queued for a harvested head or a rebased candidate
	EventJudged        EventKind = "judged"         // the one judgment's outcome of a head, once its examination was replayed
	EventReworkQueued  EventKind = "rework-queued"  // a rejected head's rework card was queued
	EventLandQueued    EventKind = "land-queued"    // an accepted candidate joined the landing queue (swarm run --land)
	EventLanded        EventKind = "landed"         // an accepted candidate was landed on its branch, or refused (swarm run --land)
	EventRebased       EventKind = "rebased"        // the branch had moved: land rebased the candidate into a new one, to gate and examine
	EventLineageEnded  EventKind = "lineage-ended"  // a lineage ended: accepted, at its bound, for a person, or stopped
)

// EventKinds lists every kind, in the order a job meets them.
func EventKinds() []EventKind {
	return []EventKind{EventTaken, EventSkipped, EventBlocked, EventStarted, EventRenewed, EventRenewFailed, EventLost,
		EventStopped, EventIdle, EventBudget, EventSyncFailed, EventGated, EventRecorded, EventRetry, EventReleased, EventReleaseFailed,
		EventExamineQueued, EventJudged, EventReworkQueued, EventLandQueued, EventLanded, EventRebased, EventLineageEnded}
}

// Event is one thing a supervisor did.
type Event struct {
	Time    time.Time     `json:"time"`
	Kind    EventKind     `json:"kind"`
	Label   string        `json:"label,omitempty"`
	Attempt int           `json:"attempt,omitempty"`
	End     End           `json:"end,omitempty"`
	Result  Verdict       `json:"result,omitempty"`
	Detail  string        `json:"detail,omitempty"`
	Elapsed time.Duration `json:"elapsed_ns,omitempty"`
	// Deadline is the job's deadline, on taken and started.
	Deadline time.Duration `json:"deadline_ns,omitempty"`
}

func (s *Supervisor) emit(e Event) {
	if s.Events == nil {
		return
	}
	e.Time = now(s.Now)
	e.Detail = s.redact(e.Detail)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Events(e)
}

// Summary is what a run did.
type Summary struct {
	Ran, Stopped int
	// Skipped are the cards this run could not stage (a base this clone
	// lacks, say), each with why; they stay queued.
	Skipped map[string]string
	// Blocked are the cards that did not run because a card of their
	// DEPENDS-ON finished other than ok, was dropped or is not queued,
	// each with why; they stay queued.
	Blocked map[string]string
}

// Run supervises until no unfinished card can be taken: every card is
// finished, or held by another supervisor (its to run), stopped or
// skipped. With Follow it keeps watching until ctx ends. A stop record for every card ends the running
// jobs and the run.
func (s *Supervisor) Run(ctx context.Context) (*Summary, error) {
	n := s.Workers
	if n <= 0 {
		n = s.Worker.Slots
	}
	if n <= 0 {
		n = 1
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		sum  Summary
		errs []error
	)
	s.spares().make(n) // the first job's directories, made while the queue is read
	defer s.spares().close()
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				q, lease, tip, secret, done, err := s.next(ctx)
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
				if done {
					return
				}
				if q == nil {
					select {
					case <-ctx.Done():
						return
					case <-time.After(s.poll()):
					}
					continue
				}
				stopped, err := s.runJob(ctx, q, lease, tip, secret)
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else if stopped {
					sum.Stopped++
				} else {
					sum.Ran++
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	s.state.Lock()
	sum.Skipped, sum.Blocked = s.skipped, s.blocked
	s.state.Unlock()
	if err := ctx.Err(); err != nil && len(errs) == 0 {
		return &sum, err
	}
	return &sum, errors.Join(errs...)
}

// transport is the clone's swarm transport, shared with a Remote book of
// the same store: one fetch or push in flight, the others merged into the
// next (transport.go).
func (s *Supervisor) transport() *transport {
	s.trOnce.Do(func() {
		if b, ok := s.Book.(*Remote); ok && b.Store == s.Store {
			s.tr = b.transport()
		} else {
			s.tr = newTransport(s.Store)
		}
	})
	return s.tr
}

func (s *Supervisor) watch() *Watch {
	s.watchOnce.Do(func() {
		if s.Watch == nil {
			s.Watch = &Watch{Now: s.Now}
		}
	})
	return s.Watch
}

// fetch fetches the remote (remote mode), merged with any fetch or push
// asked for meanwhile.
func (s *Supervisor) fetch(ctx context.Context) error {
	return s.transport().sync(ctx, s.Remote, s.Sync, false)
}

// push pushes to the remote (which fetches first).
func (s *Supervisor) push(ctx context.Context) error {
	return s.transport().sync(ctx, s.Remote, s.Sync, true)
}

func (s *Supervisor) poll() time.Duration {
	if s.Poll > 0 {
		return s.Poll
	}
	return time.Second
}

func (s *Supervisor) heartbeat() time.Duration {
	if s.Heartbeat > 0 {
		return s.Heartbeat
	}
	return 5 * time.Second
}

// next takes a lease on the next card to run. It returns done when none
// can be taken (and not Follow), or a nil card to look again later.
func (s *Supervisor) next(ctx context.Context) (*Queued, *Lease, oid.ID, []byte, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, oid.ID{}, nil, true, nil
	}
	if s.Remote != "" {
		// Push, not just fetch: a job record an earlier push could not
		// deliver reaches the remote before anything else is taken.
		if err := s.push(ctx); err != nil {
			return nil, nil, oid.ID{}, nil, false, err
		}
	}
	ctl, stops, err := s.ledger.Control(s.Store)
	if err != nil {
		return nil, nil, oid.ID{}, nil, false, err
	}
	if _, all := stops["all"]; all {
		return nil, nil, oid.ID{}, nil, true, nil
	}
	queue, err := s.ledger.Queue(s.Store)
	if err != nil {
		return nil, nil, oid.ID{}, nil, false, err
	}
	sum, err := s.ledger.summary(s.Store, ctl)
	if err != nil {
		return nil, nil, oid.ID{}, nil, false, err
	}
	outcomes, retries, attempts := sum.outcomes, sum.retries, sum.attempts
	queued := make(map[string]bool, len(queue))
	for _, q := range queue {
		queued[q.Card.Label] = true
	}
	// pending: a card waits for its retry's backoff, which this run
	// sees through rather than ending.
	pending := false
	for i := range queue {
		q := &queue[i]
		label := q.Card.Label
		if _, finished := outcomes[label]; finished {
			continue
		}
		if _, dropped := ctl.Dropped[label]; dropped {
			continue
		}
		if _, stopped := stops[label]; stopped {
			continue
		}
		if s.isSkipped(label) || (s.Only != nil && !s.Only(q.Card)) {
			continue
		}
		if at, ok := retries[label]; ok && now(s.Now).Before(at) {
			pending = true
			continue
		}
		why, wait := dependencies(q.Card, queued, outcomes, ctl)
		if why != "" {
			// It does not run as things stand: said once, left queued,
			// and looked at again at each scan (a requeue of its
			// dependency that ends ok lets it run, also in this run).
			if s.noteBlocked(label, why) {
				s.emit(Event{Kind: EventBlocked, Label: label, Detail: why})
			}
			continue
		}
		s.unblock(label)
		if wait {
			continue
		}
		secret, attest := newSecret()
		t := now(s.Now)
		deadline := s.deadline(q)
		l := &Lease{
			Label: label, Holder: s.Holder, Nonce: newNonce(), Attempt: attempts[label] + 1,
			Taken: t.UTC().Format(stamp), Heartbeat: t.UTC().Format(stamp),
			Until: t.Add(deadline + s.grace()).UTC().Format(stamp), Attest: attest,
		}
		// The nonce counts as running from before the take: another worker
		// of this supervisor must not see the lease as an orphan to retake.
		s.setRunning(l.Nonce, true)
		tip, err := s.Book.Take(ctx, label, l, func(cur *Lease, curErr error, written time.Time) error {
			if curErr != nil {
				cur = &Lease{}
			}
			st := StateOf(cur, s.watch().Unchanged(label, cur, written), s.Holder, now(s.Now), s.StaleAfter)
			if !st.Takeable() && !s.orphan(cur) {
				return ErrNotTaken
			}
			if cur != nil && cur.Attempt >= l.Attempt {
				l.Attempt = cur.Attempt + 1
			}
			return nil
		})
		if errors.Is(err, ErrNotTaken) || errors.Is(err, gitstore.ErrConflict) {
			s.setRunning(l.Nonce, false)
			continue
		}
		if err != nil {
			s.setRunning(l.Nonce, false)
			return nil, nil, oid.ID{}, nil, false, err
		}
		// Someone may have finished it between the look and the take: a
		// holder records its job (and pushes it) before it releases, so
		// once the lease is ours the record is there to be seen.
		if s.Remote != "" {
			if err := s.fetch(ctx); err != nil {
				_ = s.release(ctx, label, l.Attempt, tip) // reported as an event
				s.setRunning(l.Nonce, false)
				return nil, nil, oid.ID{}, nil, false, err
			}
		}
		if fin, err := s.finished(label); err != nil || fin {
			_ = s.release(ctx, label, l.Attempt, tip) // reported as an event
			s.setRunning(l.Nonce, false)
			if err != nil {
				return nil, nil, oid.ID{}, nil, false, err
			}
			continue
		}
		s.emit(Event{Kind: EventTaken, Label: label, Attempt: l.Attempt, Deadline: deadline})
		return q, l, tip, secret, false, nil
	}
	// Nothing can be taken now: what is left is held by others (theirs
	// to run), stopped, skipped, blocked or waiting on a dependency.
	// Without Follow the run is over, unless a retry is due.
	return nil, nil, oid.ID{}, nil, !s.Follow && !pending, nil
}

func (s *Supervisor) finished(label string) (bool, error) {
	ctl, _, err := s.ledger.Control(s.Store)
	if err != nil {
		return false, err
	}
	sum, err := s.ledger.summary(s.Store, ctl)
	if err != nil {
		return false, err
	}
	_, done := sum.outcomes[label]
	_, dropped := ctl.Dropped[label]
	return done || dropped, nil
}

func (s *Supervisor) deadline(q *Queued) time.Duration {
	if q.Deadline > 0 {
		return q.Deadline
	}
	return s.Worker.Deadline
}

func (s *Supervisor) grace() time.Duration {
	if s.Grace > 0 {
		return s.Grace
	}
	return time.Minute
}

// runJob stages the job, runs the harness in the wall while renewing the
// lease, records how it ended and releases the lease. stopped is set when
// a stop record or a lost lease ended it.
func (s *Supervisor) runJob(ctx context.Context, q *Queued, l *Lease, tip oid.ID, secret []byte) (bool, error) {
	label := q.Card.Label
	defer s.setRunning(l.Nonce, false) // next set it, before taking the lease
	dir := filepath.Join(s.JobsDir, label, fmt.Sprintf("%d-%s", l.Attempt, l.Nonce))
	tl := &timeline{}
	tl.add(now(s.Now), "taken", "")
	var j *jobDir
	var err error
	if q.Card.Kind == KindExamine {
		j, err = s.stageExamine(ctx, q.Card, l, dir)
	} else {
		j, err = stage(s.Store, s.Export, q.Card, s.Worker, dir, s.spares())
	}
	if err != nil {
		// A card this clone cannot stage (its base is not here) is left
		// for others, and this run goes on with the rest.
		_ = os.RemoveAll(dir)
		_ = s.release(ctx, label, l.Attempt, tip) // reported as an event
		s.skip(label, err.Error())
		s.emit(Event{Kind: EventSkipped, Label: label, Attempt: l.Attempt, Detail: err.Error()})
		return false, nil
	}
	defer j.Machine.drop()
	j.Machine.fault = s.machineFault
	l.JobDir = dir
	tl.add(now(s.Now), "staged", "")
	deadline := s.deadline(q)
	// Readings of spent.json are not due before the first one: a harness
	// need not report. Once one came, under a budget the next is due
	// within the worker's idle time.
	spend := &spendWatch{budget: q.Card.Budget.Tighter(s.Worker.Budget), within: s.Worker.IdleTime()}
	act := &activity{w: j.Log}
	cmd := sandbox.Command{
		Args: append([]string{s.Worker.Harness}, s.Worker.Args(j.Prompt)...), Dir: j.Repo, Write: []string{dir},
		// The checkout borrows this repository's objects (alternates):
		// the harness reads them, and writes its own commits in repo/.
		Read: append([]string{s.Store.Location().Objects()}, s.Worker.ReadRoots...),
		Env:  s.Worker.Env, Home: j.Home, Tmp: j.Scratch, Deadline: deadline,
		// git in the job reads no system configuration, and HOME is the
		// job's own (empty): the host's hooks, signing and credential
		// helpers stay out.
		Set:    []string{"NWDES_JOB_DIR=" + dir, "XDG_DATA_HOME=" + j.Data, "GIT_CONFIG_NOSYSTEM=1"},
		Stdout: act, Stderr: act,
	}
	if j.Exam != nil {
		// An examiner reads its workspace and the worker's roots: none
		// of this repository's objects.
		cmd.Read = s.Worker.ReadRoots
	}
	job, err := s.Wall.NewJob()
	if err != nil {
		j.Log.Close()
		_ = s.release(ctx, label, l.Attempt, tip) // reported as an event
		return false, err
	}
	defer job.Close()
	proc, err := job.Start(ctx, cmd)
	if err != nil {
		j.Log.Close()
		_ = s.release(ctx, label, l.Attempt, tip) // reported as an event
		return false, err
	}
	started := now(s.Now)
	s.spares().make(max(s.Workers, s.Worker.Slots, 1)) // the next job's directories, made while this one runs
	tl.add(started, "started", "")
	s.emit(Event{Kind: EventStarted, Label: label, Attempt: l.Attempt, Deadline: deadline})

	// Hold the lease while the job runs: renew it, and end the job at once
	// when a stop record names it, the lease is lost, or it has been idle
	// (no output, no CPU) for the worker's idle time.
	cause, stopReason := notStopped, ""
	renewed, _ := time.Parse(stamp, l.Heartbeat) // when the lease was last written: taken, then renewed
	idle := s.Worker.IdleTime()
	// The job had used no CPU before it started: reading it here would
	// scan every process of the machine (Process.CPU) while the
	// harness starts (about a millisecond of CPU on a busy host), and
	// any CPU the first tick finds counts as activity.
	lastOut, lastCPU, active := act.written(), time.Duration(0), started
	tick := time.NewTicker(s.heartbeat())
	defer tick.Stop()
loop:
	for {
		select {
		case <-proc.Done():
			break loop
		case <-tick.C:
			t := now(s.Now)
			// CPU that cannot be read is no evidence of idleness.
			cpu, ok := proc.CPU()
			if out := act.written(); out != lastOut || !ok || cpu != lastCPU {
				lastOut, lastCPU, active = out, cpu, t
			} else if t.Sub(active) >= idle {
				cause, stopReason = stopIdle, fmt.Sprintf("idle: no output and no CPU for %s", idle)
				proc.Stop(stopReason)
				s.emit(Event{Kind: EventIdle, Label: label, Attempt: l.Attempt, Elapsed: t.Sub(started), Detail: stopReason})
				break loop
			}
			if c, why := spend.look(dir, t); c != notStopped {
				cause, stopReason = c, why
				proc.Stop(stopReason)
				s.emit(Event{Kind: EventBudget, Label: label, Attempt: l.Attempt, Elapsed: t.Sub(started), Detail: stopReason})
				break loop
			}
			l.Heartbeat = t.UTC().Format(stamp)
			next, err := s.Book.Renew(ctx, label, tip, l)
			if err != nil && !errors.Is(err, ErrLost) {
				// A renewal that failed (a network blip, a rate limit) is
				// tried again at the next heartbeat, until the lease's own
				// time is nearly out.
				until, _ := time.Parse(stamp, l.Until)
				s.emit(Event{Kind: EventRenewFailed, Label: label, Attempt: l.Attempt, Detail: err.Error()})
				if t.Add(2 * s.heartbeat()).Before(until) {
					continue
				}
			}
			if err != nil {
				cause, stopReason = stopLost, "lease lost: "+err.Error()
				proc.Stop(stopReason)
				s.emit(Event{Kind: EventLost, Label: label, Attempt: l.Attempt, Detail: err.Error()})
				break loop
			}
			tip, renewed = next, t
			if s.Remote != "" {
				// A stop record pushed elsewhere arrives by this fetch;
				// one that failed is tried again at the next heartbeat.
				if err := s.fetch(ctx); err != nil {
					s.emit(Event{Kind: EventSyncFailed, Label: label, Attempt: l.Attempt, Detail: "fetch before reading the stop records: " + err.Error()})
				}
			}
			ctl, stops, err := s.ledger.Control(s.Store)
			if err != nil {
				s.emit(Event{Kind: EventSyncFailed, Label: label, Attempt: l.Attempt, Detail: "read the stop and drop records: " + err.Error()})
			} else if st, ok := stops["all"]; ok {
				cause, stopReason = stopRequested, "stop requested for every card: "+st.Reason
			} else if st, ok := stops[label]; ok {
				cause, stopReason = stopRequested, "stop requested: "+st.Reason
			} else if d, ok := ctl.Dropped[label]; ok {
				cause, stopReason = stopRequested, "dropped: "+orNone(d.Reason)
			}
			if cause == stopRequested {
				proc.Stop(stopReason)
				s.emit(Event{Kind: EventStopped, Label: label, Attempt: l.Attempt, Detail: stopReason})
				break loop
			}
			tl.add(t, "renewed", "")
			s.emit(Event{Kind: EventRenewed, Label: label, Attempt: l.Attempt, Elapsed: t.Sub(started), Deadline: deadline})
		}
	}
	res, err := proc.Wait()
	j.Log.Close()
	ended := now(s.Now)
	// Every process of the job is gone: nothing the job wrote in its
	// repository's git directory is left for a git run outside the wall.
	sealed, serr := s.seal(j)
	if err != nil && !errors.Is(err, context.Canceled) {
		_ = s.release(ctx, label, l.Attempt, tip) // reported as an event
		return false, errors.Join(err, serr)
	}
	if serr != nil {
		_ = s.release(ctx, label, l.Attempt, tip) // reported as an event
		return false, serr
	}
	tl.add(ended, "ended", string(res.End))
	tl.add(now(s.Now), "sealed", s.redact(strings.Join(sealed, ", ")))
	end, reason := endOf(res)
	switch cause {
	case stopRequested, stopLost:
		end, reason = EndUnknown, stopReason
	case stopIdle:
		end, reason = EndIdle, stopReason
	case stopBudget:
		end, reason = EndBudget, stopReason
	case stopUnverifiable:
		end, reason = EndBudgetUnverifiable, stopReason
	}
	// The last reading counts too: a job that spent past its budget by
	// the time it ended does not end done.
	if over := spend.final(dir); over != "" && cause == notStopped {
		end, reason = EndBudget, joinReasons(over, reason)
	}
	stopped := cause == stopRequested || cause == stopLost
	reason = s.redact(reason)
	exit := Exit{Label: label, Attempt: l.Attempt, Nonce: l.Nonce, End: end, ExitCode: res.ExitCode, Signal: res.Signal,
		Survivors: res.Survivors, Started: started.UTC().Format(stamp), Ended: ended.UTC().Format(stamp), Reason: reason}
	exitBytes, forged, err := writeExit(j.Machine, dir, exit, secret)
	if err != nil {
		_ = s.release(ctx, label, l.Attempt, tip) // reported as an event
		return false, fmt.Errorf("write exit record of %s: %w", label, err)
	}
	verdict, why, report, noResult := s.result(q.Card, dir)
	if len(forged) > 0 {
		verdict, why = VerdictRefused, strings.Join(forged, "; ")
	}
	why, report = s.redact(why), []byte(s.redact(string(report)))
	tl.add(now(s.Now), "checked", string(verdict))
	d := sha256.Sum256(exitBytes)
	rec := &Job{
		Label: label, Attempt: l.Attempt, Nonce: l.Nonce, Worker: s.Worker.Name, Holder: s.Holder,
		Started: exit.Started, Ended: exit.Ended, End: end, ExitCode: res.ExitCode, Signal: res.Signal,
		Survivors: res.Survivors, Result: verdict, Reason: joinReasons(reason, why), Stopped: stopped, Forged: forged,
		Attest: l.Attest, ExitSHA256: hex.EncodeToString(d[:]), JobDir: dir,
		Spent: spend.spent, SpentProblem: s.redact(spend.problem), Budget: spend.budget.String(),
		Identity: s.examinedBy(label, l.Attempt, l.Nonce).Identity,
	}
	if cause == notStopped && len(forged) == 0 {
		s.retry(rec, res, noResult && ended.Sub(started) < s.Retry.policy().LaunchGrace)
	}
	lost := cause == stopLost
	if !lost {
		// Record under the lease: a job whose lease was taken over while
		// it ran is someone else's card now.
		if next, err := s.holdToRecord(ctx, label, tip, l, renewed); err != nil {
			lost = true
			s.emit(Event{Kind: EventLost, Label: label, Attempt: l.Attempt, Detail: err.Error()})
		} else {
			tip = next
		}
	}
	if !lost {
		// The job's commits come in under its own ref before the record
		// names them (and, remote, travel with it in the same push).
		if j.Exam != nil {
			s.examineEnd(ctx, q.Card, rec, j)
			tl.add(now(s.Now), "replayed", rec.Journal)
		} else {
			s.harvest(ctx, q.Card, rec)
			tl.add(now(s.Now), "harvested", strings.TrimSpace(rec.Harvest+" "+rec.Head))
			if s.gateHead(ctx, q.Card, rec); rec.Gate != nil {
				tl.add(now(s.Now), "gated", s.redact(rec.Gate.String()))
			}
		}
	}
	// What could not be written in the job directory is named in the
	// record: the record is what lasts.
	if err := writeUsage(j.Machine, dir, res, started, ended); err != nil {
		rec.Lost = append(rec.Lost, s.redact("usage.tsv: "+err.Error()))
	}
	if err := tl.write(j.Machine, dir); err != nil {
		rec.Lost = append(rec.Lost, s.redact("timeline.tsv: "+err.Error()))
	}
	rec.Timeline, rec.Renewals = tl.record()
	tail, total := act.tail()
	rec.LogBytes = total
	// Redacted before it is cut: a value the cut would split is whole
	// in what is redacted.
	logTail := []byte(s.redact(string(tail)))
	if len(logTail) > MaxLogTail {
		logTail = logTail[len(logTail)-MaxLogTail:]
	}
	if !lost {
		// A job whose lease was lost is not recorded: the card is someone
		// else's now.
		if err := recordJob(ctx, s.Store, rec, exitBytes, report, logTail); err != nil {
			_ = s.release(ctx, label, l.Attempt, tip) // reported as an event
			return false, err
		}
		if s.Remote != "" {
			// The lease is released only once the record is on the
			// remote: a released card with no record there runs again.
			if err := s.pushRecord(ctx); err != nil {
				return false, fmt.Errorf("job %s is recorded here but could not be pushed (its lease is kept; the next run pushes it first): %w", label, err)
			}
		}
		s.emit(Event{Kind: EventRecorded, Label: label, Attempt: l.Attempt, End: end, Result: rec.Result, Elapsed: ended.Sub(started), Detail: rec.Reason})
		if rec.Retry {
			s.emit(Event{Kind: EventRetry, Label: label, Attempt: l.Attempt, Detail: "runs again after " + rec.RetryAfter})
		}
		if err := s.release(ctx, label, l.Attempt, tip); err != nil {
			return stopped, err
		}
	}
	return stopped, nil
}

// release gives up the lease at tip, also when ctx has ended (an
// interrupted run leaves no lease behind it can release), tried a few
// times against a transient failure. What came of it is an event:
// released, lost (it had moved: someone else's now), or release-failed
// (the lease then holds until it is stranded or stale, and this process
// may take it again as its own orphan).
func (s *Supervisor) release(ctx context.Context, label string, attempt int, tip oid.ID) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	var err error
	wait := 100 * time.Millisecond
	for i := 0; i < 3; i++ {
		if i > 0 {
			time.Sleep(wait)
			wait *= 4
		}
		err = s.Book.Release(ctx, label, tip)
		var notDurable *gitstore.NotDurableError
		switch {
		case err == nil:
			s.emit(Event{Kind: EventReleased, Label: label, Attempt: attempt})
			return nil
		case errors.As(err, &notDurable):
			// The release is applied, its sync failed: trying again
			// would find the ref gone and call the lease lost.
			s.emit(Event{Kind: EventReleased, Label: label, Attempt: attempt, Detail: "released, but not synced to disk: " + notDurable.Error()})
			return nil
		case errors.Is(err, ErrLost):
			s.emit(Event{Kind: EventLost, Label: label, Attempt: attempt, Detail: "the lease moved before its release"})
			return nil
		}
	}
	s.emit(Event{Kind: EventReleaseFailed, Label: label, Attempt: attempt, Detail: err.Error()})
	return fmt.Errorf("release the lease of %s: %w", label, err)
}

// stopCause is why the supervisor ended a job before it ended by itself.
type stopCause int

const (
	notStopped       stopCause = iota
	stopRequested              // a stop record named it: recorded as stopped, the card stays queued
	stopLost                   // its lease was lost: not recorded, the card is someone else's
	stopIdle                   // no output and no CPU for the worker's idle time: ends idle
	stopBudget                 // a reading of spent.json passed the budget: ends budget
	stopUnverifiable           // under a budget, readings stopped arriving: ends budget-unverifiable
)

// activity passes the job's output on to its log, counts it, and keeps
// its last MaxLogTail bytes (the record's harness.log payload: what the
// supervisor itself passed on, never read back from the job's directory).
type activity struct {
	w  io.Writer
	n  atomic.Int64
	mu sync.Mutex
	// last holds the tail: at most 2*MaxLogTail bytes, cut to MaxLogTail
	// when read.
	last []byte
}

// MaxLogTail bounds the tail of harness.log a job record keeps.
const MaxLogTail = 8 << 10

func (a *activity) Write(p []byte) (int, error) {
	a.n.Add(int64(len(p)))
	a.mu.Lock()
	a.last = append(a.last, p...)
	if len(a.last) > 2*MaxLogTail {
		a.last = append(a.last[:0], a.last[len(a.last)-MaxLogTail:]...)
	}
	a.mu.Unlock()
	return a.w.Write(p)
}

func (a *activity) written() int64 { return a.n.Load() }

// tail is the output's last bytes (at least MaxLogTail of them when there
// were as many, at most twice that), and how many there were in all.
func (a *activity) tail() ([]byte, int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]byte(nil), a.last...), a.n.Load()
}

// harvest fills the harvest fields of rec from its sealed job directory.
func (s *Supervisor) harvest(ctx context.Context, c *Card, rec *Job) {
	base, err := oid.Parse(c.Base)
	var h harvested
	if err != nil {
		h = harvested{Harvest: HarvestRefused, Note: "the card's base is no commit id"}
	} else {
		lim := s.HarvestLimits
		if lim == (gitstore.AdoptLimits{}) {
			lim = DefaultHarvestLimits()
		}
		h = harvest(ctx, s.Store, rec.JobDir, base, HeadRef(rec.Label, rec.Attempt, rec.Nonce), lim)
	}
	rec.Harvest, rec.HarvestNote, rec.Head, rec.HeadRef = h.Harvest, s.redact(h.Note), h.Head, string(h.Ref)
	rec.Commits, rec.ChangedCount = h.Commits, h.ChangedCount
	for _, p := range h.Changed {
		rec.Changed = append(rec.Changed, s.redact(p))
		if c.Paths != nil && !InPaths(c.Paths, p) {
			rec.Outside = append(rec.Outside, s.redact(p))
			rec.OutsideCount++
		}
	}
}

// seal seals the job's directory (sealJob). When that fails its
// repository is removed whole; only when that fails too is it an error.
func (s *Supervisor) seal(j *jobDir) ([]string, error) {
	if j.Exam != nil {
		return sealExamine(j.Root)
	}
	sealed, err := sealJob(j.Root, j.Staged, j.Machine)
	if err == nil {
		return sealed, nil
	}
	root, rerr := os.OpenRoot(j.Root)
	if rerr == nil {
		rerr = root.RemoveAll("repo")
		root.Close()
	}
	if rerr != nil {
		return nil, fmt.Errorf("the repository of job %s could not be sealed (%v) nor removed: run no git in %s: %w", j.Root, err, j.Repo, rerr)
	}
	return append(sealed, "repo (removed: it could not be sealed: "+err.Error()+")"), nil
}

// minSecret is the shortest value of a variable the worker passes on
// that is redacted from what the supervisor records and says: a shorter
// one ("1", "true") would mangle records and is no credential.
const minSecret = 8

// redact replaces in text every value of a variable the worker's env
// passes into the job by <NAME>: a harness that quotes its credentials
// (in RESULT.md, in a line the wall's detector reads) does not have them
// recorded, pushed or printed by the supervisor.
func (s *Supervisor) redact(text string) string {
	if s.Wall == nil || s.Wall.Getenv == nil || s.Worker == nil || text == "" {
		return text
	}
	type secret struct{ name, value string }
	var secrets []secret
	for _, name := range s.Worker.Env {
		if v := s.Wall.Getenv(name); len(v) >= minSecret {
			secrets = append(secrets, secret{name, v})
		}
	}
	sort.Slice(secrets, func(a, b int) bool { return len(secrets[a].value) > len(secrets[b].value) })
	for _, sec := range secrets {
		text = strings.ReplaceAll(text, sec.value, "<"+sec.name+">")
	}
	return text
}

// pushRecord pushes the job ledger, trying again a few times with backoff
// (a remote's transient refusal, a rate limit).
func (s *Supervisor) pushRecord(ctx context.Context) error {
	var err error
	wait := 200 * time.Millisecond
	for i := 0; i < 5; i++ {
		if err = s.push(ctx); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait *= 2
	}
	return err
}

// joinReasons says why the job ended as it did, then why its result is
// what it is.
func joinReasons(rs ...string) string {
	var out []string
	for _, r := range rs {
		if r != "" {
			out = append(out, r)
		}
	}
	return strings.Join(out, "; ")
}

// result checks the job's RESULT.md against the card; a card that
// published none gets the machinery's, which can never count as ok.
func (s *Supervisor) result(c *Card, dir string) (verdict Verdict, why string, report []byte, none bool) {
	b, err := FindResult(dir)
	if err != nil {
		reason := "no-result"
		if !errors.Is(err, ErrNoResult) {
			reason = "unreadable-result"
		}
		m := MachineryResult(c, reason)
		_ = writeMachineFile(dir, "RESULT.md", string(m))
		return VerdictBlocked, reason, m, errors.Is(err, ErrNoResult)
	}
	r := CheckResult(c, b)
	if len(b) > 64<<10 {
		b = b[:64<<10]
	}
	return r.Verdict, r.Reason, b, false
}

// retry marks rec to be tried again when it failed to launch — it did
// not start, or its harness exited within the launch grace (quick) with
// no result — and attempts are left, after a jittered backoff; at the
// last attempt it says the supervisor gave up.
func (s *Supervisor) retry(rec *Job, res sandbox.Result, quick bool) {
	var what string
	switch {
	case res.End == sandbox.EndStartFailed:
		what = "it did not start"
	case res.End == sandbox.EndExit && quick:
		what = fmt.Sprintf("its harness exited within the launch grace (%s) with no result", s.Retry.policy().LaunchGrace)
	default:
		return
	}
	p := s.Retry.policy()
	if p.Attempts == 1 {
		return // retrying is off: a failed launch is a failure like any other
	}
	if rec.Attempt >= p.Attempts {
		rec.Reason = joinReasons(rec.Reason, fmt.Sprintf("%s; not retried: attempt %d was the last of %d", what, rec.Attempt, p.Attempts))
		return
	}
	wait := p.wait(rec.Attempt, s.jitter())
	rec.Retry = true
	rec.RetryAfter = now(s.Now).Add(wait).UTC().Format(stamp)
	rec.Reason = joinReasons(rec.Reason, fmt.Sprintf("%s; retried after %s (attempt %d of %d)", what, wait.Round(time.Millisecond), rec.Attempt+1, p.Attempts))
}

// timeline is the job's timeline.tsv: when each step happened.
type timeline struct{ steps []Step }

func (t *timeline) add(at time.Time, what, detail string) {
	t.steps = append(t.steps, Step{At: at.UTC().Format(stamp), Step: what, Detail: strings.NewReplacer("\t", " ", "\n", " ").Replace(detail)})
}

func (t *timeline) write(m machine, dir string) error {
	var b strings.Builder
	b.WriteString("time\tstep\tdetail\n")
	for _, st := range t.steps {
		b.WriteString(st.At + "\t" + st.Step + "\t" + st.Detail + "\n")
	}
	return m.write(dir, "timeline.tsv", []byte(b.String()))
}

// record is the timeline as the job record keeps it: every step but the
// renewals, which are counted.
func (t *timeline) record() ([]Step, int) {
	var out []Step
	n := 0
	for _, st := range t.steps {
		if st.Step == "renewed" {
			n++
			continue
		}
		out = append(out, st)
	}
	return out, n
}

// writeUsage writes usage.tsv: what the job used, as the wall measured it.
func writeUsage(m machine, dir string, r sandbox.Result, started, ended time.Time) error {
	return m.write(dir, "usage.tsv", fmt.Appendf(nil, "wall_ms\tstdout_bytes\tstderr_bytes\tsurvivors\n%d\t%d\t%d\t%d\n",
		ended.Sub(started).Milliseconds(), r.Stdout.Bytes, r.Stderr.Bytes, r.Survivors))
}
