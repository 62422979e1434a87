package examine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/refusal"
)

// The public projection: what an examiner may read of a candidate, its
// prose, never its source. It holds the committed prose under the default
// documentation roots, and what the candidate's committed .nwave/config.json
// declares under examine.public (docs/workspace.md). The projection a
// workspace shows is recorded in the store (projection.go).

// ConfigPath is the committed configuration that may declare public prose.
const ConfigPath = ".nwave/config.json"

// DefaultPublicRoots hold the prose every candidate shows: their .md and
// .tmpl files.
var DefaultPublicRoots = []string{"docs/guides", "nWave/skills", "nWave/templates", "nWave/agents"}

// PublicFile is one file of the projection: a committed regular file.
type PublicFile struct {
	Path string
	Mode uint32
	Blob oid.ID
}

// ParsePublic reads examine.public from a configuration's bytes: the
// declared paths and globs, none when the configuration declares none. A
// configuration that is not a JSON object, an examine that is not an
// object or holds a key other than public and level, a public that is not
// a non-empty array of strings, or an entry that is absolute or has an
// empty, "." or ".." segment is refused (InputUnreadable naming
// examine.public).
func ParsePublic(b []byte) ([]string, error) {
	bad := func(format string, args ...any) error {
		return refusal.NewUnreadable(refusal.InputUnreadable,
			`declare public prose as {"examine": {"public": ["docs/runbooks/**.md", "README.md"]}} in `+ConfigPath,
			"examine.public in %s: %s", ConfigPath, fmt.Sprintf(format, args...))
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil || top == nil {
		return nil, bad("the configuration is not a JSON object")
	}
	raw, ok := top["examine"]
	if !ok {
		return nil, nil
	}
	var ex map[string]json.RawMessage
	if err := json.Unmarshal(raw, &ex); err != nil || ex == nil || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, bad("examine is not an object")
	}
	for k := range ex {
		if k != "public" && k != "level" {
			return nil, bad("examine holds %q, which is neither public nor level", k)
		}
	}
	pub, ok := ex["public"]
	if !ok {
		return nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(pub, &items); err != nil || len(items) == 0 {
		return nil, bad("public is not a non-empty array")
	}
	var out []string
	for i, it := range items {
		var s string
		if err := json.Unmarshal(it, &s); err != nil {
			return nil, bad("entry %d is not a string", i+1)
		}
		if strings.HasPrefix(s, "/") {
			return nil, bad("entry %d %q is absolute", i+1, s)
		}
		for _, seg := range strings.Split(s, "/") {
			if seg == "" || seg == "." || seg == ".." {
				return nil, bad("entry %d %q has an empty, . or .. segment", i+1, s)
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// publicPattern compiles a declared entry: * matches within one path
// segment, ** across segments, and /**/ zero or more directories; every
// other character stands for itself.
func publicPattern(p string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(p); {
		switch {
		case strings.HasPrefix(p[i:], "/**/"):
			b.WriteString("/(?:.*/)?")
			i += 4
		case i == 0 && strings.HasPrefix(p, "**/"):
			b.WriteString("(?:.*/)?")
			i += 3
		case strings.HasPrefix(p[i:], "**"):
			b.WriteString(".*")
			i += 2
		case p[i] == '*':
			b.WriteString("[^/]*")
			i++
		default:
			b.WriteString(regexp.QuoteMeta(p[i : i+1]))
			i++
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// isDefaultPublic reports prose under the default roots.
func isDefaultPublic(path string) bool {
	if !strings.HasSuffix(path, ".md") && !strings.HasSuffix(path, ".tmpl") {
		return false
	}
	for _, r := range DefaultPublicRoots {
		if strings.HasPrefix(path, r+"/") {
			return true
		}
	}
	return false
}

// PublicProjection lists the public files of commit, sorted by path: the
// default prose, and every committed regular file an examine.public entry
// of the commit's own configuration matches. Only committed blobs are read;
// symbolic links and submodules are never public.
func PublicProjection(st gitstore.CommitReader, commit oid.ID) ([]PublicFile, error) {
	var patterns []*regexp.Regexp
	f, err := st.ReadFile(commit, ConfigPath)
	switch {
	case errors.Is(err, gitstore.ErrNotFound):
	case err != nil:
		return nil, err
	default:
		declared, err := ParsePublic(f.Data)
		if err != nil {
			return nil, err
		}
		for _, d := range declared {
			patterns = append(patterns, publicPattern(d))
		}
	}
	var out []PublicFile
	err = st.Walk(commit, func(path string, mode uint32, blob oid.ID) error {
		if mode != gitstore.ModeFile && mode != gitstore.ModeExec {
			return nil
		}
		public := isDefaultPublic(path)
		for _, p := range patterns {
			public = public || p.MatchString(path)
		}
		if public {
			out = append(out, PublicFile{Path: path, Mode: mode, Blob: blob})
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, err
}
