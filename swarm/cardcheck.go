package swarm

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/refusal"
	"github.com/nwdes/nwdes/sandbox"
)

// Oracle runs a feature's oracle (TEST) at a commit and says whether it
// was MET, with what the gate said of it. A feature or criterion that
// does not exist there, or carries no oracle, is a *TestProblem (a
// problem of the card); any other error (the wall, the store) is the
// check's failure.
type Oracle func(ctx context.Context, t TestRef, at oid.ID) (met bool, note string, err error)

// TestProblem is what an Oracle says of a TEST that names no oracle at
// the commit: the refusal naming what is missing.
type TestProblem struct{ Err error }

func (e *TestProblem) Error() string { return e.Err.Error() }
func (e *TestProblem) Unwrap() error { return e.Err }

// GateOracle runs the oracle as `gate run` does: examine's gates, every
// oracle of the feature at the commit, each in the wall in a fresh export
// of its tree, the outcome recorded as gate evidence of that commit.
func GateOracle(st *gitstore.Store, wall *sandbox.Wall, timeout time.Duration, now func() time.Time) Oracle {
	return func(ctx context.Context, t TestRef, at oid.ID) (bool, string, error) {
		target := examine.Target{Feature: t.Feature, Candidate: at.String()}
		cand, err := examine.Load(st, target)
		if _, ok := refusal.As(err); ok {
			return false, "", &TestProblem{err}
		}
		if err != nil {
			return false, "", err
		}
		cr, ok := cand.Contract.Criterion(examine.ExpectationID(t.Criterion))
		switch {
		case !ok:
			return false, "", &TestProblem{refusal.New(refusal.MissingFact, "name a criterion of the feature's contract at BASE (git nwdes gate status --feature "+t.Feature+" lists them)",
				"feature %s has no criterion %s at %s", t.Feature, t.Criterion, at.Short())}
		case cr.Oracle == nil:
			return false, "", &TestProblem{refusal.New(refusal.MissingFact, "name a criterion that carries an oracle (CHECK: and EXPECT: under it)",
				"criterion %s of %s carries no oracle at %s", t.Criterion, t.Feature, at.Short())}
		}
		target.Contract = cand.ContractPath
		g := &examine.Gates{Store: st, Wall: wall, Timeout: timeout, Now: now}
		rep, err := g.Run(ctx, target)
		if err != nil {
			return false, "", err
		}
		for _, row := range rep.Rows {
			if string(row.Expectation) == t.Criterion {
				return row.State == examine.GateMet, string(row.State) + ": " + row.Note, nil
			}
		}
		return false, "", &TestProblem{refusal.New(refusal.MissingFact, "name a criterion that is not abandoned",
			"criterion %s of %s was not run at %s", t.Criterion, t.Feature, at.Short())}
	}
}

// CheckOptions is what CheckCard checks a card against besides its text.
type CheckOptions struct {
	Store *gitstore.Store
	// Oracle runs the card's TEST at its BASE; nil leaves TEST unchecked
	// beyond its form (and says so in a warning).
	Oracle Oracle
	// Worker names the worker whose earlier jobs the DEADLINE is held
	// to; "" for every worker's.
	Worker string
	// Deadline overrides the card's DEADLINE (swarm add --deadline).
	Deadline time.Duration
}

// CardCheck is a card that passed its check, and what it warns of.
type CardCheck struct {
	Card     *Card
	Warnings []string
}

