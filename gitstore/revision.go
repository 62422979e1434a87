package gitstore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"golang.org/x/sys/unix"

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
	// maxRefFile bounds what is read of a ref file. A longer one can only
	// be a symbolic ref with a target no ref name reaches, or not a ref.
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
//     the same one); symbolic refs are followed up to git's depth of 5;
//   - git describe output, <anything>-g<abbreviated commit id>;
//   - any of these followed by any sequence of ~, ~N, ^, ^N (^0 is the
//     commit itself), ^{commit}, ^{}, ^{tag} and ^{object}.
//
// Annotated tags are peeled to their commit. Everything else git accepts
// (:path, @{...}, ranges, ^{/text}, ^! and ^@, negation) is refused with
// MissingFact naming the revision, never guessed at.
func (s *Store) Resolve(rev string) (plumbing.Hash, error) {
	if rev == "" {
		rev = "HEAD"
	}
	if why := unsupportedSyntax(rev); why != "" {
		return plumbing.ZeroHash, refusal.New("MissingFact",
			"name the commit by id, ref or tag, with ~N, ^N or ^{commit} suffixes; git rev-parse REV^{commit} prints the id of any other revision",
			"revision %q uses %s, which nwdes does not resolve", rev, why)
	}
	r := &resolver{s: s, rev: rev}
	base, ops, err := parseRevision(rev)
	if err != nil {
		return plumbing.ZeroHash, r.unknown(err)
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
		return plumbing.ZeroHash, err
	}
	for _, op := range ops {
		if h, err = r.apply(h, op); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	return s.peelToCommit(h, rev)
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
	s     *Store
	rev   string
	notes []string
	walk  int
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
	e := refusal.New("MissingFact", "name an existing commit (git rev-parse REV shows what git makes of it)", "%s", detail)
	return e.Wrap(cause)
}

// base resolves a revision without suffixes, in get_oid_basic's order: a
// full id, then refs, then describe output, then an abbreviated id.
func (r *resolver) base(name string, mode disambiguation) (plumbing.Hash, error) {
	if name == "" {
		return plumbing.ZeroHash, r.unknown(errors.New("nothing names the commit the suffixes apply to"))
	}
	if name == "@" {
		name = "HEAD"
	}
	if len(name) == 40 && isHex(name) {
		return plumbing.NewHash(strings.ToLower(name)), nil
	}
	for _, rule := range refRules {
		if h, ok := r.ref(fmt.Sprintf(rule, name)); ok {
			return h, nil
		}
	}
	if abbrev, ok := describedID(name); ok {
		return r.abbreviated(abbrev, commitOnly)
	}
	if len(name) >= minAbbrev && len(name) < 40 && isHex(name) {
		return r.abbreviated(name, mode)
	}
	return plumbing.ZeroHash, r.unknown(nil)
}

// describedID returns the abbreviated id at the end of git describe output
// ("v1.2-3-gabc1234"), found as git's get_describe_name finds it: a run of
// hexadecimal digits after "-g", with something before the "-g".
func describedID(name string) (string, bool) {
	for i := len(name) - 1; i >= 2; i-- {
		if isHexDigit(name[i]) {
			continue
		}
		if name[i] == 'g' && name[i-1] == '-' && len(name)-(i+1) >= minAbbrev && len(name)-(i+1) <= 40 {
			return name[i+1:], true
		}
		return "", false
	}
	return "", false
}

// abbreviated resolves an abbreviated id as git's get_short_oid does: a
// single matching object is the answer whatever its type; among several,
// the one that satisfies mode is, and anything else is ambiguous.
func (r *resolver) abbreviated(prefix string, mode disambiguation) (plumbing.Hash, error) {
	prefix = strings.ToLower(prefix)
	db, err := r.s.obj.reader()
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("revision %q: %w", r.rev, err)
	}
	ids, err := db.Prefix(prefix, maxCandidates+1)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("revision %q: look up short id %s: %w", r.rev, prefix, err)
	}
	switch {
	case len(ids) == 0:
		return plumbing.ZeroHash, r.unknown(fmt.Errorf("no object id starts with %s", prefix))
	case len(ids) == 1:
		return ids[0], nil
	case len(ids) > maxCandidates:
		return plumbing.ZeroHash, r.ambiguous(prefix, fmt.Sprintf("more than %d objects", maxCandidates))
	}
	var (
		fits  []plumbing.Hash
		kinds []string
	)
	for _, id := range ids {
		t, _, err := r.s.obj.read(id)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("revision %q: %w", r.rev, err)
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
	return plumbing.ZeroHash, r.ambiguous(prefix, what)
}

