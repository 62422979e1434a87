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

// Receive is the server's check of ref updates, run in the receiving
// repository: by pre-receive for a whole push (git's quarantine holds the
// pushed objects; the store reads it), and by reference-transaction for
// each transaction git has prepared (Written). Its rules:
//
//   - a name is judged as the ref it resolves to on the server: a push to
//     a symbolic ref moves the ref it names, and a ref that a protected
//     symbolic ref names is protected;
//   - nwdes's refs are append-only: a ref the store's registry declares
//     merge or fast-forward may only move forward (never be deleted or
//     rewritten); a swap ref (a lease) may move any way; an undeclared ref
//     under refs/nwdes/ is refused, and so is every ref under the
//     namespaces that never leave a clone (refs/nwdes-local/,
//     refs/nwdes-remotes/, any other refs/nwdes-*);
//   - a protected branch may only move to a commit accepted by the
//     examination records as they will be after the update (those in the
//     same push or transaction, else the server's), signed as the branch's
//     signing policy asks — the same judgment as the pre-push hook's, made
//     where no client can skip it. It is never deleted, and a new one is
//     judged against an explicit source (see sources), never against
//     nothing.
type Receive struct {
	Policy Policy
	// DefaultBranch is git config nwdes.defaultBranch on the server ("" when
	// unset): a protected branch every new protected branch is judged
	// against, and the one branch that may be created on a server where no
	// protected branch exists yet.
	DefaultBranch gitstore.RefName
	// Written: the updates are one reference transaction git has prepared
	// and is about to commit (the reference-transaction hook), not a
	// push that pre-receive sees before any ref moves.
	Written bool
}

// CheckReceive is Receive{Policy: p}.Check: the server's check with no
// default branch named.
func CheckReceive(open func() (*gitstore.Store, error), p Policy, updates []Update) (*Report, error) {
	return Receive{Policy: p}.Check(open, updates)
}

// judging is an update handed to the shared judgment: as judged (a new
// branch against its source's name and tip), and as reported.
type judging struct {
	judged, reported Update
	notes            []string
}

// Check judges updates; see Receive.
func (rc Receive) Check(open func() (*gitstore.Store, error), updates []Update) (*Report, error) {
	p := rc.Policy
	if rc.DefaultBranch != "" && !p.Protected(string(rc.DefaultBranch)) {
		return nil, refusal.New(refusal.ConfigurationMalformed,
			"name a protected branch (git config nwdes.protect says which are), or unset it",
			"git config nwdes.defaultBranch names %s, which is not protected", rc.DefaultBranch)
	}
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
	refuse := func(u Update, why string, notes []string) {
		rep.Refs = append(rep.Refs, RefResult{Update: u, Verdict: Refused, Why: why, Notes: notes})
	}
	var records judge.Records
	recordsMoved := false
	var aliases map[gitstore.RefName][]gitstore.RefName
	var extra []string // refs protected through a protected symbolic ref
	var judged []judging
	seen := map[string]bool{}
	for _, u := range updates {
		if why := neverTravels(u.RemoteRef); why != "" && !u.Delete() {
			refuse(u, why, nil)
			continue
		}
		s, err := opened()
		if err != nil {
			return nil, unreadable(u, err)
		}
		target, chain, err := s.Refs().Referent(gitstore.RefName(u.RemoteRef))
		if err != nil {
			return nil, unreadable(u, err)
		}
		var notes []string
		if string(target) != u.RemoteRef {
			notes = append(notes, fmt.Sprintf("%s is a symbolic ref to %s: the update moves %s", u.RemoteRef, target, target))
			u.RemoteRef = string(target)
			if why := neverTravels(u.RemoteRef); why != "" && !u.Delete() {
				refuse(u, why, notes)
				continue
			}
		}
		// The ref moves from the value it holds: git's own old value may be
		// zero for an update that did not say (git update-ref without one).
		if isZeroOID(u.RemoteOID) {
			cur, err := s.Tip(target)
			if err != nil {
				return nil, unreadable(u, err)
			}
			if !cur.IsZero() {
				u.RemoteOID = cur.String()
			}
		}
		key := u.RemoteOID + " " + u.LocalOID + " " + u.RemoteRef
		if seen[key] {
			continue
		}
		seen[key] = true
		if u.LocalOID == u.RemoteOID {
			rep.Refs = append(rep.Refs, RefResult{Update: u, Verdict: Pass, Why: "unchanged", Notes: notes})
			continue
		}
		if strings.HasPrefix(u.RemoteRef, "refs/nwdes/") || u.RemoteRef == string(gitstore.NotesRef) {
			res, err := appendOnly(s, u)
			if err != nil {
				return nil, unreadable(u, err)
			}
			res.Notes = notes
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
				recordsMoved = true
			}
			continue
		}
		if !p.Protected(u.RemoteRef) {
			by := ""
			for _, n := range chain {
				if p.Protected(string(n)) {
					by = string(n)
				}
			}
			if by == "" {
				if aliases == nil {
					if aliases, err = protectedAliases(s, p); err != nil {
						return nil, unreadable(u, err)
					}
				}
				if names := aliases[target]; len(names) > 0 {
					by = string(names[0])
				}
			}
			if by == "" {
				judged = append(judged, judging{judged: u, reported: u, notes: notes})
				continue
			}
			notes = append(notes, fmt.Sprintf("%s is what the protected %s names (a symbolic ref): it is judged as protected", u.RemoteRef, by))
			extra = append(extra, u.RemoteRef)
		}
		// A protected branch is never deleted here: it would come back with
		// no signing policy and no contracts to compare.
		if u.Delete() {
			refuse(u, "a protected branch is not deleted here: it would come back with no signing policy and no contracts to compare", notes)
			continue
		}
		if !isZeroOID(u.RemoteOID) {
			judged = append(judged, judging{judged: u, reported: u, notes: notes})
			continue
		}
		srcs, note, why, err := rc.sources(s, u)
		if err != nil {
			return nil, unreadable(u, err)
		}
		if why != "" {
			refuse(u, why, notes)
			continue
		}
		notes = append(notes, note)
		if len(srcs) == 0 {
			judged = append(judged, judging{judged: u, reported: u, notes: notes})
		}
		for _, src := range srcs {
			ju := u
			ju.RemoteRef, ju.RemoteOID = string(src.ref), src.tip.String()
			judged = append(judged, judging{judged: ju, reported: u, notes: notes})
		}
	}
	if len(extra) > 0 {
		p.Protect = append(append([]string(nil), p.Protect...), extra...)
	}
	list := make([]Update, len(judged))
	for i, j := range judged {
		list[i] = j.judged
	}
	branches, err := check(opened, p, list, records)
	if err != nil {
		return nil, err
	}
	for i, r := range branches.Refs {
		r.Update, r.Notes = judged[i].reported, judged[i].notes
		if recordsMoved && !rc.Written && r.Verdict == Accepted {
			r.Notes = append(r.Notes, fmt.Sprintf("%s is accepted by the records pushed with it: the server writes it only with them (git push --atomic), or after them", r.Update.RemoteRef))
		}
		rep.Refs = append(rep.Refs, r)
	}
	return rep, nil
}

