package git

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"golang.org/x/sys/unix"

	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/refusal"
)

// Limits of revision resolution, as in git where git has one.
const (
	// symrefDepth is how many ref files one name may be read through:
	// git's SYMREF_MAXDEPTH.
	symrefDepth = 5
	// minAbbrev is the shortest abbreviated object id git accepts.
	minAbbrev = 4
	// maxCandidates bounds the objects an abbreviated id is checked against
	// when telling which of them is a commit; more is refused as ambiguous.
	maxCandidates = 64
	// maxRefFile is how much of a ref file is read at once. Only a
	// symbolic ref's trailing whitespace can make a file longer matter;
	// the rest is then scanned rather than kept.
	maxRefFile = 4096
)

// refRules are the names git tries for a short name, in its order
// (ref_rev_parse_rules); the first that exists wins.
var refRules = []string{"%s", "refs/%s", "refs/tags/%s", "refs/heads/%s", "refs/remotes/%s", "refs/remotes/%s/HEAD"}

// Resolve turns a revision into a commit id, agreeing with
// git rev-parse --verify REV^{commit} on the part of git's syntax it accepts:
//
//   - "", HEAD and @: this worktree's HEAD, read from the per-worktree git
//     directory (go-git would read the main worktree's);
//   - a full object id, or an abbreviated one of 4 to 39 hexadecimal digits
//     that is unique among all objects (loose, packed and in alternates), or
//     unique among the commits and tags of commits when several objects
//     share it, as git disambiguates;
//   - a ref name, tried as <name>, refs/<name>, refs/tags/<name>,
//     refs/heads/<name>, refs/remotes/<name> and refs/remotes/<name>/HEAD,
//     the first that exists winning (git warns when several exist and picks
//     the same one); symbolic refs, as files or as symbolic links, are
//     followed up to git's depth of 5, and ref files are parsed as git
//     parses them (see readRef);
//   - git describe output, <anything>-g<abbreviated commit id>;
//   - any of these followed by any sequence of ~, ~N, ^, ^N (^0 is the
//     commit itself), ^{commit}, ^{}, ^{tag} and ^{object}.
//
// Annotated tags are peeled to their commit. A shallow commit of the clone
// has no parents, as for git. Everything else git accepts (:path, @{...},
// ranges, ^{/text}, ^! and ^@, negation, text after ^{type} up to a later
// "}") is refused with MissingFact naming the revision, never guessed at;
// so is a revision whose answer git would read through a replace ref or a
// graft (refs/replace/, info/grafts), which Resolve does not follow.
// gitstore's differential tests (revision_diff_test.go) hold Resolve to
// this against the git binary.
func (s *Repo) Resolve(rev string) (oid.ID, error) { return s.resolve(rev) }

func (s *Repo) resolve(rev string) (oid.ID, error) {
	if rev == "" {
		rev = "HEAD"
	}
	if why := unsupportedSyntax(rev); why != "" {
		return oid.Zero, refusal.New(refusal.MissingFact,
			"name the commit by id, ref or tag, with ~N, ^N or ^{commit} suffixes; git rev-parse REV^{commit} prints the id of any other revision",
			"revision %q uses %s, which nwdes does not resolve", rev, why)
	}
	r := &resolver{s: s, rev: rev}
	base, ops, err := parseRevision(rev)
	if err != nil {
		return oid.Zero, r.unknown(err)
	}
	// git looks an abbreviated id up among commit-ish objects when a
	// commit is wanted of it (REV^{commit}, REV~N, REV^N), and among all
	// objects when REV^{}, ^{tag} or ^{object} is applied first.
	mode := committish
	if len(ops) > 0 && (ops[0].kind == opPeel || ops[0].kind == opTag || ops[0].kind == opObject) {
		mode = anyObject
	}
	h, err := r.base(base, mode)
	if err != nil {
		return oid.Zero, err
	}
	for _, op := range ops {
		if h, err = r.apply(h, op); err != nil {
			return oid.Zero, err
		}
	}
	return r.peelToCommit(h)
}