func (r *resolver) ambiguous(prefix, what string) error {
	return refusal.New("MissingFact",
		"give more digits of the id (git rev-parse --disambiguate="+prefix+" lists the candidates)",
		"revision %q is ambiguous: short id %s matches %s", r.rev, prefix, what)
}

// ref resolves a full ref name as git's files backend does, following
// symbolic refs. A name that does not exist, a dangling symbolic ref and a
// file that does not hold a ref are all "not this name", so the caller
// moves on to git's next rule; the last two are noted for the refusal.
func (r *resolver) ref(name string) (plumbing.Hash, bool) {
	first := name
	for range symrefDepth {
		if !validRefName(name) {
			if name != first {
				r.note("symbolic ref %s points at %q, which is not a ref name", first, name)
			}
			return plumbing.ZeroHash, false
		}
		b, err := readRefFile(r.refPath(name))
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.EISDIR) {
			if strings.HasPrefix(name, "refs/") {
				h, err := r.s.refs.readPacked(RefName(name))
				if err != nil {
					r.note("%v", err)
					return plumbing.ZeroHash, false
				}
				if !h.IsZero() {
					return h, true
				}
			}
			if name != first {
				r.note("%s points at %s, which does not exist (a branch with no commits yet?)", first, name)
			}
			return plumbing.ZeroHash, false
		}
		if err != nil {
			if !errors.Is(err, unix.ENOTDIR) {
				r.note("ref %s: %v", name, err)
			}
			return plumbing.ZeroHash, false
		}
		v := strings.TrimRight(string(b), " \t\n\v\f\r")
		if target, ok := strings.CutPrefix(v, "ref:"); ok {
			name = strings.TrimLeft(target, " \t\n\v\f\r")
			continue
		}
		if len(v) >= 40 && isHex(v[:40]) && (len(v) == 40 || isSpace(v[40])) {
			return plumbing.NewHash(strings.ToLower(v[:40])), true
		}
		if strings.Contains(name, "/") {
			r.note("ignored %s: it holds %q, not an object id", name, text.Truncate(v, 50))
		}
		return plumbing.ZeroHash, false
	}
	r.note("symbolic ref %s nests deeper than %d", first, symrefDepth)
	return plumbing.ZeroHash, false
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

func readRefFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxRefFile))
	if err != nil {
		return nil, err
	}
	return b, nil
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
func (r *resolver) apply(h plumbing.Hash, op revOp) (plumbing.Hash, error) {
	switch op.kind {
	case opAncestor, opParent, opCommit:
		t, c, err := r.peel(h)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if t != plumbing.CommitObject {
			return plumbing.ZeroHash, r.unknown(fmt.Errorf("%s applied to %s, which is a %s", op, h, t))
		}
		switch {
		case op.kind == opCommit || op.kind == opParent && op.n == 0:
			return c, nil
		case op.kind == opParent:
			info, err := r.commit(c)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			if op.n > len(info.Parents) {
				return plumbing.ZeroHash, r.unknown(fmt.Errorf("commit %s has %d parents, not %d", c, len(info.Parents), op.n))
			}
			return info.Parents[op.n-1], nil
		}
		for range op.n {
			if r.walk++; r.walk > r.s.opts.MaxWalk {
				return plumbing.ZeroHash, refusal.New("WalkLimit", "name the commit more directly, or raise nwdes.maxWalk",
					"revision %q walks more than %d commits", r.rev, r.s.opts.MaxWalk)
			}
			info, err := r.commit(c)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			if len(info.Parents) == 0 {
				return plumbing.ZeroHash, r.unknown(fmt.Errorf("%s goes past root commit %s", op, c))
			}
			c = info.Parents[0]
		}
		return c, nil
	case opPeel:
		_, p, err := r.peel(h)
		return p, err
	}
	t, _, err := r.s.obj.read(h)
	if err != nil {
		return plumbing.ZeroHash, r.missing(h, err)
	}
	if op.kind == opTag && t != plumbing.TagObject {
		return plumbing.ZeroHash, r.unknown(fmt.Errorf("^{tag} applied to %s, which is a %s", h, t))
	}
	return h, nil
}

