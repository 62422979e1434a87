package swarm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/judge"
	"github.com/nwdes/nwdes/refusal"
)

// The unattended loop (swarm run --rework): card → head → gates →
// examination card → outcome → rework card, until the lineage is
// accepted, reaches its bound, needs a person, or is stopped. It adds no
// judgment of its own and keeps no state a record does not hold: after
// each pass of its supervisors, Decide reads the queue, the jobs and the
// stop records and says, per lineage, what comes next; the loop then
// does it through the library's own calls — AddCard for the examine card,
// judge.Judge for the outcome, ReworkCard for the rework (with its bound
// and refusals), Land when asked.
//
// With Land, an accepted head joins the loop's landing queue, and the
// heads in it land one at a time, in the order they were accepted, each
// against the branch's tip as the remote has it then (swarm land's rule:
// fast-forward only). A head the branch moved under is rebased by land
// into a new candidate (a landing record says so); Decide then follows
// the landing records to it, and it goes through the same steps as a
// head: gates (with the new tip as base), an examine card, the judgment,
// and, accepted, the landing queue again, behind those already waiting.
// A rebased candidate that is not accepted ends its lineage for a
// person: the rebase broke what the head did, and no rework is staged on
// a commit no worker made.
//
// Two supervisors run it, one per worker: the producer takes the produce
// cards and gates each harvested head; the examiner takes the examine
// cards. They are two worker descriptions because nobody certifies their
// own work (examine.OwnWork): the examiner must be another worker than
// the one whose head it judges, and a supervisor runs one worker.

// LoopAction is what Decide says comes next in a lineage.
type LoopAction string

// The actions.
const (
	// LoopWait: the lineage's current card, or its head's examine card,
	// has not finished yet: a supervisor runs it.
	LoopWait LoopAction = "wait"
	// LoopExamine: queue an examine card for the current card's head.
	LoopExamine LoopAction = "examine"
	// LoopJudge: the head's examination was replayed: ask its outcome.
	LoopJudge LoopAction = "judge"
	// LoopEnd: the lineage ended (Decision.End says how).
	LoopEnd LoopAction = "end"
	// LoopGate (a rebased candidate only): gate the candidate with the
	// tip it was rebased onto as base, then queue its examine card. A
	// harvested head was gated by its producer's supervisor already.
	LoopGate LoopAction = "gate"
)

// LineageEnd is how a lineage ended.
type LineageEnd string

// The ends of a lineage.
const (
	// LineageAccepted: the one judgment accepted a head.
	LineageAccepted LineageEnd = "accepted"
	// LineageBound: a head was refused and the lineage holds its bound
	// of reworks (ReworkLimit).
	LineageBound LineageEnd = "bound"
	// LineagePerson: what is left is a person's to decide (NeedsPerson,
	// a job with no head, an examination not published, a card no
	// supervisor could run).
	LineagePerson LineageEnd = "needs-person"
	// LineageStopped: a stop record (or a drop) names one of its cards,
	// or every card.
	LineageStopped LineageEnd = "stopped"
)

// Decision is what comes next in one lineage, read from records alone.
type Decision struct {
	// Lineage is the label of the lineage's first card.
	Lineage string
	Action  LoopAction
	// Card is the lineage's current card (the last of its REWORK-OF
	// chain); Head its finished job's harvested head, when it has one.
	Card *Card
	Head string
	// Candidate is the commit examined and judged: Head, or the newest
	// candidate swarm land rebased it into (the landing records' chain),
	// then Onto is the tip that one was rebased onto and Rebases how many
	// times the head was rebased.
	Candidate string
	Onto      string
	Rebases   int
	// Examine is the label of the head's examine card, once queued.
	Examine string
	// End and Reason say how the lineage ended (LoopEnd).
	End    LineageEnd
	Reason string
}

// Records are what Decide reads: the queue, the jobs, the control and
// stop records, as read at one time.
type Records struct {
	Queue   []Queued
	Jobs    []Job
	Control *Control
	Stops   map[string]Stop
	// Landings are the landing records, by candidate (Landings).
	Landings map[string]Landing
}

