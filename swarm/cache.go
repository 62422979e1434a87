package swarm

import (
	"slices"
	"sync"
	"time"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/oid"
)

// A supervisor looks at the queue before every card, and then the jobs,
// stop, requeue and drop records decide what it may take. Read and parsed
// whole each time, that look grew with the ledger and was most of the
// swarm's overhead per card (docs/performance.md). ledger keeps what it
// last read of each ref, parsed, keyed by what was read:
//
//   - a ref's tip: while the tip is the one read, nothing is read again
//     but the ref itself;
//   - under a moved tip, a record's tree id (a card) or a label's tree id
//     (its jobs): only what changed is parsed again.
//
// Both keys are content addresses, so a cache is never stale: a write by
// this supervisor, another process or a fetch moves the tip, and what the
// new tip holds is read from it. A read that fails part way (an object
// missing, a ref unreadable) returns its error and leaves the cache as it
// was: nothing is kept of a state not read whole. What is returned is the
// cache's: callers read it and do not change it.

// memo remembers what was parsed of the records of one ref, by path and
// the id of the tree parsed. A read marks what it found unchanged and
// parses the rest into pending; keep makes the read that completed the
// one remembered (entries it did not see are dropped), drop forgets a
// read that failed part way. A read that finds one label changed among
// thousands does not rebuild a map of them all.
type memo struct {
	cur     map[string]*memoEntry
	pending map[string]*memoEntry
	gen     uint64 // the read under way; an entry it saw carries it
	seen    int    // entries of cur the read under way saw unchanged
}

type memoEntry struct {
	id  oid.ID
	v   any
	gen uint64
}

// memoized returns what parse makes of the tree id at path, parsing it
// only when the last complete read did not see that id there. Only a
// parse that succeeded is remembered; a zero id (a store that names no
// tree ids) is never remembered. A nil m parses every time.
func memoized[T any](m *memo, path string, id oid.ID, parse func() (T, error)) (T, error) {
	if m == nil || id.IsZero() {
		return parse()
	}
	if e, ok := m.cur[path]; ok && e.id == id {
		if e.gen != m.gen+1 {
			e.gen = m.gen + 1
			m.seen++
		}
		return e.v.(T), nil
	}
	v, err := parse()
	if err == nil {
		if m.pending == nil {
			m.pending = map[string]*memoEntry{}
		}
		m.pending[path] = &memoEntry{id: id, v: v, gen: m.gen + 1}
	}
	return v, err
}

// keep makes the read that just completed the one remembered.
func (m *memo) keep() {
	m.gen++
	if m.cur == nil {
		m.cur = map[string]*memoEntry{}
	}
	// What cur holds that this read neither saw unchanged nor parsed
	// anew is no longer in the ref: dropped (a scan only when some is).
	if replaced := m.replacing(); m.seen+replaced < len(m.cur) {
		for path, e := range m.cur {
			if e.gen != m.gen {
				if _, ok := m.pending[path]; !ok {
					delete(m.cur, path)
				}
			}
		}
	}
	for path, e := range m.pending {
		m.cur[path] = e
	}
	m.pending, m.seen = nil, 0
}

// replacing counts the pending entries that replace one of cur.
func (m *memo) replacing() int {
	n := 0
	for path := range m.pending {
		if _, ok := m.cur[path]; ok {
			n++
		}
	}
	return n
}

// drop forgets the read that failed part way: what it parsed, and what
// it saw (the next read's generation is a new one).
func (m *memo) drop() { m.gen++; m.pending, m.seen = nil, 0 }

// ledger is a supervisor's cache of the queue, jobs and control refs.
type ledger struct {
	mu sync.Mutex

	queueTip oid.ID
	queueOK  bool
	queue    []Queued
	cards    memo

	jobsTip oid.ID
	jobsOK  bool
	byLabel []*labelJobs
	labels  memo
	// sum is the look's summary of byLabel under the control record
	// sumCtl (the ledger's own, so a pointer names one read of it).
	sum    *jobSummary
	sumCtl *Control

	controlTip oid.ID
	controlOK  bool
	control    *Control
	stops      map[string]Stop
}

// current reports whether ref's tip is still tip.
func current(st gitstore.RecordReader, ref gitstore.RefName, ok bool, tip oid.ID) (bool, error) {
	if !ok {
		return false, nil
	}
	now, err := st.Tip(ref)
	return err == nil && now == tip, err
}

// Queue is Queue(st), parsed only as far as the queue changed.
func (c *ledger) Queue(st gitstore.RecordReader) ([]Queued, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ok, err := current(st, QueueRef, c.queueOK, c.queueTip); err != nil {
		return nil, err
	} else if !ok {
		v, err := st.Records(QueueRef)
		if err != nil {
			return nil, err
		}
		q, err := queueIn(v, &c.cards)
		if err != nil {
			c.cards.drop()
			return nil, err
		}
		c.cards.keep()
		c.queueTip, c.queueOK, c.queue = v.Base(), true, q
	}
	return slices.Clone(c.queue), nil
}