// neverTravels says why the server refuses to take ref ("" when it may):
// the namespaces nwdes keeps to one clone.
func neverTravels(ref string) string {
	const remedy = "\nremedy: push what is shared by name (git push REMOTE BRANCH…; git nwdes push for the records), not with --mirror; delete what already landed (git push REMOTE :REF)"
	switch {
	case strings.HasPrefix(ref, gitstore.LocalPrefix):
		return refusal.RefNeverTravels + ": " + gitstore.LocalPrefix + " holds what is one clone's own (drafts, local leases); a server never takes it" + remedy
	case strings.HasPrefix(ref, gitstore.TrackingPrefix):
		return refusal.RefNeverTravels + ": " + gitstore.TrackingPrefix + " holds what a clone fetched from its remotes; a server never takes it" + remedy
	case strings.HasPrefix(ref, "refs/nwdes-"):
		return refusal.RefNeverTravels + ": " + ref + " is in no namespace nwdes shares; a server never takes it" + remedy
	}
	return ""
}

// protectedAliases maps each ref to the protected symbolic refs that name
// it (followed to the end): moving the ref moves them.
func protectedAliases(st *gitstore.Store, p Policy) (map[gitstore.RefName][]gitstore.RefName, error) {
	syms, err := st.Refs().SymbolicRefs(func(n gitstore.RefName) bool { return p.Protected(string(n)) })
	if err != nil {
		return nil, err
	}
	out := map[gitstore.RefName][]gitstore.RefName{}
	for _, name := range gitstore.SortedNames(syms) {
		target, _, err := st.Refs().Referent(name)
		if err != nil {
			return nil, err
		}
		out[target] = append(out[target], name)
	}
	return out, nil
}

// A source is a protected branch a new one is judged against.
type source struct {
	ref gitstore.RefName
	tip oid.ID
}