// Decide says what comes next in the lineage whose first card is root.
// It follows REWORK-OF from root to the current card, then: a stop or a
// drop naming a card of the lineage (or a stop of every card) ends it;
// a current card not finished waits; one finished with no head ends for
// a person. The head's landing records are followed: a candidate that
// landed ends the lineage accepted; one rebased gives way to the
// candidate it was rebased into. A head with no examine card is to be
// examined (a rebased candidate gated first); an examine card not
// finished waits; one whose journal was not replayed ends for a person;
// a replayed one is to be judged.
func Decide(root string, r Records) Decision {
	d := Decision{Lineage: root}
	chain := lineageChain(root, r.Queue)
	if len(chain) == 0 {
		return ended(d, LineagePerson, "card "+root+" is not queued here")
	}
	c := chain[len(chain)-1]
	d.Card = c
	if st, ok := r.Stops["all"]; ok {
		return ended(d, LineageStopped, "a stop record stops every card"+because(st.Reason))
	}
	for _, k := range chain {
		if st, ok := r.Stops[k.Label]; ok {
			return ended(d, LineageStopped, "a stop record stops card "+k.Label+because(st.Reason))
		}
		if r.Control != nil {
			if dr, ok := r.Control.Dropped[k.Label]; ok {
				return ended(d, LineageStopped, "card "+k.Label+" was dropped"+because(dr.Reason))
			}
		}
	}
	outcomes := Outcomes(r.Jobs, r.Control)
	out, finished := outcomes[c.Label]
	if !finished {
		d.Action = LoopWait
		return d
	}
	if out.Head == "" {
		return ended(d, LineagePerson, fmt.Sprintf("card %s's job #%d ended %s, result %s, with no head to examine%s",
			c.Label, out.Attempt, out.End, out.Result, because(out.Reason)))
	}
	d.Head, d.Candidate = out.Head, out.Head
	for n := 0; n < maxChain; n++ {
		l, ok := r.Landings[d.Candidate]
		if !ok || l.Label != c.Label {
			break
		}
		if l.Event == LandLanded {
			return ended(d, LineageAccepted, fmt.Sprintf("card %s's candidate %s landed on %s's %s (over %s) at %s",
				c.Label, text.Short(d.Candidate), l.Remote, l.Branch, orNew(l.Onto), l.At))
		}
		d.Candidate, d.Onto, d.Rebases = l.Rebased, l.Onto, d.Rebases+1
	}
	feature := gateFeature(c)
	var exam *Card
	for i := range r.Queue {
		k := r.Queue[i].Card
		if k.Kind == KindExamine && k.Candidate == d.Candidate && k.Feature == feature {
			exam = k
		}
	}
	if exam == nil {
		d.Action = LoopExamine
		if d.Rebases > 0 {
			d.Action = LoopGate
		}
		return d
	}
	d.Examine = exam.Label
	if st, ok := r.Stops[exam.Label]; ok {
		return ended(d, LineageStopped, "a stop record stops card "+exam.Label+because(st.Reason))
	}
	if r.Control != nil {
		if dr, ok := r.Control.Dropped[exam.Label]; ok {
			return ended(d, LineageStopped, "card "+exam.Label+" was dropped"+because(dr.Reason))
		}
	}
	eo, finished := outcomes[exam.Label]
	if !finished {
		d.Action = LoopWait
		return d
	}
	if eo.Journal != JournalReplayed {
		return ended(d, LineagePerson, fmt.Sprintf("the examination of %s by card %s's job #%d was not published (journal %s, result %s)%s",
			text.Short(d.Candidate), exam.Label, eo.Attempt, orNone(eo.Journal), eo.Result, because(eo.Reason)))
	}
	d.Action = LoopJudge
	return d
}

func ended(d Decision, end LineageEnd, reason string) Decision {
	d.Action, d.End, d.Reason = LoopEnd, end, reason
	return d
}

func because(why string) string {
	if why == "" {
		return ""
	}
	return ": " + text.OneLine(why)
}

// lineageChain is root's card, then each card that reworks the one
// before it (REWORK-OF), as far as the queue holds them.
func lineageChain(root string, queue []Queued) []*Card {
	byLabel := map[string]*Card{}
	next := map[string]*Card{}
	for i := range queue {
		c := queue[i].Card
		byLabel[c.Label] = c
		if r := c.ReworkOf; r != nil {
			// One rework per card in a loop's lineage: ReworkCard refuses
			// a second of the same head; the newest queued is followed.
			next[r.Card] = c
		}
	}
	c, ok := byLabel[root]
	if !ok {
		return nil
	}
	chain := []*Card{c}
	for i := 0; i <= MaxReworkNumber; i++ {
		n, ok := next[c.Label]
		if !ok {
			break
		}
		chain = append(chain, n)
		c = n
	}
	return chain
}

