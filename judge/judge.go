package judge

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/internal/text"
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
	// Records are the record tips read; zero fields read the local refs.
	Records Records
	// Now is when signatures are checked against validity windows.
	Now time.Time
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
	// Against and AgainstName echo the question.
	Against     oid.ID
	AgainstName string
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
	// (GateNotMet, CriterionAbandoned, UnsignedEvidence, SignerNotAllowed,
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

// Judge answers q from st. It fails (an error, never a judgment) when
// anything it must read cannot be read whole: the caller fails closed.
func Judge(st *gitstore.Store, q Question) (*Judgment, error) {
	j := &Judgment{Commit: q.Commit, Accepted: true, Against: q.Against, AgainstName: q.AgainstName, Features: []Feature{}}
	features, err := examine.Features(st, q.Commit)
	if err != nil {
		return nil, err
	}
	removed, err := removedContracts(st, q, features)
	if err != nil {
		return nil, err
	}
	policy, err := policyFor(st, q)
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
	duty := &dutyCheck{st: st, commit: q.Commit}
	for _, name := range features {
		f, err := judgeFeature(st, rd, q, name, policy, duty)
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

func reader(st *gitstore.Store, tip oid.ID) (*examine.Reader, error) {
	if tip.IsZero() {
		return examine.NewReader(st)
	}
	return examine.NewReaderAt(st, tip)
}

func judgeFeature(st *gitstore.Store, rd *examine.Reader, q Question, name string, policy *trust.Policy, duty *dutyCheck) (Feature, error) {
	f := Feature{Feature: name, Outcome: examine.None}
	cand, err := examine.Load(st, examine.Target{Feature: name, Candidate: q.Commit.String()})
	switch {
	case err == nil:
		f.Contract = cand.Contract
	case isRefusal(err):
		f.Problem = text.OneLine(err.Error())
	default:
		return f, err
	}
	sd, err := rd.Standing(q.Commit, name)
	if err != nil {
		return f, fmt.Errorf("read the examination of %s at %s: %w", name, q.Commit.Short(), err)
	}
	f.Outcome, f.Examination = sd.Outcome, sd.Examination
	if sd.Problem != "" && f.Problem == "" {
		f.Problem = "the examination does not hold up: " + sd.Problem
	}
	if f.Contract != nil {
		if f.Gates, err = examine.GateStatusAt(st, examine.Target{Feature: name, Candidate: q.Commit.String()}, q.Records.Gates); err != nil {
			return f, fmt.Errorf("read the gate evidence of %s at %s: %w", name, q.Commit.Short(), err)
		}
	}
	if f.Outcome != examine.Accepted || f.Problem != "" {
		return f, nil
	}
	refuse := func(name, problem string) (Feature, error) {
		f.Outcome, f.Refusal, f.Problem = examine.Invalid, name, problem
		return f, nil
	}
	if rule, problem := examine.Binding(f.Examination, f.Contract, f.Gates); rule != "" {
		return refuse(rule, rule+": "+problem)
	}
	if policy == nil {
		return f, nil
	}
	if err := f.Examination.SignedAsRequired(policy, q.Now); err != nil {
		r, _ := refusal.As(err)
		rule := refusal.SignatureInvalid
		if r != nil {
			rule = r.Name
		}
		return refuse(rule, text.OneLine(err.Error()))
	}
	if problem, err := duty.separated(f.Examination, policy); err != nil {
		return f, err
	} else if problem != "" {
		return refuse(refusal.DutyNotSeparated, refusal.DutyNotSeparated+": "+problem)
	}
	return f, nil
}

// removedContracts lists the features whose contracts Against holds (or,
// with no Against, a parent of Commit holds) and Commit does not:
// deleting or renaming a contract must not let a commit pass itself.
func removedContracts(st *gitstore.Store, q Question, now []string) ([]string, error) {
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

// policyFor is the signing policy in force: the server's own file, else
// the one committed at Against — never one from Commit, which could
// otherwise name its own signer.
func policyFor(st *gitstore.Store, q Question) (*trust.Policy, error) {
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
func PolicyAt(st *gitstore.Store, commit oid.ID, source string) (*trust.Policy, error) {
	tx, err := st.Tree(commit)
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

// dutyCheck is the rule that nobody certifies their own work, read once
// per commit: the candidate's signing key and its author's and
// committer's addresses.
type dutyCheck struct {
	st     *gitstore.Store
	commit oid.ID
	read   bool
	meta   gitstore.CommitMeta
	signer []byte // the candidate's verified SSH signing key, marshalled
}

func (d *dutyCheck) load() error {
	if d.read {
		return nil
	}
	m, err := d.st.CommitMeta(d.commit)
	if err != nil {
		return err
	}
	d.meta, d.read = m, true
	if m.Signature != nil {
		// A signature that does not hold names nobody: refusing on it
		// would let anyone block an acceptance by pasting a key.
		if pub, err := trust.CommitSigner(m.Payload, m.Signature); err == nil && pub != nil {
			d.signer = pub.Marshal()
		}
	}
	return nil
}

// separated says why ex's signer is the candidate's producer, or "".
func (d *dutyCheck) separated(ex *examine.Examination, policy *trust.Policy) (string, error) {
	pub, err := ex.Signer()
	if err != nil || pub == nil {
		return "", err
	}
	if err := d.load(); err != nil {
		return "", err
	}
	if d.signer != nil && bytes.Equal(d.signer, pub.Marshal()) {
		return fmt.Sprintf("the examination of %s is signed by %s, the key that signed the candidate commit %s: nobody certifies their own work",
			ex.Feature, trust.Fingerprint(pub), d.commit.Short()), nil
	}
	emails := d.meta.Emails()
	for _, id := range policy.Identities(pub) {
		for _, e := range emails {
			if id == e {
				return fmt.Sprintf("the examination of %s is signed by %s, which %s names as %s, the candidate commit's author or committer: nobody certifies their own work",
					ex.Feature, trust.Fingerprint(pub), policy.Source, id), nil
			}
		}
	}
	return "", nil
}

func isRefusal(err error) bool {
	var r *refusal.Error
	return errors.As(err, &r) && r.Class == refusal.Refused
}

// Unaccepted names the features that keep the commit from being accepted.
func (j *Judgment) Unaccepted() []string {
	var out []string
	for _, f := range j.Features {
		if !f.OK() {
			out = append(out, f.Feature)
		}
	}
	return out
}

// String is a one-line account, for logs and tests.
func (j *Judgment) String() string {
	if j.Accepted {
		return "accepted"
	}
	return "not accepted: " + strings.Join(j.Unaccepted(), ", ")
}
