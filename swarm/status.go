package swarm

import (
	"context"
	"sort"
	"time"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/oid"
	gitremote "github.com/nwdes/nwdes/gitstore/remote"
	"github.com/nwdes/nwdes/refusal"
)

// LeaseRow is one lease as swarm leases and swarm status list it.
type LeaseRow struct {
	Label     string `json:"label"`
	State     State  `json:"state"`
	Attempt   int    `json:"attempt"`
	Owner     string `json:"owner"`
	Host      string `json:"host"`
	PID       int    `json:"pid"`
	Until     string `json:"until"`
	Heartbeat string `json:"heartbeat"`
	// Error says why the lease record does not parse (its other fields
	// are then zero).
	Error string `json:"error,omitempty"`
	// Tip is the lease's ref value, the expected old value of a release.
	Tip oid.ID `json:"-"`
}

// LeaseQuery says whose leases to read and as whom: the book (with
// Remote set, the remote's leases, fetched first through Sync), the
// holder asking, its clock and the stale window.
type LeaseQuery struct {
	Store      *gitstore.Store
	Book       Book
	Remote     string
	Sync       gitstore.SyncOptions
	Here       Holder
	Now        time.Time
	StaleAfter time.Duration
}

// fetch brings the remote's records (leases among them) when the query
// names one: a reader then sees what other machines wrote.
func (q LeaseQuery) fetch(ctx context.Context) error {
	if q.Remote == "" {
		return nil
	}
	_, err := gitremote.New(q.Store).Fetch(ctx, q.Remote, q.Sync)
	return err
}

// Leases lists every lease the book knows, each with its state as q.Here
// sees it at q.Now, after fetching q.Remote's records.
func Leases(ctx context.Context, q LeaseQuery) ([]LeaseRow, error) {
	if err := q.fetch(ctx); err != nil {
		return nil, err
	}
	return q.rows(ctx)
}

func (q LeaseQuery) rows(ctx context.Context) ([]LeaseRow, error) {
	entries, err := q.Book.List(ctx)
	if err != nil {
		return nil, err
	}
	rows := []LeaseRow{}
	for _, e := range entries {
		r := LeaseRow{Label: e.Label, Tip: e.Tip}
		l := e.Lease
		if l == nil {
			l = &Lease{}
			r.Error = e.Err.Error()
		}
		// A one-shot reader has watched nothing change: another host's
		// lease is held (staleness is the supervisors' own observation).
		r.State = StateOf(l, 0, q.Here, q.Now, q.StaleAfter)
		r.Attempt, r.Owner, r.Host, r.PID, r.Until, r.Heartbeat = l.Attempt, l.Owner, l.Host, l.PID, l.Until, l.Heartbeat
		rows = append(rows, r)
	}
	return rows, nil
}

// ReleaseLease removes the lease on label. One whose holder may still
// run it (live, drift or held) is refused (LeaseHeld) unless force; no
// lease on label is refused (MissingFact).
func ReleaseLease(ctx context.Context, q LeaseQuery, label string, force bool) error {
	rows, err := Leases(ctx, q)
	if err != nil {
		return err
	}
	for _, r := range rows {
		if r.Label != label {
			continue
		}
		if (r.State == Live || r.State == Drift || r.State == Held) && !force {
			return refusal.New(refusal.LeaseHeld, "stop the card (git nwdes swarm stop --card "+r.Label+"), or release it with --force",
				"the lease on %s is %s (pid %d on %s)", r.Label, r.State, r.PID, r.Host)
		}
		return q.Book.Release(ctx, r.Label, r.Tip)
	}
	return refusal.New(refusal.MissingFact, "git nwdes swarm leases lists them", "no lease on %q", label)
}

// JobRow is one recorded job as swarm status lists it: the record
// (Job) with ExitCheck, what VerifyExit says of its exit record ("ok"
// when it holds).
type JobRow struct {
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
	// harvested into this repository under HeadRef (Job).
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
	Spent        *Spent `json:"spent,omitempty"`
	SpentProblem string `json:"spent_problem,omitempty"`
	Budget       string `json:"budget,omitempty"`
	Retry        bool   `json:"retry,omitempty"`
	RetryAfter   string `json:"retry_after,omitempty"`
	// Identity is the git identity the worker ran with; Journal and
	// Examination what became of an examine card's journal (Job).
	Identity    string       `json:"identity,omitempty"`
	Journal     string       `json:"journal,omitempty"`
	Examination string       `json:"examination,omitempty"`
	Gate        *GateSummary `json:"gate,omitempty"`
}