// lineageOf is the first card of the lineage label belongs to.
func lineageOf(label string, queue []Queued) string {
	byLabel := map[string]*Card{}
	for i := range queue {
		byLabel[queue[i].Card.Label] = queue[i].Card
	}
	for i := 0; i <= MaxReworkNumber; i++ {
		c, ok := byLabel[label]
		if !ok || c.ReworkOf == nil {
			break
		}
		label = c.ReworkOf.Card
	}
	return label
}

// loopable reports whether a card starts or continues a lineage the loop
// drives: a produce card whose head answers to a feature.
func loopable(c *Card) bool { return c.Kind != KindExamine && gateFeature(c) != "" }

// Loop runs lineages unattended (swarm run --rework).
type Loop struct {
	// Producer runs the produce cards, with Gates set; Examiner the
	// examine cards, with Examining set. Their Only and Events are set
	// by Run.
	Producer, Examiner *Supervisor
	// Limit is each lineage's bound of reworks (ReworkOptions.Limit).
	Limit int
	// Question is the judgment asked of each examined head, with the
	// judging side's settings (Proof, Gates); its Commit and Now are set
	// per head.
	Question judge.Question
	// Check is what the cards the loop queues are checked against; its
	// Worker is set to the examiner's name for an examine card.
	Check CheckOptions
	// Land, when set, lands an accepted candidate of the card label (as
	// swarm land: it follows the card's landing records to the candidate).
	// The loop calls it for one lineage at a time, in the order of its
	// landing queue. A rebased result continues the lineage.
	Land func(ctx context.Context, label string) (*LandResult, error)
	By   string
	Now  func() time.Time
	// Events receives the supervisors' events and the loop's own.
	Events func(Event)
}

// LineageResult is how one lineage the loop drove ended.
type LineageResult struct {
	Lineage string `json:"lineage"`
	Card    string `json:"card"`
	Head    string `json:"head,omitempty"`
	// Candidate is the commit judged last when it is not Head: the
	// candidate swarm land rebased the head into.
	Candidate string     `json:"candidate,omitempty"`
	End       LineageEnd `json:"end"`
	Reason    string     `json:"reason"`
	// Refusal names the refusal that ended it (ReworkLimit, NeedsPerson…).
	Refusal string `json:"refusal,omitempty"`
	// Landed says what Land did with an accepted head; LandRefusal names
	// why it did not land.
	Landed      string `json:"landed,omitempty"`
	LandRefusal string `json:"land_refusal,omitempty"`
}

// LoopSummary is what a loop did: each lineage it drove, in the order
// they ended, and its supervisors' summaries merged.
type LoopSummary struct {
	Lineages []LineageResult
	Summary
}

// Accepted reports whether every lineage ended accepted (and, when asked
// to land, landed).
func (s *LoopSummary) Accepted() bool {
	for _, l := range s.Lineages {
		if l.End != LineageAccepted || l.LandRefusal != "" {
			return false
		}
	}
	return true
}

// loopRun is one Run's state: the lineages it drives and how they ended.
type loopRun struct {
	*Loop
	drive []string // roots, in the order first driven
	ended map[string]*LineageResult
	sum   *LoopSummary
	// landing is the landing queue: accepted lineages, in the order they
	// were accepted, each waiting for the ones before it to land.
	landing []Decision
}

