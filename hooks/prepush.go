package hooks

import (
	"bufio"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/internal/boundedio"
	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/judge"
	"github.com/nwdes/nwdes/refusal"
	"github.com/nwdes/nwdes/trust"
)

// Update is one line of git's pre-push protocol:
//
//	<local ref> SP <local object name> SP <remote ref> SP <remote object name> LF
//
// The local ref is as the user typed it (HEAD~1, a tag, "(delete)"); an
// object name is 40 hexadecimal digits, or 64 in a SHA-256 repository, all
// zeros for a deletion (local) or a ref the remote lacks (remote).
type Update struct {
	LocalRef  string `json:"local_ref"`
	LocalOID  string `json:"local_oid"`
	RemoteRef string `json:"remote_ref"`
	RemoteOID string `json:"remote_oid"`
}

// Delete reports whether the update deletes the remote ref.
func (u Update) Delete() bool { return isZeroOID(u.LocalOID) }

func isZeroOID(s string) bool { return strings.Trim(s, "0") == "" }

func isOID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// ParseUpdates reads git's pre-push input. Empty input (a push with nothing
// to update) gives no updates. A line that does not follow the protocol is
// refused, so a check never runs on input it half understood.
func ParseUpdates(r io.Reader) ([]Update, error) {
	var out []Update
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSuffix(sc.Text(), "\r")
		if line == "" {
			continue
		}
		// The last three fields are fixed; the local ref, as typed, is
		// whatever comes before them (a revision such as ":/fix it" may
		// hold spaces).
		f := strings.Split(line, " ")
		if len(f) > 4 {
			f = append([]string{strings.Join(f[:len(f)-3], " ")}, f[len(f)-3:]...)
		}
		if len(f) != 4 || f[0] == "" || !isOID(f[1]) || !strings.HasPrefix(f[2], "refs/") || !isOID(f[3]) || len(f[1]) != len(f[3]) {
			return nil, refusal.NewUnreadable(refusal.InputUnreadable,
				"run the hook only from git push, which writes \"<local ref> <local oid> <remote ref> <remote oid>\" lines",
				"pre-push input line %d is not \"<local ref> <local oid> <remote ref> <remote oid>\": %q", n, text.Truncate(line, 120))
		}
		out = append(out, Update{LocalRef: f[0], LocalOID: f[1], RemoteRef: f[2], RemoteOID: f[3]})
	}
	if err := sc.Err(); err != nil {
		return nil, refusal.NewUnreadable(refusal.InputUnreadable, "run the hook only from git push", "read pre-push input: %v", err)
	}
	return out, nil
}

// DefaultProtect are the refs protected when nwdes.protect is not set.
var DefaultProtect = []string{"refs/heads/main", "refs/heads/master"}

// Policy says which remote refs a push may move only to an accepted commit.
type Policy struct {
	// Protect holds full ref names or path.Match patterns ("*" stays within
	// one path component), from git config nwdes.protect or DefaultProtect.
	Protect []string
	// AllowedSigners, from git config nwdes.allowedSignersFile, is a
	// signing policy file kept on the server (outside every branch): when
	// set it applies to every protected branch, in place of the policy a
	// branch holds.
	AllowedSigners string
	// Now is the clock signatures are verified at (validity windows of
	// the policy); time.Now when nil.
	Now func() time.Time
	// Gates is git config nwdes.gates where the hook runs: advisory lets
	// an examination closed with advisory gates stand.
	Gates examine.GatesMode
	// Proof is git config nwdes.gates.proof where the hook runs:
	// required refuses a met verdict on an oracle that is not proven.
	Proof examine.ProofMode
	// Records is git config nwdes.push.records: whether the pre-push hook
	// sends the records before the branch (SendRecords).
	Records RecordsMode
}

func (p Policy) now() time.Time {
	if p.Now == nil {
		return time.Now()
	}
	return p.Now()
}

// PolicyFrom reads nwdes.protect (multi-valued) from cfg. A value that does
// not start with refs/ names a branch (main means refs/heads/main). Setting
// it replaces the defaults; the single value "none" protects nothing. An
// empty or malformed value is refused, so a typo never silently protects
// nothing.
func PolicyFrom(cfg *gitrepo.Config) (Policy, error) {
	vals := cfg.GetAll("nwdes.protect")
	p := Policy{Protect: append([]string(nil), DefaultProtect...)}
	if len(vals) > 0 {
		var err error
		if p, err = policyOf(vals); err != nil {
			return p, err
		}
	}
	if f, ok := cfg.Get("nwdes.allowedSignersFile"); ok {
		if !filepath.IsAbs(f) {
			return Policy{}, refusal.New(refusal.ConfigurationMalformed,
				"set it to the absolute path of an allowed-signers file on the server, or unset it",
				"git config nwdes.allowedSignersFile %q is not an absolute path", f)
		}
		p.AllowedSigners = f
	}
	v, set := cfg.Get("nwdes.gates")
	gates, err := examine.ParseGatesMode(strings.TrimSpace(v), set)
	if err != nil {
		return Policy{}, err
	}
	p.Gates = gates
	v, set = cfg.Get("nwdes.gates.proof")
	if p.Proof, err = examine.ParseProofMode(strings.TrimSpace(v), set); err != nil {
		return Policy{}, err
	}
	v, set = cfg.Get("nwdes.push.records")
	if p.Records, err = ParseRecordsMode(strings.TrimSpace(v), set); err != nil {
		return Policy{}, err
	}
	return p, nil
}

