package judge

import (
	"fmt"
	"time"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/refusal"
	"github.com/nwdes/nwdes/trust"
)

// Question is everything one judgment depends on, named. Two surfaces
// asked the same Question give the same Judgment: that is the whole point
// of this package.
type Question struct {
	// Commit is the commit judged.
	Commit oid.ID
	// Ref is the ref the commit is judged for (refs/heads/main), "" when
	// none is named; it appears in messages only.
	Ref string
	// Against is the protected branch's tip before the change: every
	// contract it holds must still be in Commit, and the signing policy it
	// commits applies. Zero when there is none (a new branch, or status
	// asked without --against): then Commit's parents' contracts must
	// still be there, and only ServerPolicy can apply.
	Against oid.ID
	// AgainstName names Against in messages (refs/remotes/origin/main).
	AgainstName string
	// ServerPolicy, when set, is the signing policy in force in place of
	// the one committed at Against (a server's nwdes.allowedSignersFile).
	ServerPolicy *trust.Policy
	// RequireSigned refuses to judge (MissingFact) when no signing policy
	// is in force: status --require-signed.
	RequireSigned bool
	// Records are the record tips read. A zero field reads the local ref,
	// whose history is checked first (gitstore.CheckHistory: nothing
	// published was dropped or changed since the tip this clone last
	// verified; HistoryRewritten refuses). A tip given is the caller's to
	// have checked: the server checks the pushed history from its own tip.
	Records Records
	// Now is when signatures are checked against validity windows.
	Now time.Time
	// Gates is the judging side's nwdes.gates: advisory lets an
	// examination closed with advisory gates stand where its oracles are
	// not MET; the examiner's own setting alone never does.
	Gates examine.GatesMode
	// Proof is the judging side's nwdes.gates.proof: required refuses a
	// met verdict on an oracle that is vacuous or unproven; the
	// examiner's or the candidate's own setting never sets or lifts it.
	Proof examine.ProofMode
}

// Records names the tips of the record refs a judgment reads: a server
// judges the records pushed alongside a branch, before the refs move.
type Records struct {
	Examine oid.ID
	Gates   oid.ID
}

// Judgment is the answer. Accepted is true only when every feature with a
// contract at Commit is accepted and no contract Against held is gone.
type Judgment struct {
	Commit   oid.ID
	Accepted bool
	// Policy names the signing policy applied, "" when none.
	Policy string
	// Features are the features with a contract at Commit, by name, then
	// the features whose contract was removed.
	Features []Feature
}

// Feature is one feature's judgment.
type Feature struct {
	Feature string
	// Outcome is examine.Accepted only when the examination holds up in
	// every respect; examine.Invalid when the record exists but does not
	// (Problem says why, Refusal names the rule); otherwise the record's
	// own outcome, or examine.None.
	Outcome examine.Outcome
	// Refusal names the rule that refused an otherwise accepted record
	// (GateNotMet, GateVacuous, GateUnproven, CriterionAbandoned, UnsignedEvidence, SignerNotAllowed,
	// SignatureInvalid, DutyNotSeparated, ContractRemoved), "" otherwise.
	Refusal string
	Problem string
	// Removed: the contract Against held is gone from Commit.
	Removed bool
	// Examination is the newest published examination at Commit, nil
	// when none.
	Examination *examine.Examination
	// Contract is the contract at Commit, nil when it does not parse (then
	// Problem says why) or was removed.
	Contract *examine.Contract
	// Gates is the oracles' state at Commit, nil without a contract.
	Gates *examine.GateReport
}

// OK reports whether the feature is accepted.
func (f *Feature) OK() bool { return f.Outcome == examine.Accepted && f.Problem == "" }

// Store is what a judgment reads: the published records with their
// history checked, the candidate's contracts, policy and identities, and
// its parents (whose contracts it must not drop). The git store plays it.
type Store interface {
	examine.Reading
	gitstore.Ancestry
}

// Judge answers q from st. It fails (an error, never a judgment) when
// anything it must read cannot be read whole: the caller fails closed.
func Judge(st Store, q Question) (*Judgment, error) {
	j := &Judgment{Commit: q.Commit, Accepted: true, Features: []Feature{}}
	features, err := examine.Features(st, q.Commit)
	if err != nil {
		return nil, err
	}
	removed, err := removedContracts(st, q, features)
	if err != nil {
		return nil, err
	}
	policy, err := PolicyFor(st, q)
	if err != nil {
		return nil, err
	}
	if policy != nil {
		j.Policy = policy.Source
	}
	rd, err := reader(st, q.Records.Examine)
	if err != nil {
		return nil, err
	}
	for _, name := range features {
		f, err := judgeFeature(rd, q, name, policy)
		if err != nil {
			return nil, err
		}
		j.Features = append(j.Features, f)
	}
	for _, name := range removed {
		j.Features = append(j.Features, Feature{Feature: name, Outcome: examine.Invalid, Removed: true, Refusal: refusal.ContractRemoved,
			Problem: fmt.Sprintf("%s: its contract %s, at %s, is gone from this commit; a feature is retired by marking its criteria ABANDON and examining that, never by deleting its contract",
				refusal.ContractRemoved, examine.DefaultContractPath(name), againstLabel(q))})
	}
	for i := range j.Features {
		if !j.Features[i].OK() {
			j.Accepted = false
		}
	}
	return j, nil
}