// Run drives, until each has ended, the lineages of every produce card
// with a feature that is unfinished when it starts or that its producer
// runs. Each round the producer runs what it can take, the loop decides
// (an examine card per new head), the examiner runs, the loop decides
// again (judge, then rework, end or land). A round in which nothing ran
// and nothing was decided ends what is left for a person (the card
// cannot be run here: skipped or blocked, with why).
func (l *Loop) Run(ctx context.Context) (*LoopSummary, error) {
	if l.Producer == nil || l.Examiner == nil || l.Producer.Worker == nil || l.Examiner.Worker == nil {
		return nil, errors.New("a loop runs a producer and an examiner")
	}
	if l.Producer.Worker.Name == l.Examiner.Worker.Name {
		return nil, refusal.New(refusal.DutyNotSeparated, "name an examiner worker description with another name (swarm run --examiner FILE)",
			"worker %s would examine its own heads: nobody certifies their own work", l.Producer.Worker.Name)
	}
	r := &loopRun{Loop: l, ended: map[string]*LineageResult{}, sum: &LoopSummary{Lineages: []LineageResult{}}}
	recs, err := r.read()
	if err != nil {
		return nil, err
	}
	for _, q := range recs.Queue {
		if !loopable(q.Card) {
			continue
		}
		// A lineage whose card, or whose head's examination, is still to
		// finish: one an earlier run left off is driven again.
		// A rebased candidate examined but not yet judged is picked up
		// too: it is in the middle of the landing queue's work.
		root := lineageOf(q.Card.Label, recs.Queue)
		if d := Decide(root, recs); d.Action == LoopWait || d.Action == LoopExamine || d.Action == LoopGate || d.Action == LoopJudge && d.Rebases > 0 {
			r.driven(root)
		}
	}
	var recorded []string
	l.Producer.Only = loopable
	l.Examiner.Only = func(c *Card) bool { return c.Kind == KindExamine }
	for _, s := range []*Supervisor{l.Producer, l.Examiner} {
		s.Events = func(e Event) {
			if e.Kind == EventRecorded {
				recorded = append(recorded, e.Label)
			}
			if l.Events != nil {
				l.Events(e)
			}
		}
	}
	for {
		moved := false
		for _, s := range []*Supervisor{l.Producer, l.Examiner} {
			recorded = recorded[:0]
			sum, err := s.Run(ctx)
			if sum != nil {
				r.merge(sum)
			}
			if err != nil {
				return r.sum, err
			}
			moved = moved || len(recorded) > 0
			recs, err := r.read()
			if err != nil {
				return r.sum, err
			}
			for _, label := range recorded {
				if root := r.lineageRecorded(label, recs); root != "" {
					r.driven(root)
				}
			}
			stepped, err := r.step(ctx, recs)
			if err != nil {
				return r.sum, err
			}
			moved = moved || stepped || r.landQueued(ctx)
		}
		if len(r.ended) == len(r.drive) {
			return r.sum, nil
		}
		if err := ctx.Err(); err != nil {
			return r.sum, err
		}
		if !moved {
			r.stalled()
			return r.sum, nil
		}
	}
}

func (r *loopRun) read() (Records, error) {
	st := r.Producer.Store
	var recs Records
	var err error
	if recs.Queue, err = Queue(st); err != nil {
		return recs, err
	}
	if recs.Jobs, err = Jobs(st); err != nil {
		return recs, err
	}
	if recs.Control, err = ReadControl(st); err != nil {
		return recs, err
	}
	if recs.Stops, err = Stops(st); err != nil {
		return recs, err
	}
	recs.Landings, err = Landings(st, "")
	return recs, err
}

func (r *loopRun) driven(root string) {
	for _, d := range r.drive {
		if d == root {
			return
		}
	}
	r.drive = append(r.drive, root)
}

func (r *loopRun) merge(s *Summary) {
	r.sum.Ran += s.Ran
	r.sum.Stopped += s.Stopped
	for _, m := range []struct {
		to   *map[string]string
		from map[string]string
	}{{&r.sum.Skipped, s.Skipped}, {&r.sum.Blocked, s.Blocked}} {
		for k, v := range m.from {
			if *m.to == nil {
				*m.to = map[string]string{}
			}
			(*m.to)[k] = v
		}
	}
}

// lineageRecorded is the lineage a recorded job belongs to: its card's,
// or, for an examine card, that of the card whose job produced its
// candidate; "" when it belongs to none.
func (r *loopRun) lineageRecorded(label string, recs Records) string {
	c := cardIn(label, recs.Queue)
	switch {
	case c == nil:
		return ""
	case loopable(c):
		return lineageOf(label, recs.Queue)
	case c.Kind == KindExamine:
		for _, j := range recs.Jobs {
			if j.Head == c.Candidate && c.Candidate != "" {
				if p := cardIn(j.Label, recs.Queue); p != nil && loopable(p) {
					return lineageOf(j.Label, recs.Queue)
				}
			}
		}
	}
	return ""
}

func cardIn(label string, queue []Queued) *Card {
	for i := range queue {
		if queue[i].Card.Label == label {
			return queue[i].Card
		}
	}
	return nil
}

func (r *loopRun) emit(e Event) {
	if r.Events == nil {
		return
	}
	e.Time = now(r.Now)
	r.Events(e)
}

