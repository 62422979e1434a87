package report

import (
	"errors"
	"fmt"

	"github.com/nwdes/nwdes/gitstore/oid"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/internal/text"
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
	// Features are sorted by name.
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

	examination *examine.Examination
	contract    *examine.Contract
	gateReport  *examine.GateReport
}

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
}

// Verify is the newest verify result for the commit.
type Verify struct {
	Verdict string `json:"verdict"`
	Range   string `json:"range"`
	Record  string `json:"record"`
}

// Examination returns the examination the feature's outcome comes from.
func (f *Feature) Examination() *examine.Examination { return f.examination }

// Evaluate reads where every feature whose contract exists at
// .nwave/features/<feature>.md in commit's tree stands: its newest
// published examination at that commit, its gate evidence and its verify
// verdict. It reads one snapshot of each ref and walks no history.
func Evaluate(st *gitstore.Store, commit oid.ID) (*Status, error) {
	features, err := examine.Features(st, commit)
	if err != nil {
		return nil, fmt.Errorf("list the contracts at %s: %w", commit, err)
	}
	rd, err := examine.NewReader(st)
	if err != nil {
		return nil, err
	}
	s := &Status{V: Version, Commit: commit.String(), Accepted: true, Features: []Feature{}}
	for _, name := range features {
		f := Feature{Feature: name, Outcome: examine.None, Contract: examine.DefaultContractPath(name)}
		cand, err := examine.Load(st, examine.Target{Feature: name, Candidate: commit.String()})
		switch {
		case err == nil:
			f.contract = cand.Contract
		case isRefusal(err):
			f.Problem = text.OneLine(err.Error())
		default:
			return nil, err
		}
		sd, err := rd.Standing(commit, name)
		if err != nil {
			return nil, fmt.Errorf("read the examination of %s at %s: %w", name, commit, err)
		}
		f.Outcome = sd.Outcome
		if sd.Problem != "" && f.Problem == "" {
			f.Problem = "the examination does not hold up: " + sd.Problem
		}
		if ex := sd.Examination; ex != nil {
			f.examination = ex
			f.Record, f.ClosedAt, f.Signature = ex.Path, ex.ClosedAt, examine.SignedBy(ex)
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
		if f.contract != nil {
			if err := addGates(st, commit, &f); err != nil {
				return nil, err
			}
		}
		v, err := examine.LatestVerify(st, commit, name)
		if err != nil {
			return nil, fmt.Errorf("read the verify verdict of %s at %s: %w", name, commit, err)
		}
		if v != nil {
			f.Verify = &Verify{Verdict: v.Token(), Range: v.Range, Record: string(examine.GateRef) + ":" + v.Path}
		}
		if f.Outcome != examine.Accepted || f.Problem != "" {
			s.Accepted = false
		}
		s.Features = append(s.Features, f)
	}
	return s, nil
}

func addGates(st *gitstore.Store, commit oid.ID, f *Feature) error {
	rep, err := examine.GateStatus(st, examine.Target{Feature: f.Feature, Candidate: commit.String()})
	if err != nil {
		return fmt.Errorf("read the gate evidence of %s at %s: %w", f.Feature, commit, err)
	}
	f.gateReport = rep
	if len(rep.Rows) == 0 {
		return nil
	}
	g := &Gates{State: "met", Rows: []GateLine{}}
	for _, r := range rep.Rows {
		g.Rows = append(g.Rows, GateLine{Expectation: r.Expectation, State: r.State, Evidence: r.EvidencePath, Abandoned: r.Abandoned != ""})
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
	f.Gates = g
	return nil
}

func isRefusal(err error) bool {
	var r *refusal.Error
	return errors.As(err, &r) && r.Class == refusal.Refused
}

// Unaccepted returns the features that keep the commit from being accepted.
func (s *Status) Unaccepted() []Feature {
	var out []Feature
	for _, f := range s.Features {
		if f.Outcome != examine.Accepted || f.Problem != "" {
			out = append(out, f)
		}
	}
	return out
}
