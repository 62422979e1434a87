package examine

import (
	"fmt"
	"strings"
	"unicode"

	"golang.org/x/crypto/ssh"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/internal/lazyre"
	"github.com/nwdes/nwdes/internal/names"
	"github.com/nwdes/nwdes/trust"
)

// ExaminedBy names the examiner of an examination a swarm worker made
// (examination v6): the worker, the git identity its description gives
// it, and the job whose journal was replayed (label/attempt-nonce). An
// examination a person closes names none: the person is whoever signs it.
type ExaminedBy struct {
	Worker   string `json:"worker"`
	Identity string `json:"identity"`
	Job      string `json:"job"`
}

var (
	byJob = lazyre.New(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}/[1-9][0-9]{0,5}-[0-9a-f]{16}$`)
)

// problem says what is wrong with the examiner's fields, or "".
func (b *ExaminedBy) problem() string {
	switch {
	case !names.Valid(b.Worker, 64):
		return fmt.Sprintf("worker %q is not a worker name", b.Worker)
	case !byJob.MatchString(b.Job) || strings.Contains(b.Job, ".."):
		return fmt.Sprintf("job %q is not <label>/<attempt>-<nonce>", b.Job)
	case len(b.Identity) > 256 || strings.IndexFunc(b.Identity, unicode.IsControl) >= 0 || identityEmail(b.Identity) == "":
		return fmt.Sprintf("identity %q is not \"Name <email>\"", b.Identity)
	}
	return ""
}

// Email is the examiner's address, lower-cased, as a commit's author or
// committer would carry it.
func (b *ExaminedBy) Email() string { return identityEmail(b.Identity) }

func identityEmail(id string) string {
	_, rest, ok := strings.Cut(id, "<")
	email, _, ok2 := strings.Cut(rest, ">")
	if !ok || !ok2 || strings.TrimSpace(email) == "" || strings.ContainsAny(email, " <>") {
		return ""
	}
	return strings.ToLower(email)
}

// OwnWork applies the rule that nobody certifies their own work to an
// examiner who has not examined yet (a swarm worker about to take an
// examine card, or whose journal is about to be replayed): why an
// examination of feature at commit by by (and, when key is not nil,
// signed by key) would be its producer's, or "". producers are the
// workers known to have made commit (the swarm's job records whose
// harvested head it is), which the commit itself may not name. It is
// the rule the judgment applies to a published examination
// (Reader.Holds, DutyNotSeparated), asked earlier.
func OwnWork(st gitstore.CommitReader, commit oid.ID, feature string, by *ExaminedBy, key ssh.PublicKey, producers []ExaminedBy) (string, error) {
	if by != nil {
		for _, p := range producers {
			if p.Worker == by.Worker || p.Email() != "" && p.Email() == by.Email() {
				return fmt.Sprintf("the examination of %s would be by worker %s, which produced the candidate %s (job %s): nobody certifies their own work",
					feature, by.Worker, commit.Short(), p.Job), nil
			}
		}
	}
	m, err := st.CommitMeta(commit)
	if err != nil {
		return "", err
	}
	return ownWork(m, commit, feature, by, key, nil), nil
}

// ownWork is the rule that nobody certifies their own work: it says why
// the examiner is the candidate's producer — the worker the examination
// names has the identity of the commit's author or committer; the key
// that signed it signed the candidate commit; or a key the policy names
// as the commit's author or committer — or "".
func ownWork(m gitstore.CommitMeta, commit oid.ID, feature string, by *ExaminedBy, pub ssh.PublicKey, policy *trust.Policy) string {
	if by != nil && by.Email() != "" {
		for _, e := range m.Emails() {
			if e == by.Email() {
				return fmt.Sprintf("the examination of %s is by worker %s (%s), the candidate commit %s's author or committer: nobody certifies their own work",
					feature, by.Worker, by.Identity, commit.Short())
			}
		}
	}
	if pub == nil {
		return ""
	}
	if m.Signature != nil {
		// A signature that does not hold names nobody: refusing on it
		// would let anyone block an acceptance by pasting a key.
		if k, err := trust.CommitSigner(m.Payload, m.Signature); err == nil && k != nil && string(k.Marshal()) == string(pub.Marshal()) {
			return fmt.Sprintf("the examination of %s is signed by %s, the key that signed the candidate commit %s: nobody certifies their own work",
				feature, trust.Fingerprint(pub), commit.Short())
		}
	}
	if policy == nil {
		return ""
	}
	for _, id := range policy.Identities(pub) {
		for _, e := range m.Emails() {
			if id == e {
				return fmt.Sprintf("the examination of %s is signed by %s, which %s names as %s, the candidate commit's author or committer: nobody certifies their own work",
					feature, trust.Fingerprint(pub), policy.Source, id)
			}
		}
	}
	return ""
}