// CheckCard checks a card as `swarm card check` and `swarm add` do and
// reports every problem at once, in a refusal CardInvalid wrapping a
// *CardError: its text (ParseCard), then against the repository — BASE a
// commit here; each DEPENDS-ON a queued card, with no cycle through the
// queue; TEST's oracle NOT-MET at BASE (run through o.Oracle), so the
// card cannot be done before it starts. A DEADLINE below the 95th
// percentile of the durations of earlier jobs (of o.Worker's, when
// named) whose cards had the same TEST is a warning. Nothing is written,
// but running TEST records its gate evidence as gate run does.
func CheckCard(ctx context.Context, b []byte, o CheckOptions) (*CardCheck, error) {
	c, problems := parseCard(b)
	if c == nil {
		return nil, cardRefusal(problems)
	}
	check := &CardCheck{Card: c}
	var base oid.ID
	baseOK := false
	if c.Base != "" {
		id, err := oid.Parse(c.Base)
		if err == nil {
			_, _, err = o.Store.Parents(id)
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("BASE %s is not a commit of this repository (fetch it, or name one it has)", c.Base))
		} else {
			base, baseOK = id, true
		}
	}
	queue, err := Queue(o.Store)
	if err != nil {
		return nil, err
	}
	problems = append(problems, dependencyProblems(c, queue)...)
	exProblems, exWarnings, err := examineCardProblems(c, o)
	if err != nil {
		return nil, err
	}
	problems, check.Warnings = append(problems, exProblems...), append(check.Warnings, exWarnings...)
	if c.ReworkOf != nil {
		jobs, err := Jobs(o.Store)
		if err != nil {
			return nil, err
		}
		problems = append(problems, reworkProblems(c, queue, jobs)...)
	}
	if c.Test != nil && baseOK {
		switch {
		case o.Oracle == nil:
			check.Warnings = append(check.Warnings, "TEST "+c.Test.String()+" was not run at BASE")
		default:
			met, note, err := o.Oracle(ctx, *c.Test, base)
			var tp *TestProblem
			if errors.As(err, &tp) {
				what := tp.Error()
				if r, ok := refusal.As(tp.Err); ok {
					what = r.Name + ": " + r.Detail
				}
				problems = append(problems, fmt.Sprintf("TEST %s: %s", c.Test, what))
			} else if err != nil {
				return nil, fmt.Errorf("run TEST %s at BASE: %w", c.Test, err)
			} else if met {
				problems = append(problems, fmt.Sprintf("TEST %s is already MET at BASE %s (%s): the card would be done before it starts", c.Test, base.Short(), note))
			}
		}
	}
	if len(problems) > 0 {
		return nil, cardRefusal(problems)
	}
	deadline := o.Deadline
	if deadline == 0 {
		deadline = c.Deadline
	}
	if c.Test != nil && deadline > 0 {
		jobs, err := Jobs(o.Store)
		if err != nil {
			return nil, err
		}
		if w := deadlineWarning(*c.Test, deadline, o.Worker, queue, jobs); w != "" {
			check.Warnings = append(check.Warnings, w)
		}
	}
	return check, nil
}

// dependencyProblems checks DEPENDS-ON against the queue: each a queued
// card, and no cycle through the queue back to c.
func dependencyProblems(c *Card, queue []Queued) []string {
	deps := map[string][]string{}
	for _, q := range queue {
		deps[q.Card.Label] = q.Card.DependsOn
	}
	var p []string
	for _, d := range c.DependsOn {
		if _, ok := deps[d]; !ok {
			p = append(p, fmt.Sprintf("DEPENDS-ON %s is not a queued card (queue it first)", d))
		}
	}
	if c.Label == "" {
		return p
	}
	deps[c.Label] = c.DependsOn
	if cycle := findCycle(c.Label, deps); cycle != nil {
		p = append(p, "DEPENDS-ON makes a cycle: "+strings.Join(cycle, " → "))
	}
	return p
}

// findCycle is a path from start back to itself through deps, or nil.
func findCycle(start string, deps map[string][]string) []string {
	seen := map[string]bool{}
	var path []string
	var walk func(string) bool
	walk = func(n string) bool {
		path = append(path, n)
		for _, d := range deps[n] {
			if d == start {
				path = append(path, d)
				return true
			}
			if !seen[d] {
				seen[d] = true
				if walk(d) {
					return true
				}
			}
		}
		path = path[:len(path)-1]
		return false
	}
	if walk(start) {
		return path
	}
	return nil
}

// deadlineWarning warns of a deadline below the 95th percentile of how
// long earlier jobs ran whose cards had the same TEST (of the named
// worker, when one is).
func deadlineWarning(t TestRef, deadline time.Duration, worker string, queue []Queued, jobs []Job) string {
	tests := map[string]TestRef{}
	for _, q := range queue {
		if q.Card.Test != nil {
			tests[q.Card.Label] = *q.Card.Test
		}
	}
	var took []time.Duration
	for _, j := range jobs {
		if tests[j.Label] != t || (worker != "" && j.Worker != worker) {
			continue
		}
		s, err1 := time.Parse(stamp, j.Started)
		e, err2 := time.Parse(stamp, j.Ended)
		if err1 == nil && err2 == nil && !e.Before(s) {
			took = append(took, e.Sub(s))
		}
	}
	if len(took) == 0 {
		return ""
	}
	p95 := Percentile(took, 95)
	if deadline >= p95 {
		return ""
	}
	of := "every worker's"
	if worker != "" {
		of = "worker " + worker + "'s"
	}
	return fmt.Sprintf("DEADLINE %s is below the 95th percentile (%s) of %d earlier jobs (%s) with TEST %s", deadline, p95.Round(time.Millisecond), len(took), of, t)
}

// Percentile is the p-th percentile of ds by the nearest rank (the
// smallest value at least p% of them do not exceed); 0 for none.
func Percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	rank := (p*len(s) + 99) / 100
	return s[max(rank, 1)-1]
}

// AddCard checks the card's text as CheckCard does and queues it (Add),
// with o.Deadline overriding its DEADLINE.
func AddCard(ctx context.Context, b []byte, o CheckOptions, by string, now time.Time) (*CardCheck, error) {
	check, err := CheckCard(ctx, b, o)
	if err != nil {
		return nil, err
	}
	if err := Add(ctx, o.Store, check.Card, o.Deadline, by, now); err != nil {
		return nil, err
	}
	return check, nil
}