// step decides, for each lineage not ended, what comes next, and does
// it. It reports whether it queued a card or ended a lineage.
func (r *loopRun) step(ctx context.Context, recs Records) (bool, error) {
	moved := false
	for _, root := range r.drive {
		if _, done := r.ended[root]; done || r.waitsToLand(root) {
			continue
		}
		d := Decide(root, recs)
		switch d.Action {
		case LoopWait:
			continue
		case LoopEnd:
			r.end(d, "")
		case LoopGate:
			r.gate(ctx, d)
			if err := r.examine(ctx, d); err != nil {
				return moved, err
			}
		case LoopExamine:
			if err := r.examine(ctx, d); err != nil {
				return moved, err
			}
		case LoopJudge:
			if err := r.judge(ctx, d); err != nil {
				return moved, err
			}
		}
		moved = true
	}
	return moved, nil
}

// end records how a lineage ended and says so.
func (r *loopRun) end(d Decision, name string) *LineageResult {
	return r.endLanded(d, name, nil)
}

// endLanded ends a lineage with what its landing did (nil: none asked).
func (r *loopRun) endLanded(d Decision, name string, landed *LineageResult) *LineageResult {
	res := &LineageResult{Lineage: d.Lineage, Head: d.Head, End: d.End, Reason: d.Reason, Refusal: name}
	if d.Card != nil {
		res.Card = d.Card.Label
	}
	if d.Candidate != d.Head {
		res.Candidate = d.Candidate
	}
	if landed != nil {
		res.Landed, res.LandRefusal = landed.Landed, landed.LandRefusal
	}
	r.ended[d.Lineage] = res
	r.sum.Lineages = append(r.sum.Lineages, *res)
	detail := string(d.End)
	if at := orHead(d); at != "" {
		detail += " at " + text.Short(at)
	}
	r.emit(Event{Kind: EventLineageEnded, Label: d.Lineage, Detail: detail + ": " + res.Reason})
	return res
}

// orHead is the commit a decision is about: its candidate, else its head.
func orHead(d Decision) string {
	if d.Candidate != "" {
		return d.Candidate
	}
	return d.Head
}

// examineText is the examine card the loop queues for a head, or for
// the candidate swarm land rebased it into (d.Rebases > 0).
func examineText(label string, d Decision) string {
	c, cand := d.Card, d.Candidate
	var b strings.Builder
	fmt.Fprintf(&b, "%s%s sha=%s\n", ContractPrefix, label, cand[:12])
	fmt.Fprintf(&b, "%s: %s\n%s: %s\n%s: %s\n%s: %s\n", BaseHeader, cand, KindHeader, KindExamine, CandidateHeader, cand, FeatureHeader, gateFeature(c))
	if v, ok := c.Lookup(DeadlineHeader); ok {
		fmt.Fprintf(&b, "%s: %s\n", DeadlineHeader, v)
	}
	if d.Rebases > 0 {
		fmt.Fprintf(&b, "\nExamine %s at %s: the head %s card %s produced (lineage %s), rebased by swarm land onto %s,\n", gateFeature(c), text.Short(cand), text.Short(d.Head), c.Label, d.Lineage, text.Short(d.Onto))
		b.WriteString("which the branch had moved to. Judge it as it is, against the contract it holds,\n")
	} else {
		fmt.Fprintf(&b, "\nExamine %s at %s, the head card %s produced (lineage %s), against the contract it holds,\n", gateFeature(c), text.Short(cand), c.Label, d.Lineage)
	}
	b.WriteString("from its public behaviour: judge every expectation, citing what you observed.\n")
	return b.String()
}

// examineLabel names the examine card of a card's head, or of its n-th
// rebased candidate.
func examineLabel(c *Card, rebases int) string {
	if rebases > 0 {
		return fmt.Sprintf("%s-rebase%d-exam", text.Truncate(c.Label, 80), rebases)
	}
	return text.Truncate(c.Label, 90) + "-exam"
}

