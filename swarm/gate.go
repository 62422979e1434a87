package swarm

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/refusal"
	"github.com/nwdes/nwdes/sandbox"
)

// HeadGates runs a feature's gates on each head a supervisor harvests
// (swarm run --gate): examine.Gates, the very code `gate run` runs, with
// the card's BASE as the base, so that the evidence recorded against the
// head says of each oracle whether the change proved it.
type HeadGates struct {
	// Wall runs every oracle (at the base and at the head), each in a job
	// of its own with the network denied.
	Wall sandbox.Jobs
	// Timeout bounds each oracle (examine.DefaultGateTimeout when zero).
	Timeout time.Duration
	// Sign, when set, signs each evidence record.
	Sign func(message []byte) ([]byte, error)
}

// MaxGateOracles bounds the oracles a job record's gate summary lists.
const MaxGateOracles = 64

// GateSummary is what the gates showed at a job's harvested head (Job.Gate,
// v5): whether every oracle was MET, each oracle's state and proof, and
// whether the card's TEST oracle was proven there.
type GateSummary struct {
	// Feature is the feature gated: the card's FEATURE, else its TEST's.
	Feature string `json:"feature"`
	// Base is the commit every oracle also ran at (the card's BASE).
	Base string `json:"base"`
	// Met: every oracle that counts is MET at the head
	// (examine.GateReport.Passed).
	Met     bool            `json:"met"`
	Oracles []GatedOracle   `json:"oracles"`
	Test    *GatedTestProof `json:"test,omitempty"`
	// Refusal and Problem name why the head did not pass its gates:
	// GateNotMet (an oracle not MET), GateVacuous or GateUnproven (the
	// card's TEST oracle not proven), or the gates' own refusal when they
	// could not run (a contract missing or malformed at the head); Error
	// is set instead when they failed for another reason (the wall, the
	// store).
	Refusal string `json:"refusal,omitempty"`
	Problem string `json:"problem,omitempty"`
	Error   string `json:"error,omitempty"`
}

// GatedOracle is one oracle's outcome at a head.
type GatedOracle struct {
	Expectation string            `json:"expectation"`
	State       examine.GateState `json:"state"`
	// Proof is proven, vacuous or unproven for a MET oracle, "" otherwise.
	Proof examine.Proof `json:"proof,omitempty"`
	// Evidence is where the run is recorded in refs/nwdes/gates.
	Evidence string `json:"evidence,omitempty"`
}

// GatedTestProof is the card's TEST oracle at the head.
type GatedTestProof struct {
	Criterion string            `json:"criterion"`
	State     examine.GateState `json:"state"`
	Proof     examine.Proof     `json:"proof,omitempty"`
}

// Proven reports whether the head passed: every oracle MET and the
// card's TEST oracle, if any, proven.
func (g *GateSummary) Proven() bool {
	return g != nil && g.Met && g.Refusal == "" && g.Error == ""
}

// String is the summary in one line, as swarm status prints it.
func (g *GateSummary) String() string {
	if g.Error != "" {
		return "gates failed: " + g.Error
	}
	met, proven, vacuous := 0, 0, 0
	for _, o := range g.Oracles {
		if o.State == examine.GateMet {
			met++
		}
		switch o.Proof {
		case examine.ProofProven:
			proven++
		case examine.ProofVacuous:
			vacuous++
		}
	}
	s := fmt.Sprintf("gates %s: %d/%d MET, %d proven, %d vacuous", g.Feature, met, len(g.Oracles), proven, vacuous)
	if g.Refusal != "" {
		s += "; " + g.Refusal + ": " + g.Problem
	}
	return s
}

// gateFeature is the feature a card's head answers to: FEATURE, else the
// feature its TEST names; "" when it names neither.
func gateFeature(c *Card) string {
	if c.Feature != "" {
		return c.Feature
	}
	if c.Test != nil {
		return c.Test.Feature
	}
	return ""
}

// Gate runs the feature's gates on a harvested head with the card's BASE
// as the base, records the evidence against the head (as gate run does),
// and says what they showed. progress, when set, is told of each oracle
// as it ends. It never fails: what goes wrong is in the summary.
func (h *HeadGates) Gate(ctx context.Context, st examine.Store, c *Card, head string, progress func(row *examine.GateRow)) *GateSummary {
	sum := &GateSummary{Feature: gateFeature(c), Base: c.Base, Oracles: []GatedOracle{}}
	g := &examine.Gates{Store: st, Wall: h.Wall, Base: c.Base, Timeout: h.Timeout, Sign: h.Sign}
	if progress != nil {
		g.Progress = func(row *examine.GateRow, done bool, _ time.Duration) {
			if done {
				progress(row)
			}
		}
	}
	rep, err := g.Run(ctx, examine.Target{Feature: sum.Feature, Candidate: head})
	if r, ok := refusal.As(err); ok {
		sum.Refusal, sum.Problem = r.Name, text.OneLine(r.Detail)
		return sum
	}
	if err != nil {
		sum.Error = text.OneLine(err.Error())
		return sum
	}
	summarise(sum, rep, c.Test)
	return sum
}