// sources says what a new protected branch is judged against: the branch
// git config nwdes.defaultBranch names, when it exists, and every existing
// protected branch whose tip the new commit contains (it is made from
// them). Every source judges it, each with the contracts and signing
// policy at its tip. With none, only the default branch itself may be
// created, and only while no protected branch exists (the server's first
// push, judged by its own commit's contracts); anything else is refused
// (why, BranchUnsourced) rather than judged against nothing.
func (rc Receive) sources(st *gitstore.Store, u Update) ([]source, string, string, error) {
	p, b := rc.Policy, gitstore.RefName(u.RemoteRef)
	names, err := st.Refs().Names(func(n gitstore.RefName) bool { return n != b && p.Protected(string(n)) })
	if err != nil {
		return nil, "", "", err
	}
	commit, err := st.Resolve(u.LocalOID)
	if err != nil {
		return nil, "", "", err
	}
	var out []source
	var existing []string
	for _, n := range names {
		target, _, err := st.Refs().Referent(n)
		if err != nil {
			return nil, "", "", err
		}
		if target == b {
			continue
		}
		tip, err := st.Tip(target)
		if err != nil || tip.IsZero() {
			if err != nil {
				return nil, "", "", err
			}
			continue
		}
		tip, err = st.Resolve(tip.String())
		if err != nil {
			return nil, "", "", err
		}
		existing = append(existing, string(n))
		if n == rc.DefaultBranch {
			out = append([]source{{n, tip}}, out...)
			continue
		}
		from, err := st.IsAncestor(tip, commit)
		if err != nil {
			return nil, "", "", err
		}
		if from {
			out = append(out, source{n, tip})
		}
	}
	if len(out) > 0 {
		var ns []string
		for _, s := range out {
			ns = append(ns, fmt.Sprintf("%s at %s", s.ref, text.Short(s.tip.String())))
		}
		return out, fmt.Sprintf("%s is new here: judged against %s (the contracts and signing policy there)", b, strings.Join(ns, " and ")), "", nil
	}
	if b == rc.DefaultBranch && len(existing) == 0 {
		return nil, fmt.Sprintf("%s is the default branch (git config nwdes.defaultBranch) and no protected branch exists here yet: it is judged by its own commit's contracts", b), "", nil
	}
	short := strings.TrimPrefix(string(b), "refs/heads/")
	if len(existing) == 0 {
		return nil, "", fmt.Sprintf("%s: %s is a new protected branch and no protected branch exists here to judge it against\nremedy: name the branch the server starts from: git config nwdes.defaultBranch %s (in the server's repository), then push it first",
			refusal.BranchUnsourced, b, short), nil
	}
	missing := ""
	if rc.DefaultBranch != "" {
		missing = fmt.Sprintf("; git config nwdes.defaultBranch names %s, which does not exist", rc.DefaultBranch)
	}
	return nil, "", fmt.Sprintf("%s: %s is a new protected branch whose commit contains the tip of no protected branch here (%s)%s\nremedy: make it from one of them, or name the branch new ones are judged against: git config nwdes.defaultBranch BRANCH (in the server's repository)",
		refusal.BranchUnsourced, b, strings.Join(existing, ", "), missing), nil
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
	case ok && spec.Policy == gitstore.PolicyLocal && !u.Delete():
		return refuse("%s: %s is declared local: a server never takes it", refusal.RefNeverTravels, u.RemoteRef)
	case !ok:
		return refuse("no kind of record is declared for %s (a newer nwdes, or a typo): the server does not take it", u.RemoteRef)
	case spec.Policy == gitstore.PolicySwap:
		res.Why = "a swap ref (a lease): any compare-and-swap move"
		return res, nil
	case u.Delete():
		return refuse("%s holds records, which are append-only here: it is never deleted", u.RemoteRef)
	case isZeroOID(u.RemoteOID) && spec.Commit:
		res.Why = "a commit ref (a worker's head), created"
		return res, nil
	case isZeroOID(u.RemoteOID):
		// A new records ref: its whole history must be append-only.
		next, err := oid.Parse(u.LocalOID)
		if err != nil {
			return res, err
		}
		if err := st.VerifyHistory(gitstore.RefName(u.RemoteRef), oid.Zero, next); err != nil {
			if rf, ok := refusal.As(err); ok && rf.Name == refusal.HistoryRewritten {
				return refuse("%s: %s; records are append-only here", refusal.HistoryRewritten, rf.Detail)
			}
			return res, err
		}
		return res, nil
	case spec.Commit:
		return refuse("%s names a commit written once (a worker's head): it never moves", u.RemoteRef)
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
	// A fast-forward can still drop records: a commit on top whose tree
	// leaves some out (an examination that rejected, say), even one that a
	// later commit of the same push puts back. Every commit the push brings
	// is checked against its parents, as every reader checks the chain.
	if err := st.VerifyHistory(gitstore.RefName(u.RemoteRef), old, next); err != nil {
		if rf, ok := refusal.As(err); ok && rf.Name == refusal.HistoryRewritten {
			return refuse("%s: %s; records are append-only here", refusal.HistoryRewritten, rf.Detail)
		}
		return res, err
	}
	return res, nil
}