// unsupportedSyntax names the git revision syntax in rev that Resolve does
// not implement. None of it can occur in a ref name or an object id, so
// refusing it up front loses nothing Resolve could otherwise find and names
// the reason.
func unsupportedSyntax(rev string) string {
	switch {
	case strings.IndexByte(rev, 0) >= 0:
		return "a NUL byte"
	case strings.HasPrefix(rev, "^"):
		return "negation (^REV)"
	case strings.Contains(rev, ".."):
		return "a range (..)"
	case strings.Contains(rev, "@{"):
		return "a reflog or upstream suffix (@{...})"
	case strings.Contains(rev, ":"):
		return "a path or message search (:)"
	case strings.Contains(rev, "^{/"):
		return "a message search (^{/...})"
	case strings.HasSuffix(rev, "^!") || strings.HasSuffix(rev, "^@") || strings.Contains(rev, "^-"):
		return "a parent shorthand (^!, ^@, ^-)"
	}
	return ""
}

type opKind uint8

const (
	opAncestor opKind = iota // ~N: N-th first-parent ancestor
	opParent                 // ^N: N-th parent, ^0 the commit itself
	opCommit                 // ^{commit}
	opPeel                   // ^{}: peel tags
	opTag                    // ^{tag}: must be a tag
	opObject                 // ^{object}: must exist
)

type revOp struct {
	kind opKind
	n    int
}

func (op revOp) String() string {
	switch op.kind {
	case opAncestor:
		return "~" + strconv.Itoa(op.n)
	case opParent:
		return "^" + strconv.Itoa(op.n)
	case opCommit:
		return "^{commit}"
	case opPeel:
		return "^{}"
	case opTag:
		return "^{tag}"
	}
	return "^{object}"
}

// parseRevision splits a revision into its base name and its suffixes in
// the order they apply, taking suffixes off the end as git's get_oid_1 does.
func parseRevision(rev string) (string, []revOp, error) {
	var ops []revOp
	name := rev
	for {
		i := len(name)
		for i > 0 && '0' <= name[i-1] && name[i-1] <= '9' {
			i--
		}
		if i > 0 && (name[i-1] == '~' || name[i-1] == '^') {
			n := 1
			if digits := name[i:]; digits != "" {
				v, err := strconv.ParseUint(digits, 10, 31)
				if err != nil {
					return "", nil, fmt.Errorf("%s%s: count out of range", name[i-1:i], digits)
				}
				n = int(v)
			}
			kind := opAncestor
			if name[i-1] == '^' {
				kind = opParent
			}
			ops = append(ops, revOp{kind, n})
			name = name[:i-1]
			continue
		}
		if !strings.HasSuffix(name, "}") {
			break
		}
		j := strings.LastIndex(name, "^{")
		if j < 0 {
			break
		}
		var op revOp
		switch typ := name[j+2 : len(name)-1]; typ {
		case "commit":
			op.kind = opCommit
		case "":
			op.kind = opPeel
		case "tag":
			op.kind = opTag
		case "object":
			op.kind = opObject
		case "tree", "blob":
			return "", nil, fmt.Errorf("^{%s} names a %s, never a commit", typ, typ)
		default:
			return "", nil, fmt.Errorf("^{%s} is not an object type", typ)
		}
		ops = append(ops, op)
		name = name[:j]
	}
	for i, j := 0, len(ops)-1; i < j; i, j = i+1, j-1 {
		ops[i], ops[j] = ops[j], ops[i]
	}
	return name, ops, nil
}

type disambiguation uint8

const (
	anyObject  disambiguation = iota // every object counts
	committish                       // only commits and tags of commits count
	commitOnly                       // only commits count (describe output)
)

// resolver resolves one revision, collecting what it skipped on the way
// (broken or dangling refs) for the refusal if nothing is found.
type resolver struct {
	s     *Repo
	rev   string
	notes []string
	walk  int
	// rewritten is what git reads other than as stored (see rewrites),
	// loaded on the first read.
	rewritten map[oid.ID]rewrite
}

func (r *resolver) note(format string, args ...any) {
	if len(r.notes) < 8 {
		r.notes = append(r.notes, fmt.Sprintf(format, args...))
	}
}

