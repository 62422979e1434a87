package examine

import (
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/nwdes/nwdes/gitstore/oid"

	"github.com/nwdes/nwdes/gitstore"
)

// MatchScope reports whether a FILE SCOPE glob matches path, a
// slash-separated path relative to the tree root. The whole path must
// match:
//
//   - `*` matches any run of characters within one path segment;
//   - `?` matches one character other than `/`;
//   - `**` matches any run of characters across segments, and `**/`
//     also matches no directory at all (`a/**/b` matches `a/b`);
//   - a glob ending in `/` matches everything beneath that directory;
//   - a leading `/` or `./` anchors at the root, which every glob is anyway;
//   - every other character matches itself.
//
// A plain name matches that path only: `docs` does not cover `docs/a.md`
// (write `docs/` or `docs/**`). Narrower is the fail-closed side: a file
// left out shows up as out of scope, where someone sees it.
func MatchScope(glob, path string) bool {
	re := compileScope(glob)
	return re != nil && re.MatchString(path)
}

// compileScope turns a glob into an anchored regular expression. Go's
// regexp engine runs in time linear in the path and in bounded memory,
// with no recursion, whatever the glob: a committed path of megabytes
// against `*` costs a scan, not a stack. It returns nil for a glob that
// matches nothing (an empty one).
func compileScope(glob string) *regexp.Regexp {
	glob = strings.TrimPrefix(strings.TrimPrefix(glob, "./"), "/")
	if glob == "" || !utf8.ValidString(glob) {
		// Contracts are UTF-8 (ParseContract refuses others); a glob that
		// is not matches nothing rather than something by accident.
		return nil
	}
	if strings.HasSuffix(glob, "/") {
		glob += "**"
	}
	var b strings.Builder
	// (?s): a path may hold a newline, which `.` must match too.
	b.WriteString(`(?s)^`)
	for i := 0; i < len(glob); {
		switch {
		case glob[i] == '*':
			j := i
			for j < len(glob) && glob[j] == '*' {
				j++
			}
			switch {
			case j-i == 1:
				b.WriteString(`[^/]*`)
			case j < len(glob) && glob[j] == '/' && (i == 0 || glob[i-1] == '/'):
				// At a segment start, `**/` may also stand for no
				// directory at all: `a/**/b` matches `a/b`.
				b.WriteString(`(?:.*/)?`)
				j++
			default:
				b.WriteString(`.*`)
			}
			i = j
		case glob[i] == '?':
			b.WriteString(`[^/]`)
			i++
		default:
			_, size := utf8.DecodeRuneInString(glob[i:])
			b.WriteString(regexp.QuoteMeta(glob[i : i+size]))
			i += size
		}
	}
	b.WriteString(`$`)
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil // cannot happen: every piece is quoted or fixed
	}
	return re
}

// Scope is a compiled FILE SCOPE: its globs compiled once, for matching
// many paths.
type Scope struct{ res []*regexp.Regexp }

// CompileScope compiles a contract's FILE SCOPE.
func CompileScope(globs []string) *Scope {
	s := &Scope{}
	for _, g := range globs {
		if re := compileScope(g); re != nil {
			s.res = append(s.res, re)
		}
	}
	return s
}

// Match reports whether any glob of the scope matches path.
func (s *Scope) Match(path string) bool {
	for _, re := range s.res {
		if re.MatchString(path) {
			return true
		}
	}
	return false
}

// InScope reports whether any of globs matches path.
func InScope(globs []string, path string) bool { return CompileScope(globs).Match(path) }

// TouchedFiles lists, sorted, every path whose content, mode or presence
// differs between the trees of two commits: added, deleted, modified and
// mode-changed files, and gitlinks moved. A rename touches both names. It
// compares the trees in the store; it never runs git.
func TouchedFiles(st gitstore.CommitReader, from, to oid.ID) ([]string, error) {
	type file struct {
		mode uint32
		blob oid.ID
	}
	before := map[string]file{}
	if err := st.Walk(from, func(p string, mode uint32, blob oid.ID) error {
		before[p] = file{mode, blob}
		return nil
	}); err != nil {
		return nil, err
	}
	var touched []string
	if err := st.Walk(to, func(p string, mode uint32, blob oid.ID) error {
		if b, ok := before[p]; !ok || b != (file{mode, blob}) {
			touched = append(touched, p)
		}
		delete(before, p)
		return nil
	}); err != nil {
		return nil, err
	}
	for p := range before {
		touched = append(touched, p)
	}
	sort.Strings(touched)
	return touched, nil
}