// summarise fills sum from a gate report: each oracle, whether all are
// MET, and the TEST oracle's proof, named when it is not proven.
func summarise(sum *GateSummary, rep *examine.GateReport, test *TestRef) {
	sum.Met = rep.Passed()
	var notMet []string
	for _, row := range rep.Rows {
		if len(sum.Oracles) < MaxGateOracles {
			sum.Oracles = append(sum.Oracles, GatedOracle{Expectation: string(row.Expectation), State: row.State, Proof: row.Proof, Evidence: row.EvidencePath})
		}
		if row.State != examine.GateMet {
			notMet = append(notMet, string(row.Expectation)+" "+string(row.State))
		}
	}
	if len(notMet) > 0 {
		sum.Refusal, sum.Problem = refusal.GateNotMet, "not MET at the head: "+strings.Join(notMet, ", ")
	}
	if test == nil {
		return
	}
	sum.Test = &GatedTestProof{Criterion: test.Criterion, State: examine.GatePending}
	for _, row := range rep.Rows {
		if string(row.Expectation) == test.Criterion {
			sum.Test.State, sum.Test.Proof = row.State, row.Proof
		}
	}
	// The TEST oracle's proof is what the card promised: it is named
	// first, whatever else is not MET.
	switch {
	case sum.Test.State != examine.GateMet:
		sum.Refusal, sum.Problem = refusal.GateNotMet, fmt.Sprintf("TEST %s is %s at the head", test, sum.Test.State)
	case sum.Test.Proof == examine.ProofVacuous:
		sum.Refusal, sum.Problem = refusal.GateVacuous, fmt.Sprintf("TEST %s is vacuous at the head: MET at BASE %s too, so it does not show the change made it pass", test, text.Short(sum.Base))
	case sum.Test.Proof != examine.ProofProven:
		sum.Refusal, sum.Problem = refusal.GateUnproven, fmt.Sprintf("TEST %s is MET at the head but not proven (no run at BASE)", test)
	}
}

// problem says what is wrong with a job record's gate summary, or "".
func (g *GateSummary) problem() string {
	switch {
	case g.Feature == "" && g.Error == "" && g.Refusal == "":
		return "a gate summary names its feature"
	case len(g.Oracles) > MaxGateOracles:
		return fmt.Sprintf("a gate summary lists more than %d oracles", MaxGateOracles)
	case g.Base != "" && !isLowerHex(g.Base, 40) && !isLowerHex(g.Base, 64):
		return "a gate summary's base is no commit id"
	}
	return ""
}

// gateHead gates rec's harvested head when the supervisor was asked to
// (Supervisor.Gates) and the card names a feature, telling the events
// as it goes.
func (s *Supervisor) gateHead(ctx context.Context, c *Card, rec *Job) {
	if s.Gates == nil || rec.Head == "" || (rec.Harvest != HarvestDescends && rec.Harvest != HarvestDiverged) {
		return
	}
	if gateFeature(c) == "" {
		s.emit(Event{Kind: EventGated, Label: rec.Label, Attempt: rec.Attempt, Detail: "not gated: the card names no FEATURE or TEST"})
		return
	}
	// A rework's head is proven against its lineage's first BASE, not
	// the earlier attempt it was staged on: there the oracles the first
	// attempt already made pass are MET too, and every one would read
	// vacuous, though the lineage's change is what made it pass.
	gated := c
	if c.ReworkOf != nil {
		if queue, err := Queue(s.Store); err == nil {
			if root := lineageBase(c, queue); root != c.Base {
				cc := *c
				cc.Base = root
				gated = &cc
			}
		}
	}
	rec.Gate = s.Gates.Gate(ctx, s.Store, gated, rec.Head, func(row *examine.GateRow) {
		d := string(row.Expectation) + " " + string(row.State)
		if row.Proof != "" {
			d += " " + string(row.Proof)
		}
		s.emit(Event{Kind: EventGated, Label: rec.Label, Attempt: rec.Attempt, Detail: d + " at " + text.Short(rec.Head)})
	})
	s.emit(Event{Kind: EventGated, Label: rec.Label, Attempt: rec.Attempt, Detail: rec.Gate.String()})
}

// lineageBase is the BASE of the first card of c's lineage as far as the
// queue holds it (lineageRoot); c's own BASE when c is not queued here.
// Every BASE of the chain is an ancestor of c's head, so a proof against
// any of them is true; the first is the one that shows the lineage's
// change.
func lineageBase(c *Card, queue []Queued) string {
	for i := range queue {
		if queue[i].Card.Label == c.Label {
			return lineageRoot(&queue[i], queue).Card.Base
		}
	}
	return c.Base
}