func againstLabel(q Question) string {
	if q.Against.IsZero() {
		return "a parent of the commit"
	}
	if q.AgainstName != "" {
		return fmt.Sprintf("%s (%s)", q.AgainstName, q.Against.Short())
	}
	return q.Against.Short()
}

func reader(st examine.Reading, tip oid.ID) (*examine.Reader, error) {
	if tip.IsZero() {
		return examine.NewVerifiedReader(st)
	}
	return examine.NewReaderAt(st, tip)
}

func judgeFeature(rd *examine.Reader, q Question, name string, policy *trust.Policy) (Feature, error) {
	h, err := rd.Holds(q.Commit, name, rulesWith(q, policy))
	if err != nil {
		return Feature{}, err
	}
	f := Feature{Feature: name, Outcome: h.Outcome, Refusal: h.Refusal, Problem: h.ContractProblem,
		Examination: h.Examination, Contract: h.Contract, Gates: h.Gates}
	if h.Problem != "" && f.Problem == "" {
		f.Problem = h.Problem
	}
	return f, nil
}

// removedContracts lists the features whose contracts Against holds (or,
// with no Against, a parent of Commit holds) and Commit does not:
// deleting or renaming a contract must not let a commit pass itself.
func removedContracts(st Store, q Question, now []string) ([]string, error) {
	var sources []oid.ID
	if !q.Against.IsZero() {
		sources = []oid.ID{q.Against}
	} else {
		parents, _, err := st.Parents(q.Commit)
		if err != nil {
			return nil, err
		}
		sources = parents
	}
	has := map[string]bool{}
	for _, f := range now {
		has[f] = true
	}
	var out []string
	for _, src := range sources {
		before, err := examine.Features(st, src)
		if err != nil {
			return nil, fmt.Errorf("list the contracts at %s: %w", src.Short(), err)
		}
		for _, f := range before {
			if !has[f] {
				has[f] = true
				out = append(out, f)
			}
		}
	}
	return out, nil
}

// RulesFor are the rules an examination is held to when q is asked: the
// signing policy in force (PolicyFor), the judging side's gates and proof
// settings, and q.Now. Judge holds every feature to them, and verify the
// examination it weighs, so that an examination stands or falls by one
// rule set on every surface.
func RulesFor(st gitstore.CommitReader, q Question) (examine.Rules, error) {
	policy, err := PolicyFor(st, q)
	if err != nil {
		return examine.Rules{}, err
	}
	return rulesWith(q, policy), nil
}

func rulesWith(q Question, policy *trust.Policy) examine.Rules {
	return examine.Rules{GatesTip: q.Records.Gates, Policy: policy, Now: q.Now, AllowAdvisory: q.Gates == examine.GatesAdvisory, Proof: q.Proof}
}

// PolicyFor is the signing policy in force: the server's own file, else
// the one committed at Against — never one from Commit, which could
// otherwise name its own signer.
func PolicyFor(st gitstore.CommitReader, q Question) (*trust.Policy, error) {
	policy := q.ServerPolicy
	if policy == nil && !q.Against.IsZero() {
		var err error
		if policy, err = PolicyAt(st, q.Against, fmt.Sprintf("%s at %s", trust.PolicyPath, againstLabel(q))); err != nil {
			return nil, err
		}
	}
	if policy == nil && q.RequireSigned {
		where := "no --against was given"
		if !q.Against.IsZero() {
			where = fmt.Sprintf("%s has no %s", againstLabel(q), trust.PolicyPath)
		}
		return nil, refusal.New(refusal.MissingFact, "commit a policy on the protected branch first (git nwdes trust add), or drop --require-signed",
			"a signature is required, but no signing policy is in force: %s", where)
	}
	return policy, nil
}

// PolicyAt reads the signing policy committed at commit (nil when there is
// none). Only a regular file is a policy: a directory, a symbolic link or
// a submodule in its place is refused, never read as "no policy".
func PolicyAt(st gitstore.CommitReader, commit oid.ID, source string) (*trust.Policy, error) {
	tx, err := st.Files(commit)
	if err != nil {
		return nil, err
	}
	e, found, err := tx.Lookup(trust.PolicyPath)
	if err != nil || !found {
		return nil, err
	}
	if e.Mode != gitstore.ModeFile && e.Mode != gitstore.ModeExec {
		return nil, refusal.New(refusal.ConfigurationMalformed, "commit the policy as a plain file",
			"%s is not a regular file (mode %o)", source, e.Mode)
	}
	b, err := st.ReadBlob(e.Hash)
	if err != nil {
		return nil, err
	}
	return trust.ParsePolicy(source, b)
}