func (r *resolver) unknown(cause error) error {
	detail := fmt.Sprintf("revision %q does not name a commit", r.rev)
	if cause == nil && len(r.notes) > 0 {
		cause = errors.New(strings.Join(r.notes, "; "))
	}
	if cause != nil {
		detail += ": " + cause.Error()
	}
	e := refusal.New(refusal.MissingFact, "name an existing commit (git rev-parse REV shows what git makes of it)", "%s", detail)
	return e.Wrap(cause)
}

// base resolves a revision without suffixes, in get_oid_basic's order: a
// full id, then refs, then describe output, then an abbreviated id.
func (r *resolver) base(name string, mode disambiguation) (oid.ID, error) {
	if name == "" {
		return oid.Zero, r.unknown(errors.New("nothing names the commit the suffixes apply to"))
	}
	if name == "@" {
		name = "HEAD"
	}
	hexLen := r.s.format.HexLen()
	if len(name) == hexLen && isHex(name) {
		id, _ := oid.Parse(name)
		return id, nil
	}
	for _, rule := range refRules {
		if h, ok := r.ref(fmt.Sprintf(rule, name)); ok {
			return h, nil
		}
	}
	if abbrev, ok := describedID(name, hexLen); ok {
		return r.abbreviated(abbrev, commitOnly)
	}
	if len(name) >= minAbbrev && len(name) < hexLen && isHex(name) {
		return r.abbreviated(name, mode)
	}
	return oid.Zero, r.unknown(nil)
}

// describedID returns the abbreviated id at the end of git describe output
// ("v1.2-3-gabc1234"), found as git's get_describe_name finds it: a run of
// hexadecimal digits after "-g", with something before the "-g"; at most
// hexLen of them (the repository's full id).
func describedID(name string, hexLen int) (string, bool) {
	for i := len(name) - 1; i >= 2; i-- {
		if isHexDigit(name[i]) {
			continue
		}
		if name[i] == 'g' && name[i-1] == '-' && len(name)-(i+1) >= minAbbrev && len(name)-(i+1) <= hexLen {
			return name[i+1:], true
		}
		return "", false
	}
	return "", false
}

// abbreviated resolves an abbreviated id as git's get_short_oid does: a
// single matching object is the answer whatever its type; among several,
// the one that satisfies mode is, and anything else is ambiguous.
func (r *resolver) abbreviated(prefix string, mode disambiguation) (oid.ID, error) {
	prefix = strings.ToLower(prefix)
	db, err := r.s.obj.reader()
	if err != nil {
		return oid.Zero, fmt.Errorf("revision %q: %w", r.rev, err)
	}
	ids, err := db.Prefix(prefix, maxCandidates+1)
	if err != nil {
		return oid.Zero, fmt.Errorf("revision %q: look up short id %s: %w", r.rev, prefix, err)
	}
	switch {
	case len(ids) == 0:
		return oid.Zero, r.unknown(fmt.Errorf("no object id starts with %s", prefix))
	case len(ids) == 1:
		return ids[0], nil
	case len(ids) > maxCandidates:
		return oid.Zero, r.ambiguous(prefix, fmt.Sprintf("more than %d objects", maxCandidates))
	}
	var (
		fits  []oid.ID
		kinds []string
	)
	for _, id := range ids {
		t, _, err := r.object(id, false)
		if err != nil {
			return oid.Zero, err
		}
		kinds = append(kinds, fmt.Sprintf("%s %s", id.String()[:12], t))
		ok := false
		switch mode {
		case committish:
			ok = t == plumbing.CommitObject
			if t == plumbing.TagObject {
				pt, _, err := r.peel(id)
				ok = err == nil && pt == plumbing.CommitObject
			}
		case commitOnly:
			ok = t == plumbing.CommitObject
		}
		if ok {
			fits = append(fits, id)
		}
	}
	if len(fits) == 1 {
		return fits[0], nil
	}
	what := strings.Join(kinds, ", ")
	if mode != anyObject && len(fits) == 0 {
		what += "; none of them a commit"
	}
	return oid.Zero, r.ambiguous(prefix, what)
}