// jobSummary is what a look at the queue needs of the jobs, per label:
// the job that finished the card (Outcomes), when a launch failure left
// to retry may be taken again, and the highest attempt. A supervisor's
// is made once per tip of the jobs ref and read of the control ref, and
// is read-only once made: its jobs point into the ledger's parsed labels.
type jobSummary struct {
	outcomes map[string]*Job
	retries  map[string]time.Time
	attempts map[string]int
}

// summary is the jobSummary of st's jobs under ctl (the ledger's Control),
// the jobs parsed only as far as the ledger changed. Each look used to
// copy every job (640 bytes each), sort them and derive these maps
// twice: at 1,000 jobs that was about 3 ms of CPU a card in a profile,
// growing with the pool.
func (c *ledger) summary(st gitstore.RecordReader, ctl *Control) (*jobSummary, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.readJobs(st); err != nil {
		return nil, err
	}
	if c.sum != nil && c.sumCtl == ctl {
		return c.sum, nil
	}
	c.sum, c.sumCtl = summarize(c.byLabel, ctl), ctl
	return c.sum, nil
}

// summarize is the jobSummary of ljs under ctl.
func summarize(ljs []*labelJobs, ctl *Control) *jobSummary {
	sum := &jobSummary{
		outcomes: make(map[string]*Job, len(ljs)),
		retries:  map[string]time.Time{},
		attempts: make(map[string]int, len(ljs)),
	}
	for _, lj := range ljs {
		lj.summarize(ctl, sum)
	}
	return sum
}

// readJobs brings byLabel to the jobs ref's tip, and says whether it
// moved. c.mu is held.
func (c *ledger) readJobs(st gitstore.RecordReader) (bool, error) {
	ok, err := current(st, JobsRef, c.jobsOK, c.jobsTip)
	if err != nil || ok {
		return false, err
	}
	v, err := st.Records(JobsRef)
	if err != nil {
		return false, err
	}
	ljs, err := labelsIn(v, &c.labels)
	if err != nil {
		c.labels.drop()
		return false, err
	}
	c.labels.keep()
	// The summary was of the labels read before.
	c.jobsTip, c.jobsOK, c.byLabel, c.sum = v.Base(), true, ljs, nil
	return true, nil
}

// Jobs is Jobs(st), parsed only as far as the ledger changed: a copy,
// the caller's to change.
func (c *ledger) Jobs(st gitstore.RecordReader) ([]Job, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.readJobs(st); err != nil {
		return nil, err
	}
	return flatten(c.byLabel), nil
}

// summarize adds lj's label to sum. The card's outcome is its latest
// attempt after its last requeue that was neither stopped nor a launch
// failure left to retry; when the latest attempt after the requeue is
// such a launch failure, the card may be taken again at its RetryAfter;
// and the highest attempt counts every job. This is the one rule:
// Outcomes, Finished and Blocked apply it too (summarizeJobs), and
// TestTheLooksSummaryAgreesWithOutcomes holds it to a model over the
// whole list. A tie of attempts keeps the first in lj's order.
func (lj *labelJobs) summarize(ctl *Control, sum *jobSummary) {
	after := 0
	if ctl != nil {
		after = ctl.Requeued[lj.label].After
	}
	var done, latest *Job
	attempts := 0
	for i := range lj.jobs {
		j := &lj.jobs[i]
		attempts = max(attempts, j.Attempt)
		if j.Attempt <= after {
			continue
		}
		if latest == nil || j.Attempt > latest.Attempt {
			latest = j
		}
		if !j.Stopped && !j.Retry && (done == nil || j.Attempt > done.Attempt) {
			done = j
		}
	}
	if len(lj.jobs) > 0 {
		sum.attempts[lj.label] = attempts
	}
	if done != nil {
		sum.outcomes[lj.label] = done
	}
	if latest != nil && latest.Retry {
		t, _ := time.Parse(stamp, latest.RetryAfter) // jobFrom checked it
		sum.retries[lj.label] = t
	}
}

// Control is ReadControl(st) and Stops(st), read from one tip of the
// control ref, again only when it moved.
func (c *ledger) Control(st gitstore.RecordReader) (*Control, map[string]Stop, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ok, err := current(st, ControlRef, c.controlOK, c.controlTip); err != nil {
		return nil, nil, err
	} else if !ok {
		v, err := st.Records(ControlRef)
		if err != nil {
			return nil, nil, err
		}
		ctl, err := controlIn(v)
		if err != nil {
			return nil, nil, err
		}
		stops, err := stopsIn(v)
		if err != nil {
			return nil, nil, err
		}
		c.controlTip, c.controlOK, c.control, c.stops = v.Base(), true, ctl, stops
	}
	return c.control, c.stops, nil
}
