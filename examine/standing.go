package examine

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/nwdes/nwdes/gitstore/oid"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/refusal"
	"github.com/nwdes/nwdes/trust"
)

// Invalid is the outcome reported for an examination whose record does not
// hold up against the commit it claims: it judged another contract, its rows
// are not the contract's expectations, or its stored outcome is not the one
// its rows derive. Nothing that reads acceptance trusts such a record.
const Invalid Outcome = "invalid"

// Standing is a feature's acceptance at one commit as enforcement sees it.
type Standing struct {
	// Outcome is None without an examination, Invalid when the newest one
	// does not hold up (Problem says why), else its derived outcome.
	Outcome     Outcome
	Examination *Examination
	Problem     string
}

// Standing re-validates the newest examination of feature at commit against
// what that commit holds, so that the hook, status and the exports never
// take a stored outcome on trust: the examination must be of this commit,
// must have judged the feature's contract as committed there (default
// path, same blob), must have one row per expectation of that contract with
// citations where the verdict needs them, and its stored outcome must be
// the one its rows derive.
//
// A record consistent in every respect but forged by someone who can write
// the repository's refs is not detected here: that is the signing policy's
// part (Examination.SignedAsRequired; docs/trust.md).
func (r *Reader) Standing(commit oid.ID, feature string) (Standing, error) {
	return r.standing(commit, feature, nil)
}

// standing is Standing with the feature's contract at commit already
// loaded (nil: read it here).
func (r *Reader) standing(commit oid.ID, feature string, cand *Candidate) (Standing, error) {
	ex, err := r.At(commit, feature)
	if err != nil || ex == nil {
		return Standing{Outcome: None}, err
	}
	var problem string
	if cand != nil && cand.ContractPath == DefaultContractPath(feature) {
		problem = checkLoaded(commit, feature, ex, cand)
	} else {
		problem, err = r.check(commit, feature, ex)
	}
	if err != nil {
		return Standing{}, err
	}
	if problem != "" {
		return Standing{Outcome: Invalid, Examination: ex, Problem: problem}, nil
	}
	return Standing{Outcome: ex.Outcome, Examination: ex}, nil
}

func (r *Reader) check(commit oid.ID, feature string, ex *Examination) (string, error) {
	if ex.Candidate != commit.String() {
		return fmt.Sprintf("the record is of candidate %s, not %s", ex.Candidate, commit), nil
	}
	path := DefaultContractPath(feature)
	if ex.ContractPath != path {
		return fmt.Sprintf("it judged the contract at %s, not the feature's contract %s", ex.ContractPath, path), nil
	}
	f, err := r.st.ReadFile(commit, path)
	if errors.Is(err, gitstore.ErrNotFound) {
		return fmt.Sprintf("the commit has no contract %s", path), nil
	}
	if err != nil {
		return "", err
	}
	if f.Blob.String() != ex.ContractBlob {
		return fmt.Sprintf("it judged contract blob %s, but the commit holds %s", text.Short(ex.ContractBlob), text.Short(f.Blob.String())), nil
	}
	c, err := ParseContract(path, f.Data)
	if err != nil {
		if rf, ok := refusal.As(err); ok {
			return rf.Name + ": " + rf.Detail, nil
		}
		return "", err
	}
	return checkRows(ex, c.IDs()), nil
}

// checkLoaded is check with the contract already read and parsed.
func checkLoaded(commit oid.ID, feature string, ex *Examination, cand *Candidate) string {
	if ex.Candidate != commit.String() {
		return fmt.Sprintf("the record is of candidate %s, not %s", ex.Candidate, commit)
	}
	if path := DefaultContractPath(feature); ex.ContractPath != path {
		return fmt.Sprintf("it judged the contract at %s, not the feature's contract %s", ex.ContractPath, path)
	}
	if cand.ContractBlob.String() != ex.ContractBlob {
		return fmt.Sprintf("it judged contract blob %s, but the commit holds %s", text.Short(ex.ContractBlob), text.Short(cand.ContractBlob.String()))
	}
	return checkRows(ex, cand.Contract.IDs())
}

