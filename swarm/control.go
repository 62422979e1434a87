package swarm

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/internal/names"
	"github.com/nwdes/nwdes/refusal"
)

// Requeue is a requeue record (refs/nwdes/swarm/control,
// requeue/<label>/<after>): the card runs again as a new attempt, its
// jobs up to attempt After no longer finishing it.
type Requeue struct {
	Card   string `json:"card"`
	After  int    `json:"after"`
	At     string `json:"at"`
	By     string `json:"by"`
	Reason string `json:"reason,omitempty"`
}

// Drop is a drop record (drop/<label>): the card never runs again, and a
// job running it is ended at its supervisor's next heartbeat.
type Drop struct {
	Card   string `json:"card"`
	At     string `json:"at"`
	By     string `json:"by"`
	Reason string `json:"reason,omitempty"`
}

func requeuePath(card string, after int) string { return fmt.Sprintf("requeue/%s/%d", card, after) }
func dropPath(card string) string               { return "drop/" + card }

func requeueFrom(path string, rec *gitstore.Record) (*Requeue, error) {
	if rec.Kind != KindRequeue || rec.V != 1 {
		return nil, malformed(path, "a %s v%d record, not a requeue", rec.Kind, rec.V)
	}
	var r Requeue
	if err := rec.Decode(&r); err != nil {
		return nil, err
	}
	if !validCard(r.Card) || r.After < 1 || path != requeuePath(r.Card, r.After) {
		return nil, malformed(path, "a requeue of %q after attempt %d belongs under %s", r.Card, r.After, requeuePath(r.Card, r.After))
	}
	return &r, nil
}

func dropFrom(path string, rec *gitstore.Record) (*Drop, error) {
	if rec.Kind != KindDrop || rec.V != 1 {
		return nil, malformed(path, "a %s v%d record, not a drop", rec.Kind, rec.V)
	}
	var d Drop
	if err := rec.Decode(&d); err != nil {
		return nil, err
	}
	if !validCard(d.Card) || path != dropPath(d.Card) {
		return nil, malformed(path, "a drop of %q belongs under %s", d.Card, dropPath(d.Card))
	}
	return &d, nil
}

func validCard(label string) bool {
	return names.Component(label, maxLabel)
}

// Control is what the control ref says of cards besides stop records:
// the latest requeue of each card, and the dropped cards.
type Control struct {
	Requeued map[string]Requeue
	Dropped  map[string]Drop
}

// ReadControl reads the requeue and drop records. A requeue record that
// does not parse is left out (fsck names it); a drop record that does not
// parse still drops the card its name names: failing safe is not running.
func ReadControl(st gitstore.RecordReader) (*Control, error) {
	tx, err := st.Records(ControlRef)
	if err != nil {
		return nil, err
	}
	return controlIn(tx)
}

// controlIn is ReadControl of the view v.
func controlIn(tx gitstore.View) (*Control, error) {
	c := &Control{Requeued: map[string]Requeue{}, Dropped: map[string]Drop{}}
	cards, err := tx.List("requeue")
	if err != nil {
		return nil, err
	}
	for _, card := range cards {
		afters, err := tx.List("requeue/" + card)
		if err != nil {
			return nil, err
		}
		for _, a := range afters {
			path := "requeue/" + card + "/" + a
			rec, err := tx.Get(path)
			var r *Requeue
			if err == nil {
				r, err = requeueFrom(path, rec)
			}
			if _, ok := refusal.As(err); ok || errors.Is(err, gitstore.ErrNotFound) {
				continue
			}
			if err != nil {
				return nil, err
			}
			if r.After > c.Requeued[r.Card].After {
				c.Requeued[r.Card] = *r
			}
		}
	}
	names, err := tx.List("drop")
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		rec, err := tx.Get(dropPath(n))
		var d *Drop
		if err == nil {
			d, err = dropFrom(dropPath(n), rec)
		}
		if err != nil {
			if _, ok := refusal.As(err); !ok && !errors.Is(err, gitstore.ErrNotFound) {
				return nil, err
			}
			d = &Drop{Card: n, Reason: "an unreadable drop record: " + err.Error()}
		}
		c.Dropped[d.Card] = *d
	}
	return c, nil
}

// Finished are the cards a job finished: one that was not stopped, nor a
// launch failure left to retry, of an attempt after the card's latest
// requeue.
func Finished(jobs []Job, c *Control) map[string]bool {
	out := map[string]bool{}
	for label := range Outcomes(jobs, c) {
		out[label] = true
	}
	return out
}

// Outcomes are the jobs that finished each finished card (Finished): its
// latest finishing attempt.
func Outcomes(jobs []Job, c *Control) map[string]Job {
	out := map[string]Job{}
	for label, j := range outcomesOf(jobs, c) {
		out[label] = *j
	}
	return out
}

// outcomesOf is Outcomes, pointing into a copy of jobs: the rule is
// labelJobs.summarize's, which a supervisor's look applies per label.
func outcomesOf(jobs []Job, c *Control) map[string]*Job {
	return summarizeJobs(jobs, c).outcomes
}

// summarizeJobs is the jobSummary of jobs, in any order, under c.
func summarizeJobs(jobs []Job, c *Control) *jobSummary {
	var ljs []*labelJobs
	byLabel := map[string]*labelJobs{}
	for _, j := range jobs {
		lj := byLabel[j.Label]
		if lj == nil {
			lj = &labelJobs{label: j.Label}
			byLabel[j.Label] = lj
			ljs = append(ljs, lj)
		}
		lj.jobs = append(lj.jobs, j)
	}
	return summarize(ljs, c)
}

