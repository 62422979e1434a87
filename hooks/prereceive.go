package hooks

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/judge"
	"github.com/nwdes/nwdes/refusal"
)

// ParseReceive reads git's pre-receive input, one line per ref:
// "<old object name> SP <new object name> SP <ref name> LF". Each becomes
// an Update whose local and remote refs are the ref (the server has no
// other name for it). A line that does not follow the protocol is refused.
func ParseReceive(r io.Reader) ([]Update, error) {
	var out []Update
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if line == "" {
			continue
		}
		f := strings.Split(line, " ")
		if len(f) != 3 || !isOID(f[0]) || !isOID(f[1]) || len(f[0]) != len(f[1]) || !strings.HasPrefix(f[2], "refs/") {
			return nil, refusal.NewUnreadable(refusal.InputUnreadable,
				"run the hook only from git receive-pack, which writes \"<old oid> <new oid> <ref>\" lines",
				"pre-receive input line %d is not \"<old oid> <new oid> <ref>\": %q", n, text.Truncate(line, 120))
		}
		out = append(out, Update{LocalRef: f[2], LocalOID: f[1], RemoteRef: f[2], RemoteOID: f[0]})
	}
	if err := sc.Err(); err != nil {
		return nil, refusal.NewUnreadable(refusal.InputUnreadable, "run the hook only from git receive-pack", "pre-receive input: %v", err)
	}
	return out, nil
}

// CheckReceive is the server's check of one push, run by pre-receive in the
// receiving repository (git's quarantine holds the pushed objects; the
// store reads it). Two rules:
//
//   - nwdes's refs are append-only: a ref the store's registry declares
//     merge or fast-forward may only move forward (never be deleted or
//     rewritten); a swap ref (a lease) may move any way; an undeclared ref
//     under refs/nwdes/ is refused.
//   - a protected branch may only move to a commit accepted by the
//     examination records as they will be after this push (those pushed
//     alongside, else the server's), signed as the branch's signing policy
//     asks — the same judgment as the pre-push hook's, made where no client
//     can skip it. It is never deleted, and a new one is judged against the
//     default branch (HEAD): its policy, and the contracts it holds.
func CheckReceive(open func() (*gitstore.Store, error), p Policy, updates []Update) (*Report, error) {
	var st *gitstore.Store
	opened := func() (*gitstore.Store, error) {
		if st != nil {
			return st, nil
		}
		var err error
		st, err = open()
		return st, err
	}
	rep := &Report{Refs: []RefResult{}}
	var records judge.Records
	var rest []Update
	for _, u := range updates {
		if !strings.HasPrefix(u.RemoteRef, "refs/nwdes/") && u.RemoteRef != string(gitstore.NotesRef) {
			rest = append(rest, u)
			continue
		}
		s, err := opened()
		if err != nil {
			return nil, unreadable(u, err)
		}
		res, err := appendOnly(s, u)
		if err != nil {
			return nil, unreadable(u, err)
		}
		rep.Refs = append(rep.Refs, res)
		if (u.RemoteRef == string(examine.Ref) || u.RemoteRef == string(examine.GateRef)) && !u.Delete() {
			tip, err := oid.Parse(u.LocalOID)
			if err != nil {
				return nil, unreadable(u, err)
			}
			if u.RemoteRef == string(examine.Ref) {
				records.Examine = tip
			} else {
				records.Gates = tip
			}
		}
	}
	// On the server a protected branch is never deleted (it would come back
	// with no policy and no contracts to compare), and a new one is judged
	// against the default branch: its signing policy and its contracts.
	var judged []Update
	for _, u := range rest {
		if !p.Protected(u.RemoteRef) {
			judged = append(judged, u)
			continue
		}
		if u.Delete() {
			rep.Refs = append(rep.Refs, RefResult{Update: u, Verdict: Refused,
				Why: "a protected branch is not deleted here: it would come back with no signing policy and no contracts to compare"})
			continue
		}
		if isZeroOID(u.RemoteOID) {
			s, err := opened()
			if err != nil {
				return nil, unreadable(u, err)
			}
			if head, err := s.Resolve("HEAD"); err == nil {
				u.RemoteOID = head.String()
			}
		}
		judged = append(judged, u)
	}
	branches, err := check(opened, p, judged, records)
	if err != nil {
		return nil, err
	}
	rep.Refs = append(rep.Refs, branches.Refs...)
	return rep, nil
}

// appendOnly judges an update of one of nwdes's refs on the server.
func appendOnly(st *gitstore.Store, u Update) (RefResult, error) {
	res := RefResult{Update: u, Verdict: Pass, Why: "nwdes records, moved forward"}
	refuse := func(format string, args ...any) (RefResult, error) {
		res.Verdict, res.Why = Refused, fmt.Sprintf(format, args...)
		return res, nil
	}
	spec, ok := st.Registry().Ref(gitstore.RefName(u.RemoteRef))
	switch {
	case !ok:
		return refuse("no kind of record is declared for %s (a newer nwdes, or a typo): the server does not take it", u.RemoteRef)
	case spec.Policy == gitstore.PolicySwap:
		res.Why = "a swap ref (a lease): any compare-and-swap move"
		return res, nil
	case u.Delete():
		return refuse("%s holds records, which are append-only here: it is never deleted", u.RemoteRef)
	case isZeroOID(u.RemoteOID):
		return res, nil
	}
	old, err := oid.Parse(u.RemoteOID)
	if err != nil {
		return res, err
	}
	next, err := oid.Parse(u.LocalOID)
	if err != nil {
		return res, err
	}
	forward, err := st.IsAncestor(old, next)
	if err != nil {
		return res, err
	}
	if !forward {
		return refuse("%s would move from %s to %s, which does not contain it: records are append-only here (git nwdes push merges instead of forcing)",
			u.RemoteRef, text.Short(u.RemoteOID), text.Short(u.LocalOID))
	}
	// A fast-forward can still drop records: a new commit on top whose tree
	// leaves some out (an examination that rejected, say). What is written
	// once under an immutable directory stays, byte for byte.
	gone, err := st.Altered(old, next, spec.Immutable)
	if err != nil {
		return res, err
	}
	if gone != "" {
		return refuse("%s at %s drops or changes %s, which a record never is once written: records are append-only here",
			u.RemoteRef, text.Short(u.LocalOID), gone)
	}
	return res, nil
}
