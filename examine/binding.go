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

// ProofMode says whether a met verdict needs its oracle proven: seen
// NOT-MET at a base before MET at the candidate.
type ProofMode string

const (
	// ProofOptional is the default: vacuous and unproven oracles are named
	// (gate status, verify, the brief), not refused.
	ProofOptional ProofMode = ""
	// ProofRequired: the judging side set git config
	// nwdes.gates.proof=required; a met verdict on an oracle that is
	// vacuous (GateVacuous) or unproven (GateUnproven) is refused.
	ProofRequired ProofMode = "required"
)

// ParseProofMode reads git config nwdes.gates.proof ("required",
// "optional", or unset); anything else is refused, never taken for a
// default.
func ParseProofMode(v string, set bool) (ProofMode, error) {
	switch {
	case !set || v == "optional":
		return ProofOptional, nil
	case v == "required":
		return ProofRequired, nil
	}
	return ProofOptional, refusal.New(refusal.ConfigurationMalformed, "set git config nwdes.gates.proof to required or optional, or unset it",
		"git config nwdes.gates.proof %q is not required or optional", v)
}

// ProofRule is the rule nwdes.gates.proof=required adds for a MET oracle
// whose expectation is met: it names the refusal (GateVacuous,
// GateUnproven) and the problem, or "" when the oracle is proven (or not
// MET: then GateNotMet is the rule). Binding and verify both ask it.
func ProofRule(id ExpectationID, ev *Evidence) (string, string) {
	if ev == nil {
		return "", ""
	}
	switch ev.Proof() {
	case ProofVacuous:
		return refusal.GateVacuous, fmt.Sprintf("%s is met but its oracle is vacuous: MET at base %s as well as at this commit (%s), so it does not show that the change made it pass",
			id, text.Short(ev.Base.Commit), ev.Location())
	case ProofUnproven:
		return refusal.GateUnproven, fmt.Sprintf("%s is met but its oracle is unproven: MET at this commit with no run at a base (%s)", id, ev.Location())
	}
	return "", ""
}

// Binding is the rule that ties an examination's verdicts to what the
// contract and its oracles say at the candidate: an abandoned criterion is
// never met (CriterionAbandoned), and an expectation with an oracle is met
// only when that oracle is MET at this commit: NOT-MET, pending, stale or
// another oracle's evidence is GateNotMet, naming the expectation and the
// evidence. The one exception is an examination closed with advisory gates
// judged where advisory gates are allowed (the judging side's own
// nwdes.gates=advisory: an examiner's setting alone never lifts the rule).
// Under proof (nwdes.gates.proof=required on the judging side), an
// expectation met over a MET oracle is refused too unless that oracle is
// proven (ProofRule). It returns the refusal's name and the problem, or ""
// when the verdicts stand. rep is GateStatus at the candidate (nil when
// the contract has no oracle).
func Binding(ex *Examination, c *Contract, rep *GateReport, allowAdvisory bool, proof ProofMode) (string, string) {
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
	if proof != ProofRequired {
		return "", ""
	}
	name, unproven := "", []string(nil)
	for _, row := range rep.Rows {
		if !met[row.Expectation] {
			continue
		}
		if n, p := ProofRule(row.Expectation, row.Evidence); n != "" {
			if name == "" {
				name = n
			}
			unproven = append(unproven, p)
		}
	}
	if name != "" {
		return name, strings.Join(unproven, "; ")
	}
	return "", ""
}