func (r *resolver) ambiguous(prefix, what string) error {
	return refusal.New(refusal.MissingFact,
		"give more digits of the id (git rev-parse --disambiguate="+prefix+" lists the candidates)",
		"revision %q is ambiguous: short id %s matches %s", r.rev, prefix, what)
}

// ref resolves a full ref name as git's files backend does, following
// symbolic refs. A name that does not exist, a dangling symbolic ref and a
// file that does not hold a ref are all "not this name", so the caller
// moves on to git's next rule; the last two are noted for the refusal.
func (r *resolver) ref(name string) (oid.ID, bool) {
	first := name
	for range symrefDepth {
		if !validRefName(name) {
			if name != first {
				r.note("symbolic ref %s points at %q, which is not a ref name", first, name)
			}
			return oid.Zero, false
		}
		c, err := readRef(r.refPath(name), name, r.s.format)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.EISDIR) {
			if strings.HasPrefix(name, "refs/") && !errors.Is(err, errDanglingLink) {
				h, err := r.s.refs.readPacked(RefName(name))
				if err != nil {
					r.note("%v", err)
					return oid.Zero, false
				}
				if !h.IsZero() {
					return h, true
				}
			}
			if name != first {
				r.note("%s points at %s, which does not exist (a branch with no commits yet?)", first, name)
			}
			return oid.Zero, false
		}
		if err != nil {
			if !errors.Is(err, unix.ENOTDIR) {
				r.note("ref %s: %v", name, err)
			}
			return oid.Zero, false
		}
		switch {
		case c.symbolic:
			name = c.target
			continue
		case c.valid:
			return c.id, true
		}
		if strings.Contains(name, "/") {
			r.note("ignored %s: it holds %q, not an object id", name, text.Truncate(c.text, 50))
		}
		return oid.Zero, false
	}
	r.note("symbolic ref %s nests deeper than %d", first, symrefDepth)
	return oid.Zero, false
}

// errDanglingLink is a ref file that is a symbolic link to nothing: git
// reports the ref missing without looking for it in packed-refs. It is a
// value of a type of its own, not fmt.Errorf's: a package variable is made
// at every start of the binary, whatever the verb, and that one call was
// a third of this package's initialisation (perf, issue 26).
var errDanglingLink error = danglingLinkError{}

type danglingLinkError struct{}

func (danglingLinkError) Error() string {
	return "symbolic link to a missing file: " + fs.ErrNotExist.Error()
}
func (danglingLinkError) Unwrap() error { return fs.ErrNotExist }

// refContent is what git makes of a loose ref file.
type refContent struct {
	symbolic bool
	target   string // a symbolic ref's target, as git trims it
	valid    bool   // a regular ref that holds an object id
	id       oid.ID // that id
	text     string // the start of the file, for messages
}

// readRef reads the loose ref file at path as git's files backend does
// (files_read_raw_ref and parse_loose_ref_contents in refs/files-backend.c
// and refs.c):
//
//   - a symbolic link whose target starts with refs/ and is a valid ref
//     name is a symbolic ref to that name (core.preferSymlinkRefs writes
//     them); any other link is followed, and a dangling one is missing;
//   - the file is read as a C string, so a NUL ends it, with trailing
//     whitespace removed; git's whitespace is space, \t, \n and \r, never
//     \v or \f;
//   - "ref:", then whitespace, then the target, trimmed, is a symbolic ref;
//   - otherwise 40 hexadecimal digits (64 in a SHA-256 repository) of
//     either case, followed by the end or whitespace (FETCH_HEAD has more
//     after it), are the id.
//
// FETCH_HEAD and MERGE_HEAD are read without the symbolic link rule, as
// git reads them (refs_read_special_head).
func readRef(path, name string, format oid.Format) (refContent, error) {
	if name != "FETCH_HEAD" && name != "MERGE_HEAD" {
		fi, err := os.Lstat(path)
		if err != nil {
			return refContent{}, err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(path)
			if err != nil {
				return refContent{}, err
			}
			if strings.HasPrefix(target, "refs/") && validRefName(target) {
				return refContent{symbolic: true, target: target}, nil
			}
			if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
				return refContent{}, errDanglingLink
			}
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return refContent{}, err
	}
	defer f.Close()
	head := make([]byte, maxRefFile)
	n, err := io.ReadFull(f, head)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		err = nil
	case err != nil:
		return refContent{}, err
	}
	head = head[:n]
	whole := n < maxRefFile
	if i := bytes.IndexByte(head, 0); i >= 0 {
		head, whole = head[:i], true
	}
	c := refContent{text: strings.TrimRight(string(head), refSpace)}
	if rest, ok := bytes.CutPrefix(head, []byte("ref:")); ok {
		c.symbolic = true
		rest = bytes.TrimLeft(rest, refSpace)
		if !whole {
			// The target runs on past what was read: git trims only
			// whitespace that lasts to the end of the file (or to a
			// NUL); anything else after it leaves whitespace inside
			// the target, which no ref name has.
			allSpace, err := restIsSpace(f)
			if err != nil {
				return refContent{}, err
			}
			if !allSpace {
				rest = append(rest, ' ', '?')
			}
		}
		c.target = strings.Trim(string(rest), refSpace)
		return c, nil
	}
	if hl := format.HexLen(); len(head) >= hl && isHex(string(head[:hl])) && (len(head) == hl || isRefSpace(head[hl])) {
		c.id, _ = oid.Parse(string(head[:hl]))
		c.valid = true
	}
	return c, nil
}

