package report

import (
	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore/oid"
)

// FeatureRow is one feature the features verb lists: its contract, its
// expectations, how many carry an oracle, and the outcome of its newest
// examination at the commit.
type FeatureRow struct {
	Feature      string   `json:"feature"`
	Contract     string   `json:"contract"`
	Expectations []string `json:"expectations"`
	Oracles      int      `json:"oracles"`
	Outcome      string   `json:"outcome"`
	// Problem says why the contract could not be read (Outcome is then
	// "contract unreadable"); the listing goes on with the next feature.
	Problem string `json:"problem,omitempty"`
}

// Features lists the features whose contracts are committed at commit,
// by name. It fails only when the commit's contracts or the records
// cannot be listed or read; a contract that does not parse is a row with
// its Problem.
func Features(st examine.Reading, commit oid.ID) ([]FeatureRow, error) {
	names, err := examine.Features(st, commit)
	if err != nil {
		return nil, err
	}
	rd, err := examine.NewReader(st)
	if err != nil {
		return nil, err
	}
	rows := []FeatureRow{}
	for _, f := range names {
		r := FeatureRow{Feature: f, Contract: examine.DefaultContractPath(f), Expectations: []string{}}
		cand, err := examine.Load(st, examine.Target{Feature: f, Candidate: commit.String()})
		if err != nil {
			r.Problem, r.Outcome = err.Error(), "contract unreadable"
			rows = append(rows, r)
			continue
		}
		for _, cr := range cand.Contract.Criteria {
			r.Expectations = append(r.Expectations, string(cr.ID))
			if cr.Oracle != nil {
				r.Oracles++
			}
		}
		sd, err := rd.Standing(commit, f)
		if err != nil {
			return nil, err
		}
		r.Outcome = string(sd.Outcome)
		rows = append(rows, r)
	}
	return rows, nil
}