func policyOf(vals []string) (Policy, error) {
	var p Policy
	for _, v := range vals {
		v = strings.TrimSpace(v)
		if v == "none" && len(vals) == 1 {
			// The one explicit way to protect nothing.
			return Policy{Protect: []string{}}, nil
		}
		if v == "" {
			return Policy{}, refusal.New(refusal.ConfigurationMalformed,
				"set a branch or pattern with git config nwdes.protect PATTERN, or the single value none to protect nothing",
				"git config nwdes.protect has an empty value")
		}
		if !strings.HasPrefix(v, "refs/") {
			v = "refs/heads/" + v
		}
		if _, err := path.Match(v, "refs/heads/x"); err != nil {
			return Policy{}, refusal.New(refusal.ConfigurationMalformed,
				"fix it with git config --replace-all nwdes.protect PATTERN (see docs/hooks.md)",
				"git config nwdes.protect %q is not a valid pattern", v)
		}
		p.Protect = append(p.Protect, v)
	}
	return p, nil
}

// Protected reports whether pushing to ref needs acceptance. nwdes's own
// refs and notes never do: they carry the verdicts, they are not judged.
func (p Policy) Protected(ref string) bool {
	if strings.HasPrefix(ref, "refs/nwdes/") || strings.HasPrefix(ref, "refs/notes/") || strings.HasPrefix(ref, gitstore.TrackingPrefix) {
		return false
	}
	for _, pat := range p.Protect {
		if ok, _ := path.Match(pat, ref); ok {
			return true
		}
	}
	return false
}

// Verdict is the check's judgment of one pushed ref.
type Verdict string

const (
	// Pass: not protected, a deletion, or nothing to examine.
	Pass Verdict = "pass"
	// Accepted: every feature with a contract has an accepted examination.
	Accepted Verdict = "accepted"
	// Refused: some feature lacks an accepted examination.
	Refused Verdict = "refused"
)

// FeatureResult is one feature's standing at the pushed commit.
type FeatureResult struct {
	Feature string          `json:"feature"`
	Outcome examine.Outcome `json:"outcome"`
	// Record is the examination's path in refs/nwdes/examine ("" if none).
	Record string `json:"record,omitempty"`
	// Problem says why an invalid examination does not hold up.
	Problem string `json:"problem,omitempty"`
	// Refusal names the rule that refused it (GateNotMet, …), if any.
	Refusal string `json:"refusal,omitempty"`
}

// RefResult is the check of one update.
type RefResult struct {
	Update  Update  `json:"update"`
	Verdict Verdict `json:"verdict"`
	// Why a passed ref was not examined: "deletion", "not protected",
	// "no feature contracts".
	Why string `json:"why,omitempty"`
	// Commit is the pushed commit (tags peeled), for a checked ref.
	Commit   string          `json:"commit,omitempty"`
	Features []FeatureResult `json:"features,omitempty"`
	// Notes say how the server judged the ref, one sentence each: the ref
	// a symbolic name moves, the branch a new one is judged against.
	Notes []string `json:"notes,omitempty"`
}

// Report is the whole check; OK when no ref is refused.
type Report struct {
	Refs []RefResult `json:"refs"`
}

// OK reports whether the push may proceed.
func (r *Report) OK() bool {
	for _, x := range r.Refs {
		if x.Verdict == Refused {
			return false
		}
	}
	return true
}

// NeedsStore reports whether any update must be checked against the
// records; when none does, the store need not even be opened.
func NeedsStore(p Policy, updates []Update) bool {
	for _, u := range updates {
		if !u.Delete() && p.Protected(u.RemoteRef) {
			return true
		}
	}
	return false
}

// Check judges each update. For a protected ref that is not deleted, the
// pushed commit (an annotated tag is peeled to it) must carry an accepted
// published examination of every feature whose contract exists at
// .nwave/features/<feature>.md in that commit's tree. It reads only that
// commit's tree and the newest examination of each feature at that commit:
// no history walk. open is called once, and only if some ref needs the
// records; any failure to read them fails closed with StoreUnreadable.
func Check(open func() (*gitstore.Store, error), p Policy, updates []Update) (*Report, error) {
	return check(open, p, updates, judge.Records{})
}

