package report

import (
	"errors"
	"fmt"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/judge"
	"github.com/nwdes/nwdes/refusal"
)

// Version is the version of the JSON documents Status and the exports
// print. It changes only when a field changes meaning or disappears; new
// fields may appear within a version.
//
// v1: commit, accepted, features[{feature, outcome, contract, record,
// closed_at, expectations, gates, verify, problem}].
const Version = 1

// Status is where every feature with a contract stands at one commit.
type Status struct {
	V int `json:"v"`
	// Commit is the full id of the commit judged.
	Commit string `json:"commit"`
	// Accepted is true when every feature with a contract has an accepted
	// examination at Commit (vacuously true with no contract).
	Accepted bool `json:"accepted"`
	// Against is the protected branch's tip the commit was judged
	// against (--against), absent when none.
	Against string `json:"against,omitempty"`
	// Policy names the signing policy applied, absent when none.
	Policy string `json:"policy,omitempty"`
	// Features are sorted by name, then those whose contract was removed.
	Features []Feature `json:"features"`
}

// Feature is one feature's standing at the commit.
type Feature struct {
	Feature string `json:"feature"`
	// Outcome is the newest published examination's outcome at this
	// commit, "none" when there is none, or "invalid" when it does not hold
	// up against the commit (another contract, missing rows, an outcome its
	// rows do not derive; Problem says which).
	Outcome examine.Outcome `json:"outcome"`
	// Contract is the contract's path in the commit's tree.
	Contract string `json:"contract"`
	// Record is the examination's path in refs/nwdes/examine
	// (git show refs/nwdes/examine:<record>/record.json), "" when none.
	Record   string `json:"record,omitempty"`
	ClosedAt string `json:"closed_at,omitempty"`
	// Signature says who signed the examination ("signed by <key
	// fingerprint> (<type>)", or "signature INVALID: …"); absent when it
	// is unsigned (docs/trust.md).
	Signature string `json:"signature,omitempty"`
	// Expectations counts the examination's verdicts.
	Expectations *Counts `json:"expectations,omitempty"`
	// Gates is the state of the contract's command oracles at this
	// commit, from recorded evidence; absent when the contract has none.
	Gates *Gates `json:"gates,omitempty"`
	// Verify is the newest verify verdict recorded with this commit as
	// its head, absent when none.
	Verify *Verify `json:"verify,omitempty"`
	// Problem says why the feature could not be judged (a contract that
	// does not parse); such a feature is never accepted.
	Problem string `json:"problem,omitempty"`
	// Refusal names the rule that refused an otherwise accepted
	// examination (GateNotMet, DutyNotSeparated, …), absent otherwise.
	Refusal string `json:"refusal,omitempty"`
	// Removed: the contract the protected branch holds is gone here.
	Removed bool `json:"removed,omitempty"`
	// GatesMode is "advisory" when the examination was closed with
	// advisory gates.
	GatesMode string `json:"gates_mode,omitempty"`

	examination *examine.Examination
	contract    *examine.Contract
	gateReport  *examine.GateReport
	// accepted is the judgment's word on this feature (judge.Feature.OK),
	// never worked out again here.
	accepted bool
}

// OK reports whether the judgment accepted the feature.
func (f *Feature) OK() bool { return f.accepted }

// Counts are an examination's verdicts by kind.
type Counts struct {
	Met         int `json:"met"`
	Unmet       int `json:"unmet"`
	NotExamined int `json:"not_examined"`
}

// Gates summarises a feature's oracles at the commit.
type Gates struct {
	// State is "met" when every oracle that counts is MET, "not-met" when
	// any is NOT-MET, otherwise "pending".
	State string     `json:"state"`
	Rows  []GateLine `json:"rows"`
}

// GateLine is one oracle's state.
type GateLine struct {
	Expectation examine.ExpectationID `json:"expectation"`
	State       examine.GateState     `json:"state"`
	Evidence    string                `json:"evidence,omitempty"`
	Abandoned   bool                  `json:"abandoned,omitempty"`
	// Proof is proven, vacuous or unproven for a MET oracle
	// (docs/gates.md#proof).
	Proof examine.Proof `json:"proof,omitempty"`
}

// Verify is the newest verify result for the commit.
type Verify struct {
	Verdict string `json:"verdict"`
	Range   string `json:"range"`
	Record  string `json:"record"`
}

// Examination returns the examination the feature's outcome comes from.
func (f *Feature) Examination() *examine.Examination { return f.examination }

// Evaluate is the judgment of q (judge.Judge, the same every surface
// asks), with what people and CI read beside it: each feature's verdict
// counts, gate summary and newest verify verdict.
func Evaluate(st judge.Store, q judge.Question) (*Status, error) {
	j, err := judge.Judge(st, q)
	if err != nil {
		return nil, err
	}
	s := &Status{V: Version, Commit: q.Commit.String(), Accepted: j.Accepted, Policy: j.Policy, Features: []Feature{}}
	if !q.Against.IsZero() {
		s.Against = q.Against.String()
	}
	for _, jf := range j.Features {
		f := Feature{Feature: jf.Feature, Outcome: jf.Outcome, Contract: examine.DefaultContractPath(jf.Feature),
			Problem: jf.Problem, Refusal: jf.Refusal, Removed: jf.Removed, contract: jf.Contract, gateReport: jf.Gates, accepted: jf.OK()}
		if ex := jf.Examination; ex != nil {
			if jf.Outcome == examine.Invalid && jf.Refusal == "" && jf.Contract != nil {
				f.Problem = "the examination does not hold up: " + f.Problem
			}
			f.examination = ex
			f.Record, f.ClosedAt, f.Signature = ex.Path, ex.ClosedAt, examine.SignedBy(ex)
			f.GatesMode = string(ex.Gates)
			f.Expectations = &Counts{}
			for _, r := range ex.Rows {
				switch r.Verdict {
				case examine.Met:
					f.Expectations.Met++
				case examine.Unmet:
					f.Expectations.Unmet++
				default:
					f.Expectations.NotExamined++
				}
			}
		}
		if jf.Gates != nil {
			f.Gates = gatesOf(jf.Gates)
		}
		if !jf.Removed {
			v, err := examine.LatestVerify(st, q.Commit, jf.Feature)
			if err != nil {
				return nil, fmt.Errorf("read the verify verdict of %s at %s: %w", jf.Feature, q.Commit, err)
			}
			if v != nil {
				f.Verify = &Verify{Verdict: v.Token(), Range: v.Range, Record: string(examine.GateRef) + ":" + v.Path}
			}
		}
		s.Features = append(s.Features, f)
	}
	return s, nil
}

func gatesOf(rep *examine.GateReport) *Gates {
	if len(rep.Rows) == 0 {
		return nil
	}
	g := &Gates{State: "met", Rows: []GateLine{}}
	for _, r := range rep.Rows {
		g.Rows = append(g.Rows, GateLine{Expectation: r.Expectation, State: r.State, Evidence: r.EvidencePath, Abandoned: r.Abandoned != "", Proof: r.Proof})
		if r.Abandoned != "" {
			continue
		}
		switch {
		case r.State == examine.GateNotMet:
			g.State = "not-met"
		case r.State != examine.GateMet && g.State == "met":
			g.State = "pending"
		}
	}
	return g
}

func isRefusal(err error) bool {
	var r *refusal.Error
	return errors.As(err, &r) && r.Class == refusal.Refused
}

// Unaccepted returns the features that keep the commit from being accepted.
func (s *Status) Unaccepted() []Feature {
	var out []Feature
	for _, f := range s.Features {
		if !f.OK() {
			out = append(out, f)
		}
	}
	return out
}