// checkRows says what is wrong with an examination's rows against the
// expectations they should cover (all of them, in order), or "".
func checkRows(ex *Examination, ids []ExpectationID) string {
	if len(ex.Rows) != len(ids) {
		return fmt.Sprintf("it has %d rows for %d expectations (%s)", len(ex.Rows), len(ids), joinIDs(ids))
	}
	if p := checkVerdicts(ex); p != "" {
		return p
	}
	for i, row := range ex.Rows {
		if row.Expectation != ids[i] {
			return fmt.Sprintf("row %d is %s where the contract has %s", i, row.Expectation, ids[i])
		}
	}
	return ""
}

// checkVerdicts checks what a record must hold whatever the contract: each
// row's verdict well-formed and the stored outcome the one the rows derive.
func checkVerdicts(ex *Examination) string {
	var vs []Verdict
	for _, row := range ex.Rows {
		in := VerdictInput{Expectation: row.Expectation, Verdict: row.Verdict, Class: row.Class, Reason: row.Reason}
		for range row.Cites {
			in.Observations = append(in.Observations, "O1")
		}
		if err := in.check(); err != nil {
			if rf, ok := refusal.As(err); ok {
				return "row " + string(row.Expectation) + ": " + rf.Name + ": " + rf.Detail
			}
			return err.Error()
		}
		vs = append(vs, row.Verdict)
	}
	if d := DeriveOutcome(vs); d != ex.Outcome {
		return fmt.Sprintf("its stored outcome is %s, but its rows derive %s", ex.Outcome, d)
	}
	return ""
}

// FeatureFileProblem says why an entry of .nwave/features (by name and git
// mode) is not a contract nwdes can enforce, or "".
func FeatureFileProblem(name string, mode uint32) string { return featureProblem(name, mode) }

// featureProblem says why a name under .nwave/features is not a feature
// contract nwdes can enforce, or "".
func featureProblem(name string, mode uint32) string {
	switch {
	case mode == gitstore.ModeTree:
		return "is a directory: contracts are .nwave/features/<feature>.md files"
	case mode == gitstore.ModeSymlink:
		return "is a symbolic link: a contract must be a committed file"
	case mode == gitstore.ModeGitlink:
		return "is a submodule: a contract must be a committed file"
	case !strings.HasSuffix(name, ".md"):
		// Anything else here looks like a contract to a reader and is
		// enforced by nobody (f.MD, f.md.txt, notes): refused by name, so
		// that renaming a contract cannot retire it quietly.
		return "is not a contract: everything in .nwave/features must be a <feature>.md contract (move other files elsewhere)"
	case ValidFeature(strings.TrimSuffix(name, ".md")) != nil:
		return "is not a valid feature name (letters, digits, '.', '_' and '-')"
	}
	return ""
}

// Rules are what an examination is held to beyond its own consistency:
// the gate evidence it is bound by, and the signing policy in force.
type Rules struct {
	// GatesTip is the tip of GateRef whose evidence binds the verdicts
	// (zero: the ref's tip).
	GatesTip oid.ID
	// Policy, when set, is the signing policy in force; Now is when its
	// validity windows are checked.
	Policy *trust.Policy
	Now    time.Time
	// AllowAdvisory lets an examination closed with advisory gates stand
	// where its oracles are not MET: the judging side's own
	// nwdes.gates=advisory.
	AllowAdvisory bool
	// Proof is the judging side's nwdes.gates.proof: required refuses a
	// met verdict on an oracle that is not proven (Binding).
	Proof ProofMode
}