func check(open func() (*gitstore.Store, error), p Policy, updates []Update, records judge.Records) (*Report, error) {
	rep := &Report{Refs: []RefResult{}}
	var st *gitstore.Store
	var serverPolicy *trust.Policy
	for _, u := range updates {
		res := RefResult{Update: u, Verdict: Pass}
		switch {
		case u.Delete():
			res.Why = "deletion"
		case !p.Protected(u.RemoteRef):
			res.Why = "not protected"
		default:
			if st == nil {
				var err error
				if st, err = open(); err != nil {
					return nil, unreadable(u, err)
				}
				if serverPolicy, err = p.serverPolicy(); err != nil {
					return nil, err
				}
			}
			if err := judgeRef(st, p, serverPolicy, records, &res); err != nil {
				return nil, err
			}
		}
		rep.Refs = append(rep.Refs, res)
	}
	return rep, nil
}

// judgeRef asks the one judgment about one update: the pushed commit, for
// the remote ref, against the remote's tip (its contracts and its signing
// policy), with the server's own policy file when it has one.
func judgeRef(st judge.Store, p Policy, serverPolicy *trust.Policy, records judge.Records, res *RefResult) error {
	u := res.Update
	if !isOID(u.LocalOID) {
		return unreadable(u, fmt.Errorf("%q is not an object name", u.LocalOID))
	}
	commit, err := st.Resolve(u.LocalOID)
	if err != nil {
		return unreadable(u, err)
	}
	res.Commit = commit.String()
	q := judge.Question{Commit: commit, Ref: u.RemoteRef, ServerPolicy: serverPolicy, Records: records, Now: p.now(), Gates: p.Gates, Proof: p.Proof}
	if !isZeroOID(u.RemoteOID) {
		if q.Against, err = st.Resolve(u.RemoteOID); err != nil {
			return unreadable(u, fmt.Errorf("the remote's tip %s of %s is not in this clone, so the contracts and signing policy it holds cannot be read (git fetch, then push again): %w", text.Short(u.RemoteOID), u.RemoteRef, err))
		}
		q.AgainstName = u.RemoteRef
	}
	j, err := judge.Judge(st, q)
	if err != nil {
		return unreadable(u, err)
	}
	if len(j.Features) == 0 {
		res.Verdict, res.Why = Pass, "no feature contracts"
		return nil
	}
	res.Verdict = Accepted
	if !j.Accepted {
		res.Verdict = Refused
	}
	for _, f := range j.Features {
		fr := FeatureResult{Feature: f.Feature, Outcome: f.Outcome, Problem: f.Problem, Refusal: f.Refusal}
		if f.Examination != nil {
			fr.Record = f.Examination.Path
		}
		res.Features = append(res.Features, fr)
	}
	return nil
}

// serverPolicy reads the signing policy file git config
// nwdes.allowedSignersFile names (a server's own, outside every branch),
// nil when none is set; a policy that cannot be read or does not parse
// refuses.
func (p Policy) serverPolicy() (*trust.Policy, error) {
	if p.AllowedSigners == "" {
		return nil, nil
	}
	b, err := boundedio.ReadFile(p.AllowedSigners, boundedio.Limit{Bytes: trust.MaxPolicyBytes, Of: "a signing policy", Remedy: "keep one line per feature pattern and key"})
	if err != nil {
		return nil, refusal.New(refusal.ConfigurationMalformed, "make the file readable, or unset git config nwdes.allowedSignersFile",
			"git config nwdes.allowedSignersFile %s: %v", p.AllowedSigners, err)
	}
	return trust.ParsePolicy("git config nwdes.allowedSignersFile ("+p.AllowedSigners+")", b)
}

// unreadable is the fail-closed refusal: the records could not be read, so
// the push is stopped rather than let through unchecked.
func unreadable(u Update, err error) error {
	return FailClosed(fmt.Sprintf("the push to %s (%s)", u.RemoteRef, text.Short(u.LocalOID)), err)
}

// FailClosed is the hook's refusal when it cannot even run its check (the
// repository, its configuration or its records unreadable): the push stops
// either way. A malformed configuration keeps its own refusal.
func FailClosed(subject string, err error) error {
	r, isRefusal := refusal.As(err)
	if isRefusal && r.Name == refusal.ConfigurationMalformed {
		return err
	}
	detail := err.Error()
	remedy := "run git nwdes fsck to find what is damaged"
	if isRefusal {
		detail = r.Name + ": " + r.Detail
		if r.Name == refusal.ObjectMissing {
			// An object of the commit pushed (its contract, say) is
			// not a record: fsck does not look for it, and the missing
			// object's own remedy says what was tried and what to run.
			remedy = r.Remedy
		}
	}
	return refusal.NewUnreadable(refusal.StoreUnreadable,
		remedy+"; the push stays refused until the check can read the records (git push --no-verify skips it, and CI re-validates)",
		"cannot check %s: %s", subject, detail).Wrap(err)
}