// Succeeded reports a job that finished its card ok: it ended done and
// its result is ok. A card that DEPENDS-ON another waits for this.
func Succeeded(j Job) bool { return j.End == EndDone && j.Result == VerdictOK }

// Blocked are the unfinished cards that never run as things stand, each
// with why: a card of its DEPENDS-ON finished other than ok, was dropped,
// or is not queued.
func Blocked(queue []Queued, jobs []Job, c *Control) map[string]string {
	queued := map[string]bool{}
	for _, q := range queue {
		queued[q.Card.Label] = true
	}
	outcomes := outcomesOf(jobs, c)
	out := map[string]string{}
	for _, q := range queue {
		if _, done := outcomes[q.Card.Label]; done {
			continue
		}
		if why, _ := dependencies(q.Card, queued, outcomes, c); why != "" {
			out[q.Card.Label] = why
		}
	}
	return out
}

// dependencies says whether card may run as far as its DEPENDS-ON goes:
// why it never will (a dependency finished other than ok, was dropped,
// or is not queued), or wait when one has yet to finish.
func dependencies(card *Card, queued map[string]bool, outcomes map[string]*Job, c *Control) (why string, wait bool) {
	for _, dep := range card.DependsOn {
		if c != nil {
			if d, ok := c.Dropped[dep]; ok {
				return fmt.Sprintf("it depends on %s, which was dropped (%s)", dep, orNone(d.Reason)), false
			}
		}
		if !queued[dep] {
			return fmt.Sprintf("it depends on %s, which is not queued", dep), false
		}
		j, done := outcomes[dep]
		switch {
		case !done:
			wait = true
		case !Succeeded(*j):
			return fmt.Sprintf("it depends on %s, whose attempt %d ended %s with result %s", dep, j.Attempt, j.End, j.Result), false
		}
	}
	return "", wait
}

// queuedCard refuses a label that is not a queued card.
func queuedCard(st gitstore.RecordReader, label string) error {
	if !validCard(label) {
		return refusal.New(refusal.CardInvalid, "name a card label", "%q is not a card label", label)
	}
	queue, err := Queue(st)
	if err != nil {
		return err
	}
	for _, q := range queue {
		if q.Card.Label == label {
			return nil
		}
	}
	return refusal.New(refusal.CardInvalid, "name a queued card (git nwdes swarm status lists them)", "card %s is not queued", label)
}

// RequeueCard records that a finished card runs again, as a new attempt.
// A card that is not queued, is dropped, or has no finished attempt (it
// is queued, running, or was stopped) is refused.
func RequeueCard(ctx context.Context, st gitstore.RecordWriter, label, by, reason string, now time.Time) (*Requeue, error) {
	if err := queuedCard(st, label); err != nil {
		return nil, err
	}
	jobs, err := Jobs(st)
	if err != nil {
		return nil, err
	}
	ctl, err := ReadControl(st)
	if err != nil {
		return nil, err
	}
	if d, ok := ctl.Dropped[label]; ok {
		return nil, refusal.New(refusal.CardDropped, "queue a new card under another label",
			"card %s was dropped (%s by %s): it never runs again", label, orNone(d.Reason), d.By)
	}
	if !Finished(jobs, ctl)[label] {
		return nil, refusal.New(refusal.CardNotFinished, "wait for its job to be recorded (git nwdes swarm status)",
			"card %s has no finished attempt to run again: it is queued, running, or was stopped", label)
	}
	r := Requeue{Card: label, At: now.UTC().Format(stamp), By: by, Reason: reason}
	for _, j := range jobs {
		if j.Label == label {
			r.After = max(r.After, j.Attempt)
		}
	}
	rec, err := gitstore.NewRecord(KindRequeue, 1, r)
	if err != nil {
		return nil, err
	}
	_, err = st.Change(ctx, ControlRef, "requeue "+label+" after attempt "+strconv.Itoa(r.After), func(tx gitstore.Edit) error {
		if _, err := tx.Get(requeuePath(label, r.After)); err == nil {
			return nil // requeued already
		} else if !errors.Is(err, gitstore.ErrNotFound) {
			return err
		}
		return tx.Put(requeuePath(label, r.After), rec)
	})
	if err != nil {
		return nil, err
	}
	return &r, nil
}

// DropCard records that a queued card never runs (again); a supervisor
// running it ends its job at the next heartbeat.
func DropCard(ctx context.Context, st gitstore.RecordWriter, label, by, reason string, now time.Time) error {
	if err := queuedCard(st, label); err != nil {
		return err
	}
	rec, err := gitstore.NewRecord(KindDrop, 1, Drop{Card: label, At: now.UTC().Format(stamp), By: by, Reason: reason})
	if err != nil {
		return err
	}
	_, err = st.Change(ctx, ControlRef, "drop "+label, func(tx gitstore.Edit) error {
		if _, err := tx.Get(dropPath(label)); err == nil {
			return nil // dropped already
		} else if !errors.Is(err, gitstore.ErrNotFound) {
			return err
		}
		return tx.Put(dropPath(label), rec)
	})
	return err
}

func orNone(s string) string {
	if s == "" {
		return "no reason given"
	}
	return s
}