func (r *loopRun) examine(ctx context.Context, d Decision) error {
	label := examineLabel(d.Card, d.Rebases)
	o := r.Check
	o.Worker = r.Examiner.Worker.Name
	check, err := AddCard(ctx, []byte(examineText(label, d)), o, r.By, now(r.Now))
	if rf, ok := refusal.As(err); ok {
		d.End, d.Reason = LineagePerson, "the examine card of "+text.Short(d.Candidate)+" was refused: "+rf.Name+": "+text.OneLine(rf.Detail)
		r.end(d, rf.Name)
		return nil
	}
	if err != nil {
		return err
	}
	what := "the head of card " + d.Card.Label
	if d.Rebases > 0 {
		what = fmt.Sprintf("card %s's head %s rebased onto %s", d.Card.Label, text.Short(d.Head), text.Short(d.Onto))
	}
	detail := fmt.Sprintf("card %s examines %s, %s, by worker %s", check.Card.Label, text.Short(d.Candidate), what, r.Examiner.Worker.Name)
	r.emit(Event{Kind: EventExamineQueued, Label: d.Lineage, Detail: detail})
	return nil
}

// gate runs the feature's gates on a rebased candidate, as the producer's
// supervisor runs them on a harvested head (HeadGates), with the tip it
// was rebased onto as the base: the evidence is recorded against the
// candidate, and the judgment reads it. The loop runs no gates when its
// producer runs none.
func (r *loopRun) gate(ctx context.Context, d Decision) {
	g := r.Producer.Gates
	if g == nil {
		return
	}
	on := *d.Card
	on.Base = d.Onto
	sum := g.Gate(ctx, r.Producer.Store, &on, d.Candidate, func(row *examine.GateRow) {
		detail := string(row.Expectation) + " " + string(row.State)
		if row.Proof != "" {
			detail += " " + string(row.Proof)
		}
		r.emit(Event{Kind: EventGated, Label: d.Card.Label, Detail: detail + " at rebased " + text.Short(d.Candidate)})
	})
	r.emit(Event{Kind: EventGated, Label: d.Card.Label, Detail: "rebased " + text.Short(d.Candidate) + " onto " + text.Short(d.Onto) + ": " + sum.String()})
}

// judge asks the one judgment of the candidate; accepted ends the
// lineage, or, when asked to land, puts it in the landing queue; a head
// not accepted is ReworkCard's to turn into the next card, or to refuse
// by name, which ends the lineage; a rebased candidate not accepted ends
// it for a person.
func (r *loopRun) judge(ctx context.Context, d Decision) error {
	st := r.Check.Store
	feature := gateFeature(d.Card)
	cand, err := oid.Parse(d.Candidate)
	if err != nil {
		return err
	}
	q := r.Question
	q.Commit, q.Now = cand, now(r.Now)
	j, err := judge.Judge(st, q)
	if err != nil {
		return err
	}
	// The lineage is accepted when the one judgment accepts the commit,
	// every feature its contracts name, not when the card's own feature
	// alone is: the same answer status, the hooks and land give.
	outcome, why, blocked := examine.None, "", ""
	for _, f := range j.Features {
		switch {
		case f.Feature == feature:
			outcome, why = f.Outcome, f.Refusal
		case !f.OK() && blocked == "":
			blocked = fmt.Sprintf("feature %s is %s there", f.Feature, orNone(string(f.Outcome)))
		}
	}
	if j.Accepted {
		r.emit(Event{Kind: EventJudged, Label: d.Lineage, Detail: fmt.Sprintf("%s at %s: accepted", feature, text.Short(d.Candidate))})
		d.End, d.Reason = LineageAccepted, fmt.Sprintf("the examination of %s at %s is accepted (card %s)", feature, text.Short(d.Candidate), d.Card.Label)
		if d.Rebases > 0 {
			d.Reason = fmt.Sprintf("the examination of %s at %s, card %s's head rebased onto %s, is accepted", feature, text.Short(d.Candidate), d.Card.Label, text.Short(d.Onto))
		}
		if r.Land == nil {
			r.end(d, "")
			return nil
		}
		r.landing = append(r.landing, d)
		r.emit(Event{Kind: EventLandQueued, Label: d.Lineage, Detail: fmt.Sprintf("%s waits to land, %s in the landing queue", text.Short(d.Candidate), ordinal(len(r.landing)))})
		return nil
	}
	if why == "" {
		why = blocked
	}
	detail := fmt.Sprintf("%s at %s: %s", feature, text.Short(d.Candidate), orNone(string(outcome)))
	if why != "" {
		detail += " (" + why + ")"
	}
	r.emit(Event{Kind: EventJudged, Label: d.Lineage, Detail: detail})
	if d.Rebases > 0 {
		d.End = LineagePerson
		d.Reason = fmt.Sprintf("NeedsPerson: card %s's head %s, rebased onto %s as %s, is %s there: a person decides how the change and the branch go together",
			d.Card.Label, text.Short(d.Head), text.Short(d.Onto), text.Short(d.Candidate), orNone(string(outcome)))
		r.end(d, refusal.NeedsPerson)
		return nil
	}
	rw, err := ReworkCard(ctx, ReworkOptions{Feature: feature, Candidate: d.Head, Limit: r.Limit, Question: r.Question, Check: r.Check, By: r.By, Now: now(r.Now)})
	if rf, ok := refusal.As(err); ok {
		d.End = LineagePerson
		if rf.Name == refusal.ReworkLimit {
			d.End = LineageBound
		}
		d.Reason = rf.Name + ": " + text.OneLine(rf.Detail)
		if rf.Remedy != "" {
			d.Reason += "; " + text.OneLine(rf.Remedy)
		}
		r.end(d, rf.Name)
		return nil
	}
	if err != nil {
		return err
	}
	r.emit(Event{Kind: EventReworkQueued, Label: d.Lineage, Detail: fmt.Sprintf("card %s reworks %s (rework %d of at most %d): %s",
		rw.Label, text.Short(rw.Base), rw.ReworkOf.N, rw.Limit, text.Plural(rw.GapsCount, "gap", "gaps"))})
	return nil
}

