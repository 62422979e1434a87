package examine

import (
	"fmt"
	"strings"

	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/refusal"
)

// GatesMode says whether an examination's met verdicts are bound by the
// contract's oracles.
type GatesMode string

const (
	// GatesBinding is the default: an expectation with an oracle is met
	// only when its oracle is MET at the candidate.
	GatesBinding GatesMode = ""
	// GatesAdvisory: the team chose (git config nwdes.gates=advisory)
	// to let an examiner's met stand whatever the oracle showed; the
	// examination records it and the brief shows it.
	GatesAdvisory GatesMode = "advisory"
)

// ParseGatesMode reads git config nwdes.gates ("binding", "advisory", or
// unset); anything else is refused, never taken for a default.
func ParseGatesMode(v string, set bool) (GatesMode, error) {
	switch {
	case !set || v == "binding":
		return GatesBinding, nil
	case v == "advisory":
		return GatesAdvisory, nil
	}
	return GatesBinding, refusal.New(refusal.ConfigurationMalformed, "set git config nwdes.gates to binding or advisory, or unset it",
		"git config nwdes.gates %q is not binding or advisory", v)
}

// Binding is the rule that ties an examination's verdicts to what the
// contract and its oracles say at the candidate: an abandoned criterion is
// never met (CriterionAbandoned), and an expectation with an oracle is met
// only when that oracle is MET at this commit: NOT-MET, pending, stale or
// another oracle's evidence is GateNotMet, naming the expectation and the
// evidence. The one exception is an examination closed with advisory gates
// judged where advisory gates are allowed (the judging side's own
// nwdes.gates=advisory: an examiner's setting alone never lifts the rule).
// It returns the refusal's name and the problem, or "" when the verdicts
// stand. rep is GateStatus at the candidate (nil when the contract has no
// oracle).
func Binding(ex *Examination, c *Contract, rep *GateReport, allowAdvisory bool) (string, string) {
	met := map[ExpectationID]bool{}
	for _, r := range ex.Rows {
		met[r.Expectation] = r.Verdict == Met
	}
	var abandoned []string
	for _, cr := range c.Criteria {
		if c.Abandoned[cr.ID] != "" && met[cr.ID] {
			abandoned = append(abandoned, fmt.Sprintf("%s (%s)", cr.ID, text.OneLine(c.Abandoned[cr.ID])))
		}
	}
	if len(abandoned) > 0 {
		return refusal.CriterionAbandoned, fmt.Sprintf("the contract abandons %s, and an abandoned criterion is never met: a person decides what becomes of it",
			strings.Join(abandoned, ", "))
	}
	if ex.Gates == GatesAdvisory && allowAdvisory || rep == nil {
		return "", ""
	}
	var gaps []string
	for _, row := range rep.Rows {
		if !met[row.Expectation] || row.State == GateMet {
			continue
		}
		where := row.EvidencePath
		if where == "" {
			where = text.OneLine(row.Note)
		}
		gaps = append(gaps, fmt.Sprintf("%s is met but its oracle is %s at this commit (%s)", row.Expectation, row.State, where))
	}
	if len(gaps) > 0 {
		return refusal.GateNotMet, strings.Join(gaps, "; ")
	}
	return "", ""
}