// Explain renders a refused ref for the person pushing: the commit, each
// feature and its outcome ("not examined" when there is none), then the
// remedy.
func Explain(r RefResult) string {
	return explain(r, false, " git push --no-verify skips this check; CI re-validates.")
}

// ExplainOnServer is Explain for the server's refusal, which no client
// option skips; a refused update of nwdes's records says why in one line.
func ExplainOnServer(r RefResult) string {
	if r.Commit == "" {
		return fmt.Sprintf("nwdes: refusing %s: %s\n", r.Update.RemoteRef, r.Why)
	}
	return explain(r, true, "")
}

// serverRecords is what a server's refusal adds to its remedy: it judges
// the records it holds, which may be older than the pusher's.
const serverRecords = " This server judges the records it holds: if your clone's records say otherwise, send them first (git nwdes push REMOTE; nwdes's pre-push hook sends them itself before the branch unless git config nwdes.push.records=manual), then push the branch again."

func explain(r RefResult, server bool, skip string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "nwdes: push to %s refused: commit %s is not accepted\n", r.Update.RemoteRef, r.Commit)
	var missing []string
	for _, f := range r.Features {
		switch f.Outcome {
		case examine.Accepted:
			fmt.Fprintf(&b, "  %s: accepted\n", f.Feature)
		case examine.None:
			fmt.Fprintf(&b, "  %s: not examined\n", f.Feature)
			missing = append(missing, f.Feature)
		case examine.Invalid:
			if f.Record == "" {
				fmt.Fprintf(&b, "  %s: %s\n", f.Feature, f.Problem)
			} else {
				fmt.Fprintf(&b, "  %s: invalid examination (%s): %s\n", f.Feature, f.Record, f.Problem)
			}
			missing = append(missing, f.Feature)
		default:
			fmt.Fprintf(&b, "  %s: %s (%s)\n", f.Feature, f.Outcome, f.Record)
			missing = append(missing, f.Feature)
		}
	}
	if server {
		skip = serverRecords + skip
	}
	if r := remedyFor(r.Features); r != "" {
		fmt.Fprintf(&b, "remedy: %s%s\n", r, skip)
		return b.String()
	}
	fmt.Fprintf(&b, "remedy: examine %s at this commit until accepted (git nwdes examine open --feature %s --candidate %s …; git nwdes status --commit %s shows where it stands), then push again. A commit rewritten by amend or rebase is a new candidate and needs its own examination.%s\n",
		strings.Join(missing, ", "), missing[0], text.Short(r.Commit), text.Short(r.Commit), skip)
	return b.String()
}

// remedyFor is the remedy when every refused feature was refused by a rule
// an examination cannot fix by being examined again (all one rule), or ""
// for the general remedy.
func remedyFor(features []FeatureResult) string {
	rule := ""
	for _, f := range features {
		if f.Outcome == examine.Accepted {
			continue
		}
		if f.Refusal == "" || rule != "" && f.Refusal != rule {
			return ""
		}
		rule = f.Refusal
	}
	switch rule {
	case refusal.GateNotMet:
		return "run the oracles at this commit until they are MET (git nwdes gate run --feature F --candidate <commit>), or have the examiner judge those expectations unmet; then push again."
	case refusal.GateVacuous, refusal.GateUnproven:
		return "nwdes.gates.proof=required: run the oracles at this commit with --base (git nwdes gate run --feature F --candidate <commit> --base <the commit the change started from>) so that each is seen NOT-MET there and MET here; an oracle that passes at the base too must be made to test the change, or the expectation judged unmet. Then push again."
	case refusal.CriterionAbandoned:
		return "an abandoned criterion is never met: a person decides whether to drop it from the contract or to bring it back, and the feature is examined again."
	case refusal.UnsignedEvidence, refusal.SignerNotAllowed, refusal.SignatureInvalid:
		return "close the examination again with --sign, by a key the signing policy allows for the feature (docs/trust.md), then push again."
	case refusal.DutyNotSeparated:
		return "have someone other than the candidate's author examine it and sign the examination (docs/trust.md), then push again."
	case refusal.ContractRemoved:
		return "restore the contract; retire a feature by marking its criteria ABANDON, never by deleting its contract."
	}
	return ""
}

// Summary renders a ref that passed a check, one line.
func Summary(r RefResult) string {
	var names []string
	for _, f := range r.Features {
		names = append(names, f.Feature)
	}
	return fmt.Sprintf("nwdes: push to %s: commit %s accepted (%s)\n", r.Update.RemoteRef, text.Short(r.Commit), strings.Join(names, ", "))
}
