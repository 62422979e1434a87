package trust

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/nwdes/nwdes/refusal"
)

// PolicyPath is where a repository's signing policy lives, committed on
// the protected branch: which keys may sign the examinations of which
// features.
const PolicyPath = ".nwave/trust/allowed_signers"

// The most nwdes reads of a file it is named rather than one it stores (a
// committed policy is bounded as every record is): a signing policy in a
// work tree or named by git config nwdes.allowedSignersFile, and an SSH
// key file (user.signingKey, trust add --key). Over them a read is refused
// (InputTooLarge), never held whole.
const (
	MaxPolicyBytes  = 1 << 20
	MaxKeyFileBytes = 64 << 10
)

// A Policy is git's allowed-signers file (ssh-keygen(1), ALLOWED SIGNERS)
// whose principals are feature names: each line is
//
//	<feature patterns> [options] <key type> <base64 key> [comment]
//
// where the patterns are a comma-separated list of names with * and ?
// wildcards and ! negation, as ssh matches principals. So
// `ssh-keygen -Y verify -f allowed_signers -I <feature> -n nwdes-evidence`
// answers exactly what Allows answers (the differential tests hold the two
// together). A word identity=<email> in a line's comment (which ssh-keygen
// ignores) says whose key it is, so that a candidate's author can be told
// from its examiner (Identities). Options: namespaces="…" (the line counts only if it lists
// nwdes-evidence), valid-after= and valid-before= (checked against the
// time the examination says it was closed). Anything else (cert-authority,
// an unknown option) is refused: the policy is not guessed at.
type Policy struct {
	// Source names where the policy was read, for messages.
	Source  string
	entries []policyEntry
}

type policyEntry struct {
	line        int
	patterns    []string
	namespaces  []string // nil: any
	key         ssh.PublicKey
	validAfter  time.Time
	validBefore time.Time
	identities  []string
}

// ParsePolicy reads an allowed-signers file; a line it cannot read is
// refused (ConfigurationMalformed naming source:line), never skipped.
func ParsePolicy(source string, b []byte) (*Policy, error) {
	p := &Policy{Source: source}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		e, err := parseEntry(line)
		if err != nil {
			return nil, refusal.New(refusal.ConfigurationMalformed,
				"fix the line (ssh-keygen(1), ALLOWED SIGNERS: feature patterns, options, key type, key)",
				"%s:%d: %v", source, n, err)
		}
		e.line = n
		p.entries = append(p.entries, e)
	}
	if err := sc.Err(); err != nil {
		return nil, refusal.New(refusal.ConfigurationMalformed, "keep the file's lines under 1 MiB", "%s: %v", source, err)
	}
	return p, nil
}

func parseEntry(line string) (policyEntry, error) {
	var e policyEntry
	principals, rest := field(line)
	// A quoted principals field is one string, its quotes not part of
	// any pattern (as ssh reads it).
	principals = strings.ReplaceAll(principals, `"`, "")
	if principals == "" {
		return e, fmt.Errorf("no feature patterns")
	}
	e.patterns = strings.Split(principals, ",")
	// Options come before the key type when the next field is not a key.
	if next, after := field(rest); next != "" && !isKeyType(next) {
		if err := e.options(next); err != nil {
			return e, err
		}
		rest = after
	}
	key, comment, _, _, err := ssh.ParseAuthorizedKey([]byte(rest))
	if err != nil {
		return e, fmt.Errorf("no public key: %v", err)
	}
	e.key = key
	// ssh-keygen ignores the comment; nwdes reads identity=<email> words
	// in it, naming whose key this is (for DutyNotSeparated).
	for _, w := range strings.Fields(comment) {
		if id, ok := strings.CutPrefix(w, "identity="); ok {
			id = strings.ToLower(strings.Trim(id, `"`))
			if id == "" || !strings.Contains(id, "@") || strings.ContainsAny(id, "<>") {
				return e, fmt.Errorf("identity=%q is not an email address", id)
			}
			e.identities = append(e.identities, id)
		}
	}
	return e, nil
}

// Identities are the addresses the policy says key belongs to (the
// identity=<email> words of its lines' comments), lower-cased; none when it
// names none.
func (p *Policy) Identities(key ssh.PublicKey) []string {
	var out []string
	for _, e := range p.entries {
		if bytes.Equal(e.key.Marshal(), key.Marshal()) {
			out = append(out, e.identities...)
		}
	}
	return out
}

// field splits off the first whitespace-separated field, honouring double
// quotes (an option's value may hold spaces).
func field(s string) (string, string) {
	s = strings.TrimLeft(s, " \t")
	quoted := false
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '"':
			quoted = !quoted
		case (s[i] == ' ' || s[i] == '\t') && !quoted:
			return s[:i], strings.TrimLeft(s[i:], " \t")
		}
	}
	return s, ""
}

func isKeyType(s string) bool {
	return strings.HasPrefix(s, "ssh-") || strings.HasPrefix(s, "ecdsa-") || strings.HasPrefix(s, "sk-")
}

