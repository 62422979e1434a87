package hooks

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/refusal"
)

// ReferenceTransaction is the hook git runs around every ref transaction
// (git 2.28 and later): with the state "prepared" once every ref of the
// transaction is locked and its old value checked, and before any is
// written, so that a refusal leaves every ref as it was.
const ReferenceTransaction = "reference-transaction"

// SymbolicUpdate is a transaction's line that writes or removes a symbolic
// ref (git 2.46 and later give such a value as "ref:<target>"): Ref, and
// the target it names before and after ("" for none).
type SymbolicUpdate struct {
	Ref       string
	OldTarget string
	NewTarget string
}

// ParseTransaction reads what git gives the reference-transaction hook,
// one line per ref: "<old value> SP <new value> SP <ref name> LF", a value
// being an object name or, for a symbolic ref, "ref:<target>". Names
// outside refs/ are left out: HEAD's line is the log-only half of an update
// that git also lists under the branch HEAD names, and pseudo-refs
// (ORIG_HEAD, …) are never protected. A line that does not follow the
// protocol is refused.
func ParseTransaction(r io.Reader) ([]Update, []SymbolicUpdate, error) {
	var out []Update
	var syms []SymbolicUpdate
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if line == "" {
			continue
		}
		f := strings.Split(line, " ")
		bad := len(f) != 3 || f[2] == ""
		if !bad {
			oldSym, newSym := strings.HasPrefix(f[0], "ref:"), strings.HasPrefix(f[1], "ref:")
			switch {
			case oldSym || newSym:
				target := func(v string, sym bool) (string, bool) {
					if sym {
						t := strings.TrimPrefix(v, "ref:")
						return t, t != ""
					}
					return "", isOID(v)
				}
				o, okO := target(f[0], oldSym)
				w, okN := target(f[1], newSym)
				bad = !okO || !okN
				if !bad && strings.HasPrefix(f[2], "refs/") {
					syms = append(syms, SymbolicUpdate{Ref: f[2], OldTarget: o, NewTarget: w})
				}
				if !bad {
					continue
				}
			default:
				bad = !isOID(f[0]) || !isOID(f[1]) || len(f[0]) != len(f[1])
			}
		}
		if bad {
			return nil, nil, refusal.NewUnreadable(refusal.InputUnreadable,
				"run the hook only from git, which writes \"<old value> <new value> <ref>\" lines to reference-transaction",
				"reference-transaction input line %d is not \"<old value> <new value> <ref>\": %q", n, text.Truncate(line, 120))
		}
		if strings.HasPrefix(f[2], "refs/") {
			out = append(out, Update{LocalRef: f[2], LocalOID: f[1], RemoteRef: f[2], RemoteOID: f[0]})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, refusal.NewUnreadable(refusal.InputUnreadable, "run the hook only from git", "reference-transaction input: %v", err)
	}
	return out, syms, nil
}

// CheckSymbolic judges the symbolic refs a transaction writes, retargets
// or removes (git 2.46 and later pass them to the hook): where the ref, or
// a target it names before or after, is a protected branch or one of
// nwdes's refs, the server refuses, since an update of one name would move
// the other unjudged (and a protected branch is never deleted here).
// Symbolic refs among unprotected refs pass.
func (rc Receive) CheckSymbolic(syms []SymbolicUpdate) []RefResult {
	var out []RefResult
	sensitive := func(ref string) bool {
		return ref != "" && (rc.Policy.Protected(ref) || strings.HasPrefix(ref, "refs/nwdes") || ref == string(gitstore.NotesRef))
	}
	for _, s := range syms {
		res := RefResult{Update: Update{LocalRef: s.Ref, RemoteRef: s.Ref}, Verdict: Pass, Why: "a symbolic ref among unprotected refs"}
		if sensitive(s.Ref) || sensitive(s.OldTarget) || sensitive(s.NewTarget) {
			res.Verdict = Refused
			res.Why = fmt.Sprintf("%s is a symbolic ref (to %q, then %q) that is or names a protected branch or a nwdes ref: the server makes, retargets or removes none (an update of one name would move the other unjudged); an administrator does it with the hook uninstalled",
				s.Ref, s.OldTarget, s.NewTarget)
		}
		out = append(out, res)
	}
	return out
}

// ExplainWritten renders a refusal of the reference-transaction check:
// ExplainOnServer's account of the features, under a headline that says
// the write, not the push, is refused, and what to do when the records
// that accepted the commit at pre-receive are not the server's by now.
func ExplainWritten(r RefResult) string {
	if r.Commit == "" {
		return fmt.Sprintf("nwdes: refusing to write %s: %s\n", r.Update.RemoteRef, r.Why)
	}
	var body strings.Builder
	for i, l := range strings.SplitAfter(explain(r, true, ""), "\n") {
		if i > 0 && !strings.HasPrefix(l, "remedy:") {
			body.WriteString(l)
		}
	}
	return fmt.Sprintf("nwdes: refusing to write %s: commit %s is not accepted by the records the server holds now\n", r.Update.RemoteRef, r.Commit) +
		body.String() +
		"remedy: when pre-receive accepted it, its records did not land first: push the branch and its records in one git push --atomic, or the records first (git nwdes push), then the branch\n"
}