func ordinal(n int) string {
	switch n {
	case 1:
		return "first"
	case 2:
		return "second"
	case 3:
		return "third"
	}
	return fmt.Sprintf("number %d", n)
}

// waitsToLand reports whether the lineage root is in the landing queue.
func (r *loopRun) waitsToLand(root string) bool {
	for _, d := range r.landing {
		if d.Lineage == root {
			return true
		}
	}
	return false
}

// landQueued lands the lineages of the landing queue one at a time, in
// its order; Land reads the remote's tip afresh for each. Landed, or
// refused, ends the lineage accepted (a refusal kept in its result: it
// was not landed). Rebased leaves it driven: Decide follows the landing
// record to the new candidate, which is gated, examined and judged, and,
// accepted, joins the queue behind the lineages waiting then. It reports
// whether it landed anything.
func (r *loopRun) landQueued(ctx context.Context) bool {
	moved := len(r.landing) > 0
	for len(r.landing) > 0 {
		d := r.landing[0]
		r.landing = r.landing[1:]
		res, err := r.Land(ctx, d.Card.Label)
		out := &LineageResult{}
		switch {
		case err != nil:
			out.LandRefusal = "error"
			if rf, ok := refusal.As(err); ok {
				out.LandRefusal = rf.Name
			}
			out.Landed = "not landed: " + text.OneLine(err.Error())
		case res.Event == LandRebased:
			detail := fmt.Sprintf("%s on %s moved to %s: %s rebased into a new candidate %s, to gate and examine as it is",
				res.Branch, res.Remote, text.Short(res.Onto), text.Short(res.Candidate), text.Short(res.Rebased))
			if res.Notice != "" {
				detail += "; " + text.OneLine(res.Notice)
			}
			r.emit(Event{Kind: EventRebased, Label: d.Lineage, Detail: detail})
			continue
		default:
			out.Landed = fmt.Sprintf("%s is at %s on %s", res.Branch, text.Short(res.Candidate), res.Remote)
			if res.Notice != "" {
				out.Landed += "; " + text.OneLine(res.Notice)
			}
		}
		r.endLanded(d, "", out)
		r.emit(Event{Kind: EventLanded, Label: d.Lineage, Detail: out.Landed})
	}
	return moved
}

// stalled ends every lineage still driven when a round moved nothing:
// its card cannot be run here (skipped, blocked), or waits on another
// supervisor's lease.
func (r *loopRun) stalled() {
	recs, _ := r.read()
	for _, root := range r.drive {
		if _, done := r.ended[root]; done {
			continue
		}
		d := Decide(root, recs)
		label := root
		if d.Card != nil {
			label = d.Card.Label
		}
		if d.Examine != "" {
			label = d.Examine
		}
		why := "card " + label + " did not run here"
		if s, ok := r.sum.Skipped[label]; ok {
			why += ": skipped: " + text.OneLine(s)
		} else if b, ok := r.sum.Blocked[label]; ok {
			why += ": blocked: " + text.OneLine(b)
		} else {
			why += " (another supervisor holds it, or it waits for a retry)"
		}
		d.End, d.Reason = LineagePerson, why
		r.end(d, "")
	}
}