func (e *policyEntry) options(s string) error {
	for _, opt := range splitOptions(s) {
		name, value, hasValue := strings.Cut(opt, "=")
		value = strings.Trim(value, `"`)
		switch strings.ToLower(name) {
		case "namespaces":
			if !hasValue {
				return fmt.Errorf("namespaces needs a value")
			}
			e.namespaces = strings.Split(value, ",")
		case "valid-after", "valid-before":
			t, err := parseSSHTime(value)
			if err != nil {
				return fmt.Errorf("%s: %v", name, err)
			}
			if strings.EqualFold(name, "valid-after") {
				e.validAfter = t
			} else {
				e.validBefore = t
			}
		default:
			return fmt.Errorf("option %q is not supported (namespaces, valid-after, valid-before)", name)
		}
	}
	return nil
}

func splitOptions(s string) []string {
	var out []string
	quoted, start := false, 0
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '"':
			quoted = !quoted
		case s[i] == ',' && !quoted:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// parseSSHTime reads ssh-keygen's YYYYMMDD[HHMM[SS]][Z] (local time unless Z).
func parseSSHTime(v string) (time.Time, error) {
	loc := time.Local
	if strings.HasSuffix(v, "Z") || strings.HasSuffix(v, "z") {
		loc, v = time.UTC, v[:len(v)-1]
	}
	for _, layout := range []string{"20060102", "200601021504", "20060102150405"} {
		if len(v) == len(layout) {
			if t, err := time.ParseInLocation(layout, v, loc); err == nil {
				return t, nil
			}
		}
	}
	return time.Time{}, fmt.Errorf("%q is not YYYYMMDD[HHMM[SS]][Z]", v)
}

// Entry is one line of a policy, for people and JSON.
type Entry struct {
	Line        int      `json:"line"`
	Features    []string `json:"features"`
	Key         string   `json:"key"` // SHA256 fingerprint
	KeyType     string   `json:"key_type"`
	Namespaces  []string `json:"namespaces,omitempty"`
	ValidAfter  string   `json:"valid_after,omitempty"`
	ValidBefore string   `json:"valid_before,omitempty"`
}

// Entries lists the policy's lines in order.
func (p *Policy) Entries() []Entry {
	out := []Entry{}
	for _, e := range p.entries {
		x := Entry{Line: e.line, Features: e.patterns, Key: Fingerprint(e.key), KeyType: e.key.Type(), Namespaces: e.namespaces}
		if !e.validAfter.IsZero() {
			x.ValidAfter = e.validAfter.Format(time.RFC3339)
		}
		if !e.validBefore.IsZero() {
			x.ValidBefore = e.validBefore.Format(time.RFC3339)
		}
		out = append(out, x)
	}
	return out
}

// Allows reports whether the policy lets key sign feature's examinations
// at time at, and the line that does.
func (p *Policy) Allows(feature string, key ssh.PublicKey, at time.Time) (int, bool) {
	for _, e := range p.entries {
		if !bytes.Equal(e.key.Marshal(), key.Marshal()) || !matchList(feature, e.patterns) {
			continue
		}
		if e.namespaces != nil && !matchList(Namespace, e.namespaces) {
			continue
		}
		if !e.validAfter.IsZero() && at.Before(e.validAfter) || !e.validBefore.IsZero() && !at.Before(e.validBefore) {
			continue
		}
		return e.line, true
	}
	return 0, false
}

// Check is the policy's verdict on an accepted examination of feature:
// nil when key (the signer, nil for an unsigned record; sigErr when its
// signature did not hold) may sign it at time at; else UnsignedEvidence,
// SignatureInvalid or SignerNotAllowed, naming the key and the policy.
func (p *Policy) Check(feature string, key ssh.PublicKey, sigErr error, at time.Time) error {
	switch {
	case sigErr != nil:
		return sigErr
	case key == nil:
		return refusal.New(refusal.UnsignedEvidence,
			"close the examination again with --sign, by a key the policy allows for the feature",
			"the examination of %s is not signed, and %s requires a signature", feature, p.Source)
	}
	if _, ok := p.Allows(feature, key, at); !ok {
		return refusal.New(refusal.SignerNotAllowed,
			"have a key the policy allows for the feature sign it, or change the policy (a commit to the protected branch)",
			"the examination of %s is signed by %s, which %s does not allow for %s", feature, Fingerprint(key), p.Source, feature)
	}
	return nil
}

// matchList is ssh's match_pattern_list: a name matches a comma-separated
// list when some pattern matches it and no negated (!) pattern does.
func matchList(name string, patterns []string) bool {
	matched := false
	for _, p := range patterns {
		if neg, ok := strings.CutPrefix(p, "!"); ok {
			if matchPattern(name, neg) {
				return false
			}
			continue
		}
		if matchPattern(name, p) {
			matched = true
		}
	}
	return matched
}

// matchPattern matches * (any run) and ? (one character), as ssh does.
func matchPattern(s, p string) bool {
	for len(p) > 0 {
		switch p[0] {
		case '*':
			for len(p) > 0 && p[0] == '*' {
				p = p[1:]
			}
			if p == "" {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if matchPattern(s[i:], p) {
					return true
				}
			}
			return false
		case '?':
			if s == "" {
				return false
			}
		default:
			if s == "" || s[0] != p[0] {
				return false
			}
		}
		s, p = s[1:], p[1:]
	}
	return s == ""
}