// restIsSpace reports whether what is left of r up to its end or a NUL is
// all git whitespace.
func restIsSpace(r io.Reader) (bool, error) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		for _, c := range buf[:n] {
			if c == 0 {
				return true, nil
			}
			if !isRefSpace(c) {
				return false, nil
			}
		}
		if err == io.EOF {
			return true, nil
		}
		if err != nil {
			return false, err
		}
	}
}

// refPath is where the files backend keeps a ref: per-worktree names (HEAD,
// pseudorefs such as ORIG_HEAD, refs/bisect/...) in this worktree's git
// directory, the rest in the common one.
func (r *resolver) refPath(name string) string {
	dir := r.s.loc.CommonDir
	switch {
	case isPseudoref(name),
		strings.HasPrefix(name, "refs/worktree/"),
		strings.HasPrefix(name, "refs/bisect/"),
		strings.HasPrefix(name, "refs/rewritten/"):
		dir = r.s.loc.GitDir
	default:
		if rest, ok := strings.CutPrefix(name, "main-worktree/"); ok && rest != "" && isPseudoref(rest) {
			name = rest
		}
	}
	return filepath.Join(dir, filepath.FromSlash(name))
}

// isPseudoref is git's is_pseudoref_syntax: upper case letters, '-' and '_'.
func isPseudoref(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('A' <= c && c <= 'Z' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// validRefName is git's check_refname_format with REFNAME_ALLOW_ONELEVEL:
// git reads no ref by a name that fails it.
func validRefName(name string) bool {
	if name == "" || name == "@" || strings.HasSuffix(name, ".") {
		return false
	}
	for _, c := range strings.Split(name, "/") {
		if c == "" || c[0] == '.' || strings.HasSuffix(c, ".lock") {
			return false
		}
	}
	if strings.Contains(name, "..") || strings.Contains(name, "@{") {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c < 0x20 || c == 0x7f || strings.IndexByte(" ~^:?*[\\", c) >= 0 {
			return false
		}
	}
	return true
}

// apply applies one suffix to the object h.
func (r *resolver) apply(h oid.ID, op revOp) (oid.ID, error) {
	switch op.kind {
	case opAncestor, opParent, opCommit:
		t, c, err := r.peel(h)
		if err != nil {
			return oid.Zero, err
		}
		if t != plumbing.CommitObject {
			return oid.Zero, r.unknown(fmt.Errorf("%s applied to %s, which is a %s", op, h, t))
		}
		switch {
		case op.kind == opCommit || op.kind == opParent && op.n == 0:
			return c, nil
		case op.kind == opParent:
			info, err := r.parents(c)
			if err != nil {
				return oid.Zero, err
			}
			if op.n > len(info.Parents) {
				return oid.Zero, r.unknown(fmt.Errorf("commit %s has %d parents, not %d", c, len(info.Parents), op.n))
			}
			return info.Parents[op.n-1], nil
		}
		for range op.n {
			if r.walk++; r.walk > r.s.opts.MaxWalk {
				return oid.Zero, refusal.New(refusal.WalkLimit, "name the commit more directly, or raise nwdes.maxWalk",
					"revision %q walks more than %d commits", r.rev, r.s.opts.MaxWalk)
			}
			info, err := r.parents(c)
			if err != nil {
				return oid.Zero, err
			}
			if len(info.Parents) == 0 {
				return oid.Zero, r.unknown(fmt.Errorf("%s goes past root commit %s", op, c))
			}
			c = info.Parents[0]
		}
		return c, nil
	case opPeel:
		_, p, err := r.peel(h)
		return p, err
	}
	t, _, err := r.object(h, false)
	if err != nil {
		return oid.Zero, err
	}
	if op.kind == opTag && t != plumbing.TagObject {
		return oid.Zero, r.unknown(fmt.Errorf("^{tag} applied to %s, which is a %s", h, t))
	}
	return h, nil
}

// peel follows tags from h to the first object that is not a tag and
// returns its type and id.
func (r *resolver) peel(h oid.ID) (plumbing.ObjectType, oid.ID, error) {
	for range 10 {
		t, b, err := r.object(h, false)
		if err != nil {
			return 0, oid.Zero, err
		}
		if t != plumbing.TagObject {
			return t, h, nil
		}
		if h, err = r.tagTarget(h, b); err != nil {
			return 0, oid.Zero, err
		}
	}
	return 0, oid.Zero, fmt.Errorf("revision %q: tag chain too long", r.rev)
}

// tagTarget returns the object the tag h (content b) points at.
func (r *resolver) tagTarget(h oid.ID, b []byte) (oid.ID, error) {
	if err := r.notRewritten(h, plumbing.TagObject, true); err != nil {
		return oid.Zero, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	target, ok := strings.CutPrefix(line, "object ")
	id, valid := parseHex(r.s.format, target)
	if !ok || !valid {
		return oid.Zero, fmt.Errorf("tag %s is malformed", h)
	}
	return id, nil
}

// parents decodes the commit h for its parents, as git sees them: a
// shallow commit of this clone has none for git, whatever its object says
// and whether or not the parents are at hand (through an alternate, say).
func (r *resolver) parents(h oid.ID) (commitInfo, error) {
	t, b, err := r.object(h, true)
	if err != nil {
		return commitInfo{}, err
	}
	if t != plumbing.CommitObject {
		return commitInfo{}, r.unknown(fmt.Errorf("%s is a %s, not a commit", h, t))
	}
	shallow, err := r.s.isShallow(h)
	if err != nil {
		return commitInfo{}, err
	}
	if shallow {
		return commitInfo{}, shallowBoundary(h.String())
	}
	return decodeCommit(h, b)
}

// object reads h for resolution. content says whether the caller uses the
// content (a tag's target, a commit's parents) or only the type; see
// notRewritten.
func (r *resolver) object(h oid.ID, content bool) (plumbing.ObjectType, []byte, error) {
	t, b, err := r.s.obj.read(h)
	if err != nil {
		return 0, nil, r.missing(h, err)
	}
	if err := r.notRewritten(h, t, content); err != nil {
		return 0, nil, err
	}
	return t, b, nil
}

// rewrite is how git reads an object other than as stored: through a
// replace ref, whose target is the replacement, or, for a commit's
// parents, through a graft.
type rewrite struct {
	via  string // refs/replace/<id>, or info/grafts
	with oid.ID // the replacement; zero for a graft
}

// notRewritten refuses to read h (of type t) where git would read it
// through a replace ref or a graft: git follows them unless told not to
// (core.useReplaceRefs, GIT_NO_REPLACE_OBJECTS), which Resolve cannot see,
// so it follows neither and refuses where they could change the answer.
// Only the type of a replaced object that a replacement of the same type
// stands in for, and anything but the parents of a grafted commit, read as
// git reads them.
func (r *resolver) notRewritten(h oid.ID, t plumbing.ObjectType, content bool) error {
	rw, err := r.rewrites()
	if err != nil {
		return err
	}
	w, ok := rw[h]
	switch {
	case !ok:
		return nil
	case w.with.IsZero():
		if !content || t != plumbing.CommitObject {
			return nil
		}
	case !content:
		if _, chained := rw[w.with]; !chained {
			if wt, _, err := r.s.obj.read(w.with); err == nil && wt == t {
				return nil
			}
		}
	}
	return refusal.New(refusal.MissingFact,
		"name the commit by id: git rev-parse REV^{commit} prints the one git reads through the replacement",
		"revision %q reads %s %s, which git reads through %s; nwdes does not follow replace refs or grafts", r.rev, t, h, w.via)
}

// rewrites returns the objects git reads through refs/replace/<id> (loose
// or packed) or info/grafts, reading them on the first call.
func (r *resolver) rewrites() (map[oid.ID]rewrite, error) {
	if r.rewritten != nil {
		return r.rewritten, nil
	}
	m := map[oid.ID]rewrite{}
	dir := r.s.loc.CommonDir
	fail := func(what string, err error) (map[oid.ID]rewrite, error) {
		return nil, refusal.New(refusal.MissingFact, "repair or remove it (git replace --list, git fsck)",
			"revision %q: cannot tell which objects git reads through replacements: %s: %v", r.rev, what, err)
	}
	replacement := func(name, value string) {
		id, ok := strings.CutPrefix(name, "refs/replace/")
		from, okFrom := parseHex(r.s.format, id)
		with, okWith := parseHex(r.s.format, value)
		if ok && okFrom && okWith {
			m[from] = rewrite{via: name, with: with}
		}
	}
	packed, err := os.ReadFile(filepath.Join(dir, "packed-refs"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fail("packed-refs", err)
	}
	if bytes.Contains(packed, []byte(" refs/replace/")) {
		for line := range strings.Lines(string(packed)) {
			value, name, ok := strings.Cut(strings.TrimRight(line, "\n"), " ")
			if ok {
				replacement(name, value)
			}
		}
	}
	loose, err := os.ReadDir(filepath.Join(dir, "refs", "replace"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fail("refs/replace", err)
	}
	for _, e := range loose {
		// git skips a replace ref it cannot read, as any broken ref. A
		// resolver of its own keeps notes about it out of this one's.
		name := "refs/replace/" + e.Name()
		if h, ok := (&resolver{s: r.s, rev: r.rev}).ref(name); ok {
			replacement(name, h.String())
		}
	}
	grafts, err := os.ReadFile(filepath.Join(dir, "info", "grafts"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fail("info/grafts", err)
	}
	for line := range strings.Lines(string(grafts)) {
		if f := strings.Fields(line); len(f) > 0 {
			if id, ok := parseHex(r.s.format, f[0]); ok {
				m[id] = rewrite{via: "info/grafts"}
			}
		}
	}
	r.rewritten = m
	return m, nil
}

func (r *resolver) missing(h oid.ID, err error) error {
	if errors.Is(err, ErrNotFound) {
		return refusal.New(refusal.MissingFact, "fetch the commit or name another", "revision %q: %v", r.rev, err).Wrap(err)
	}
	return fmt.Errorf("revision %q: %w", r.rev, err)
}

// peelToCommit follows tags from h to a commit, which is what the revision
// names.
func (r *resolver) peelToCommit(h oid.ID) (oid.ID, error) {
	for range 10 {
		t, b, err := r.s.obj.read(h)
		if err != nil {
			return oid.Zero, refusal.New(refusal.MissingFact, "fetch the commit or name another", "revision %q: %v", r.rev, err).Wrap(err)
		}
		if err := r.notRewritten(h, t, false); err != nil {
			return oid.Zero, err
		}
		switch t {
		case plumbing.CommitObject:
			return h, nil
		case plumbing.TagObject:
			if h, err = r.tagTarget(h, b); err != nil {
				return oid.Zero, err
			}
		default:
			return oid.Zero, refusal.New(refusal.MissingFact, "name a commit", "revision %q is a %s, not a commit", r.rev, t)
		}
	}
	return oid.Zero, fmt.Errorf("revision %q: tag chain too long", r.rev)
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isHexDigit(s[i]) {
			return false
		}
	}
	return true
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// refSpace is what git's isspace accepts (sane_ctype in ctype.c): unlike
// C's, it leaves out \v and \f.
const refSpace = " \t\n\r"

func isRefSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// File is one file read from a commit's tree.
type File struct {
	Path string
	Blob oid.ID
	Mode uint32
	Data []byte
}

// ReadFile returns the committed file at path in commit's tree, or an error
// wrapping ErrNotFound. Only committed content is read, never a work tree.
func (s *Repo) ReadFile(commit oid.ID, path string) (File, error) {
	e, found, err := s.Lookup(commit, path)
	if err != nil {
		return File{}, err
	}
	if !found || e.Mode == ModeTree || e.Mode == ModeGitlink {
		return File{}, fmt.Errorf("%s at %s is not a committed file: %w", path, commit, ErrNotFound)
	}
	data, err := s.ReadBlob(e.ID)
	if err != nil {
		return File{}, err
	}
	return File{Path: path, Blob: e.ID, Mode: e.Mode, Data: data}, nil
}

// Lookup returns the entry at path in commit's tree (found false when there
// is none). It does not follow symbolic links: a link is returned as such.
// A path that is not slash-separated plain names is refused (SplitPath).
func (s *Repo) Lookup(commit oid.ID, path string) (TreeEntry, bool, error) {
	parts, err := SplitPath(path)
	if err != nil || len(parts) == 0 {
		return TreeEntry{}, false, err
	}
	c, err := s.readCommitID(commit)
	if err != nil {
		return TreeEntry{}, false, err
	}
	h := c.Tree
	for i, name := range parts {
		es, err := s.treeEntries(h)
		if err != nil {
			return TreeEntry{}, false, err
		}
		e, ok := es[name]
		if !ok {
			return TreeEntry{}, false, nil
		}
		if i == len(parts)-1 {
			return TreeEntry{Name: e.name, Mode: e.mode, ID: e.hash}, true, nil
		}
		if !e.isTree() {
			return TreeEntry{}, false, nil
		}
		h = e.hash
	}
	return TreeEntry{}, false, nil
}

// Walk calls fn for every file (not directory) in commit's tree, in order,
// with its slash-separated path and mode.
func (s *Repo) Walk(commit oid.ID, fn func(path string, mode uint32, blob oid.ID) error) error {
	c, err := s.readCommitID(commit)
	if err != nil {
		return err
	}
	var walk func(tree oid.ID, prefix string) error
	walk = func(tree oid.ID, prefix string) error {
		es, err := s.treeEntries(tree)
		if err != nil {
			return err
		}
		for _, name := range sortedKeys(es) {
			e := es[name]
			if e.isTree() {
				if err := walk(e.hash, prefix+name+"/"); err != nil {
					return err
				}
				continue
			}
			if err := fn(prefix+name, e.mode, e.hash); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(c.Tree, "")
}

// SplitPath splits a slash-separated path of a tree into its names,
// refusing (PathInvalid) an empty, ".", ".." or ".git" component and NUL
// or newline in a name. The empty path has no names.
func SplitPath(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	parts := strings.Split(p, "/")
	for _, c := range parts {
		if c == "" || c == "." || c == ".." || strings.EqualFold(c, ".git") || strings.ContainsAny(c, "\x00\n") {
			return nil, refusal.New(refusal.PathInvalid, "use a slash-separated path of plain names",
				"record path %q has an empty, '.', '..' or '.git' component", p)
		}
	}
	return parts, nil
}

// ReadBlob returns a blob's content by id.
func (s *Repo) ReadBlob(id oid.ID) ([]byte, error) {
	if err := s.check(id); err != nil {
		return nil, err
	}
	h := id
	t, b, err := s.obj.read(h)
	if err != nil {
		return nil, err
	}
	if t != plumbing.BlobObject {
		return nil, fmt.Errorf("object %s is a %s, not a blob", h, t)
	}
	return b, nil
}