// Report is the swarm's state as swarm status shows it. Its fields are
// in the order of their JSON names, the order the report has always been
// written in.
type Report struct {
	// Blocked are the queued cards a DEPENDS-ON holds back, with why.
	Blocked map[string]string `json:"blocked"`
	// Dropped are the queued cards a drop record names.
	Dropped []string   `json:"dropped"`
	Jobs    []JobRow   `json:"jobs"`
	Leases  []LeaseRow `json:"leases"`
	// Lineage is each card's lineage as the one judgment sees it;
	// LineageLeftOut how many were left out of it.
	Lineage        []CardLineage `json:"lineage"`
	LineageLeftOut int           `json:"lineage_left_out"`
	// Queued are the cards neither finished nor dropped, in queue order.
	Queued []string `json:"queued"`
	// Spent is summed over the SpentJobs jobs whose harness reported.
	Spent     Spent `json:"spent"`
	SpentJobs int   `json:"spent_jobs"`
	// Stopped are the labels of the stop records ("all" among them), sorted.
	Stopped []string `json:"stopped"`
}

// ReadStatus reads the queue, the jobs, the leases (as q sees them, after
// fetching q.Remote's records), the stop, drop and requeue records, the
// landings and each card's lineage, into one report.
func ReadStatus(ctx context.Context, q LeaseQuery) (*Report, error) {
	st := q.Store
	if err := q.fetch(ctx); err != nil {
		return nil, err
	}
	queue, err := Queue(st)
	if err != nil {
		return nil, err
	}
	jobs, err := Jobs(st)
	if err != nil {
		return nil, err
	}
	r := &Report{Jobs: []JobRow{}, Queued: []string{}, Dropped: []string{}, Stopped: []string{}}
	if r.Leases, err = q.rows(ctx); err != nil {
		return nil, err
	}
	stops, err := Stops(st)
	if err != nil {
		return nil, err
	}
	ctl, err := ReadControl(st)
	if err != nil {
		return nil, err
	}
	finished := Finished(jobs, ctl)
	r.Blocked = Blocked(queue, jobs, ctl)
	for _, j := range jobs {
		r.Jobs = append(r.Jobs, jobRow(&j))
		if j.Spent != nil {
			r.Spent.Add(*j.Spent)
			r.SpentJobs++
		}
	}
	for _, e := range queue {
		if _, ok := ctl.Dropped[e.Card.Label]; ok {
			r.Dropped = append(r.Dropped, e.Card.Label)
		} else if !finished[e.Card.Label] {
			r.Queued = append(r.Queued, e.Card.Label)
		}
	}
	for k := range stops {
		r.Stopped = append(r.Stopped, k)
	}
	sort.Strings(r.Stopped)
	rd, err := examine.NewVerifiedReader(st)
	if err != nil {
		return nil, err
	}
	landings, err := Landings(st, "")
	if err != nil {
		return nil, err
	}
	if r.Lineage, r.LineageLeftOut, err = Lineages(rd, queue, jobs, landings); err != nil {
		return nil, err
	}
	return r, nil
}

func jobRow(j *Job) JobRow {
	check := "ok"
	if why := VerifyExit(j); why != "" {
		check = why
	}
	return JobRow{Card: j.Label, Attempt: j.Attempt, End: string(j.End), Result: string(j.Result), Reason: j.Reason,
		Stopped: j.Stopped, Started: j.Started, Ended: j.Ended, Dir: j.JobDir, ExitCheck: check,
		Harvest: j.Harvest, HarvestNote: j.HarvestNote, Head: j.Head, HeadRef: j.HeadRef, Commits: j.Commits,
		Changed: j.Changed, ChangedCount: j.ChangedCount, Outside: j.Outside, OutsideCount: j.OutsideCount,
		Spent: j.Spent, SpentProblem: j.SpentProblem, Budget: j.Budget, Retry: j.Retry, RetryAfter: j.RetryAfter,
		Identity: j.Identity, Journal: j.Journal, Examination: j.Examination, Gate: j.Gate}
}