// peel follows tags from h to the first object that is not a tag and
// returns its type and id.
func (r *resolver) peel(h plumbing.Hash) (plumbing.ObjectType, plumbing.Hash, error) {
	for range 10 {
		t, b, err := r.s.obj.read(h)
		if err != nil {
			return 0, plumbing.ZeroHash, r.missing(h, err)
		}
		if t != plumbing.TagObject {
			return t, h, nil
		}
		line, _, _ := strings.Cut(string(b), "\n")
		target, ok := strings.CutPrefix(line, "object ")
		if !ok || !isHex40(target) {
			return 0, plumbing.ZeroHash, fmt.Errorf("tag %s is malformed", h)
		}
		h = plumbing.NewHash(target)
	}
	return 0, plumbing.ZeroHash, fmt.Errorf("revision %q: tag chain too long", r.rev)
}

func (r *resolver) commit(h plumbing.Hash) (commitInfo, error) {
	t, b, err := r.s.obj.read(h)
	if err != nil {
		return commitInfo{}, r.missing(h, err)
	}
	if t != plumbing.CommitObject {
		return commitInfo{}, r.unknown(fmt.Errorf("%s is a %s, not a commit", h, t))
	}
	return decodeCommit(h, b)
}

func (r *resolver) missing(h plumbing.Hash, err error) error {
	if errors.Is(err, ErrNotFound) {
		return refusal.New("MissingFact", "fetch the commit or name another", "revision %q: %v", r.rev, err).Wrap(err)
	}
	return fmt.Errorf("revision %q: %w", r.rev, err)
}

func (s *Store) peelToCommit(h plumbing.Hash, rev string) (plumbing.Hash, error) {
	for i := 0; i < 10; i++ {
		t, b, err := s.obj.read(h)
		if err != nil {
			return plumbing.ZeroHash, refusal.New("MissingFact", "fetch the commit or name another", "revision %q: %v", rev, err).Wrap(err)
		}
		switch t {
		case plumbing.CommitObject:
			return h, nil
		case plumbing.TagObject:
			line, _, _ := strings.Cut(string(b), "\n")
			target, ok := strings.CutPrefix(line, "object ")
			if !ok || !isHex40(target) {
				return plumbing.ZeroHash, fmt.Errorf("tag %s is malformed", h)
			}
			h = plumbing.NewHash(target)
		default:
			return plumbing.ZeroHash, refusal.New("MissingFact", "name a commit", "revision %q is a %s, not a commit", rev, t)
		}
	}
	return plumbing.ZeroHash, fmt.Errorf("revision %q: tag chain too long", rev)
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

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// File is one file read from a commit's tree.
type File struct {
	Path string
	Blob plumbing.Hash
	Mode uint32
	Data []byte
}

// ReadFile returns the committed file at path in commit's tree, or an error
// wrapping ErrNotFound. Only committed content is read, never a work tree.
func (s *Store) ReadFile(commit plumbing.Hash, path string) (File, error) {
	tx, err := s.Tree(commit)
	if err != nil {
		return File{}, err
	}
	e, found, err := tx.Lookup(path)
	if err != nil {
		return File{}, err
	}
	if !found || e.Mode == ModeTree || e.Mode == ModeGitlink {
		return File{}, fmt.Errorf("%s at %s is not a committed file: %w", path, commit, ErrNotFound)
	}
	data, err := s.ReadBlob(e.Hash)
	if err != nil {
		return File{}, err
	}
	return File{Path: path, Blob: e.Hash, Mode: e.Mode, Data: data}, nil
}

// Walk calls fn for every file (not directory) in commit's tree, in order,
// with its slash-separated path and mode.
func (s *Store) Walk(commit plumbing.Hash, fn func(path string, mode uint32, blob plumbing.Hash) error) error {
	tx, err := s.Tree(commit)
	if err != nil {
		return err
	}
	var walk func(n *node, prefix string) error
	walk = func(n *node, prefix string) error {
		if err := tx.load(n); err != nil {
			return err
		}
		names := make([]string, 0, len(n.entries))
		for k := range n.entries {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, name := range names {
			e := n.entries[name]
			if e.mode == modeTree {
				if e.sub == nil {
					e.sub = &node{hash: e.hash}
				}
				if err := walk(e.sub, prefix+name+"/"); err != nil {
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
	return walk(tx.root, "")
}

// ReadBlob returns a blob's content by id.
func (s *Store) ReadBlob(h plumbing.Hash) ([]byte, error) {
	t, b, err := s.obj.read(h)
	if err != nil {
		return nil, err
	}
	if t != plumbing.BlobObject {
		return nil, fmt.Errorf("object %s is a %s, not a blob", h, t)
	}
	return b, nil
}