// Holding is an examination held to Rules: its Standing, with the rule
// that refused an otherwise accepted record.
type Holding struct {
	Standing
	// Refusal names the rule (GateNotMet, GateVacuous, GateUnproven, CriterionAbandoned,
	// UnsignedEvidence, SignerNotAllowed, SignatureInvalid,
	// DutyNotSeparated), "" when none refused.
	Refusal string
	// Contract is the feature's contract at the commit (nil when it does
	// not parse: ContractProblem says why); Gates its oracles' state.
	Contract        *Contract
	ContractProblem string
	Gates           *GateReport
}

// Holds judges the newest examination of feature at commit as every
// surface must: Standing (the record against the commit), then Binding
// (abandoned criteria, oracles), then, under a policy, the signature, and
// the separation of duties (by the signing key under a policy, by the
// worker an examination names always). Only an accepted examination is held to the
// last three; a rejected one stands as it is.
func (r *Reader) Holds(commit oid.ID, feature string, rules Rules) (Holding, error) {
	var h Holding
	cand, err := Load(r.st, Target{Feature: feature, Candidate: commit.String()})
	switch rf, isRefusal := refusal.As(err); {
	case err == nil:
		h.Contract = cand.Contract
	case isRefusal && rf.Class == refusal.Refused:
		h.ContractProblem = text.OneLine(err.Error())
	default:
		return h, err
	}
	if h.Standing, err = r.standing(commit, feature, cand); err != nil {
		return h, fmt.Errorf("read the examination of %s at %s: %w", feature, commit.Short(), err)
	}
	if h.Contract != nil {
		if h.Gates, err = gateStatusOf(cand, func() (gitstore.View, error) { return r.gateView(rules.GatesTip) }); err != nil {
			return h, fmt.Errorf("read the gate evidence of %s at %s: %w", feature, commit.Short(), err)
		}
	}
	if h.Outcome != Accepted || h.Problem != "" || h.Contract == nil {
		return h, nil
	}
	refuse := func(name, problem string) (Holding, error) {
		h.Outcome, h.Refusal, h.Problem = Invalid, name, problem
		return h, nil
	}
	if rule, problem := Binding(h.Examination, h.Contract, h.Gates, rules.AllowAdvisory, rules.Proof); rule != "" {
		return refuse(rule, rule+": "+problem)
	}
	if rules.Policy != nil {
		if err := h.Examination.SignedAsRequired(rules.Policy, rules.Now); err != nil {
			rule := refusal.SignatureInvalid
			if rf, ok := refusal.As(err); ok {
				rule = rf.Name
			}
			return refuse(rule, text.OneLine(err.Error()))
		}
	}
	problem, err := r.separated(commit, h.Examination, rules.Policy)
	if err != nil {
		return h, err
	}
	if problem != "" {
		return refuse(refusal.DutyNotSeparated, refusal.DutyNotSeparated+": "+problem)
	}
	return h, nil
}

// gateView is the evidence the reader's judgments read, taken once.
func (r *Reader) gateView(tip oid.ID) (gitstore.View, error) {
	if r.gates == nil || r.gatesTip != tip {
		tx, err := gateView(r.st, tip)
		if err != nil {
			return nil, err
		}
		r.gates, r.gatesTip = tx, tip
	}
	return r.gates, nil
}

// separated is the rule that nobody certifies their own work (ownWork),
// applied to ex: by the worker it names, and, under a policy, by the key
// that signed it. It says why ex's examiner is the candidate's producer,
// or "".
func (r *Reader) separated(commit oid.ID, ex *Examination, policy *trust.Policy) (string, error) {
	var pub ssh.PublicKey
	if policy != nil {
		var err error
		if pub, err = ex.Signer(); err != nil {
			return "", err
		}
	}
	if pub == nil && ex.By == nil {
		return "", nil
	}
	m, err := r.st.CommitMeta(commit)
	if err != nil {
		return "", err
	}
	return ownWork(m, commit, ex.Feature, ex.By, pub, policy), nil
}
