package examine

import (
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"

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
	glob = strings.TrimPrefix(strings.TrimPrefix(glob, "./"), "/")
	if glob == "" {
		return false
	}
	if strings.HasSuffix(glob, "/") {
		glob += "**"
	}
	return matchGlob(glob, path)
}

// matchGlob decides each (glob offset, path offset) pair once, with a
// constant number of steps per pair, so a glob costs at most
// len(g)*len(p) steps however many stars it holds.
func matchGlob(g, p string) bool {
	const unknown, no, yes = 0, 1, 2
	memo := make([]byte, (len(g)+1)*(len(p)+1))
	var match func(gi, pi int) bool
	match = func(gi, pi int) bool {
		k := gi*(len(p)+1) + pi
		if memo[k] != unknown {
			return memo[k] == yes
		}
		v := false
		switch {
		case gi == len(g):
			v = pi == len(p)
		case strings.HasPrefix(g[gi:], "**"):
			rest := gi
			for rest < len(g) && g[rest] == '*' {
				rest++
			}
			// At a segment start, `**/` may stand for no directory at
			// all; otherwise `**` matches nothing more here, or one more
			// byte of anything.
			atSegment := pi == 0 || p[pi-1] == '/'
			v = (atSegment && rest < len(g) && g[rest] == '/' && match(rest+1, pi)) ||
				match(rest, pi) || (pi < len(p) && match(gi, pi+1))
		case g[gi] == '*':
			v = match(gi+1, pi) || (pi < len(p) && p[pi] != '/' && match(gi, pi+1))
		case g[gi] == '?':
			if pi < len(p) && p[pi] != '/' {
				_, size := utf8.DecodeRuneInString(p[pi:])
				v = match(gi+1, pi+size)
			}
		default:
			v = pi < len(p) && p[pi] == g[gi] && match(gi+1, pi+1)
		}
		memo[k] = no
		if v {
			memo[k] = yes
		}
		return v
	}
	return match(0, 0)
}

// InScope reports whether any of globs matches path.
func InScope(globs []string, path string) bool {
	for _, g := range globs {
		if MatchScope(g, path) {
			return true
		}
	}
	return false
}

// TouchedFiles lists, sorted, every path whose content, mode or presence
// differs between the trees of two commits: added, deleted, modified and
// mode-changed files, and gitlinks moved. A rename touches both names. It
// compares the trees in the store; it never runs git.
func TouchedFiles(st *gitstore.Store, from, to plumbing.Hash) ([]string, error) {
	type file struct {
		mode uint32
		blob plumbing.Hash
	}
	before := map[string]file{}
	if err := st.Walk(from, func(p string, mode uint32, blob plumbing.Hash) error {
		before[p] = file{mode, blob}
		return nil
	}); err != nil {
		return nil, err
	}
	var touched []string
	if err := st.Walk(to, func(p string, mode uint32, blob plumbing.Hash) error {
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
