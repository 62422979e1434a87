package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"

	"slices"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/nwdes/nwdes/gitstore/odb"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/internal/lazyre"
)

// AdoptLimits bound what Adopt copies from another repository's objects.
type AdoptLimits struct {
	// Objects is how many objects it copies at most.
	Objects int
	// Bytes bounds their content together; Object each one's (and the
	// deltas read on the way to it).
	Bytes, Object int64
}

// Adopted is what Adopt copied.
type Adopted struct {
	// Objects and Bytes count the objects copied and their content;
	// Commits the commits among them (those the other repository made
	// that this one lacked).
	Objects, Commits int
	Bytes            int64
}

// AdoptError says why Adopt refused what it read: an object missing,
// malformed, of the wrong type, or past a limit. Nothing was written.
type AdoptError struct {
	Object oid.ID // the object refused, when there is one
	Why    string
}

func (e *AdoptError) Error() string {
	if e.Object.IsZero() {
		return e.Why
	}
	return fmt.Sprintf("object %s: %s", e.Object, e.Why)
}

// Adopt copies into this repository the objects reachable from the commit
// head in objectsDir, the object directory of a repository nwdes does not
// trust (a job's), and points ref at head. ref is declared Commit and must
// not exist, or already name head (then nothing is done).
//
// objectsDir is read alone (odb.OpenIsolated): its loose objects and packs,
// never its info/alternates nor any configuration, and no git runs. The
// walk from head stops at every object this repository already holds (its
// closure is taken as present, as git does); every other object must be
// in objectsDir, hash to its name, be of the type its referrer says, and
// parse as git fsck --strict would have it (commit headers and
// identities, tree entry modes, names, order and uniqueness; no NUL in a
// commit, no .git entry, no .gitmodules: its contents are not checked as
// git checks them). A submodule's commit (a gitlink) is not followed.
// Past a limit of lim, or on any refusal, nothing is written and the error
// is an *AdoptError. Objects present in objectsDir but not reachable from
// head are never read.
//
// The objects are written as one pack, published under the ref's lock as
// Update publishes its own, and the ref moves by compare-and-swap from
// nothing. (gitstore.Store.Adopt, which checks that ref is declared to
// name a commit, is the one way the store writes a Commit ref.)
func (s *Repo) Adopt(ctx context.Context, ref RefName, objectsDir string, head oid.ID, lim AdoptLimits) (*Adopted, error) {
	if err := ref.Validate(); err != nil {
		return nil, err
	}
	if lim.Objects < 1 || lim.Bytes < 1 || lim.Object < 1 {
		return nil, fmt.Errorf("adopt into %s: limits %+v are not all at least 1", ref, lim)
	}
	if err := s.check(head); err != nil {
		return nil, err
	}
	h := head
	cur, err := s.refs.read(ref)
	if err != nil {
		return nil, err
	}
	if cur == h {
		return &Adopted{}, nil
	}
	if !cur.IsZero() {
		return nil, fmt.Errorf("adopt into %s: it already names %s: %w", ref, cur, ErrConflict)
	}
	foreign, err := odb.OpenIsolated(objectsDir, s.format, lim.Object)
	if err != nil {
		return nil, err
	}
	defer foreign.Close()
	ours, release, err := s.obj.acquire()
	if err != nil {
		return nil, err
	}
	defer release()

	type want struct {
		h    oid.ID
		typ  plumbing.ObjectType
		from string // what refers to it, for a person
	}
	var (
		batch = Batch{f: s.format}
		out   Adopted
		queue = []want{{h, plumbing.CommitObject, "the head"}}
		seen  = map[oid.ID]bool{}
	)
	for len(queue) > 0 {
		w := queue[0]
		queue = queue[1:]
		if seen[w.h] {
			continue
		}
		seen[w.h] = true
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if have, err := ours.Has(w.h); err != nil {
			return nil, err
		} else if have {
			continue
		}
		refuse := func(format string, args ...any) (*Adopted, error) {
			return nil, &AdoptError{Object: w.h, Why: fmt.Sprintf(format, args...)}
		}
		if out.Objects >= lim.Objects {
			return refuse("more than %d objects to copy", lim.Objects)
		}
		typ, data, err := foreign.Read(w.h)
		switch {
		case errors.Is(err, odb.ErrNotFound):
			return refuse("%s is neither in %s nor in this repository", w.from, objectsDir)
		case errors.Is(err, odb.ErrTooLarge):
			return refuse("larger than %d bytes", lim.Object)
		case err != nil:
			return refuse("unreadable: %v", err)
		case typ != w.typ:
			return refuse("%s is a %s, not a %s", w.from, typ, w.typ)
		}
		if out.Bytes+int64(len(data)) > lim.Bytes {
			return refuse("the objects to copy pass %d bytes", lim.Bytes)
		}
		out.Objects++
		out.Bytes += int64(len(data))
		switch typ {
		case plumbing.CommitObject:
			tree, parents, why := checkCommit(s.format, data)
			if why != "" {
				return refuse("a malformed commit: %s", why)
			}
			out.Commits++
			queue = append(queue, want{tree, plumbing.TreeObject, "the tree of commit " + w.h.String()})
			for _, p := range parents {
				queue = append(queue, want{p, plumbing.CommitObject, "a parent of commit " + w.h.String()})
			}
		case plumbing.TreeObject:
			entries, why := checkTree(s.format, data)
			if why != "" {
				return refuse("a malformed tree: %s", why)
			}
			for _, e := range entries {
				switch e.mode {
				case modeTree:
					queue = append(queue, want{e.hash, plumbing.TreeObject, fmt.Sprintf("entry %q of tree %s", e.name, w.h)})
				case modeGitlink:
				default:
					queue = append(queue, want{e.hash, plumbing.BlobObject, fmt.Sprintf("entry %q of tree %s", e.name, w.h)})
				}
			}
		}
		batch.add(typ, data)
	}
	sp, err := s.obj.stagePack(&batch, s.opts.Durable)
	if err != nil {
		return nil, err
	}
	if sp != nil {
		s.obj.hold(h, sp)
	}
	if err := s.moveRef(ref, oid.Zero, h); err != nil {
		return nil, fmt.Errorf("adopt into %s: %w", ref, err)
	}
	return &out, nil
}

const modeGitlink = 0o160000

// identLine is a git identity as git fsck reads one: a name (maybe empty)
// ended by a space, <email>, seconds since the epoch without leading
// zeros, and a time zone.
var identLine = lazyre.New(`^[^<>\n]* <[^<>\n]*> (0|[1-9][0-9]{0,18}) [+-][0-9]{4}$`)

// checkCommit reads a commit as git fsck --strict does, returning its tree
// and parents, or why it is malformed.
func checkCommit(f oid.Format, b []byte) (oid.ID, []oid.ID, string) {
	if bytes.IndexByte(b, 0) >= 0 {
		return oid.Zero, nil, "it holds a NUL byte"
	}
	head, _, found := bytes.Cut(b, []byte("\n\n"))
	if !found {
		if len(b) == 0 || b[len(b)-1] != '\n' {
			return oid.Zero, nil, "its headers are not terminated"
		}
		head = b[:len(b)-1]
	}
	lines := strings.Split(string(head), "\n")
	var (
		tree    oid.ID
		parents []oid.ID
		i       int
	)
	hexLine := func(key string) (oid.ID, bool) {
		if i >= len(lines) {
			return oid.Zero, false
		}
		v, ok := strings.CutPrefix(lines[i], key+" ")
		if !ok {
			return oid.Zero, false
		}
		id, ok := parseHex(f, v)
		if !ok {
			return oid.Zero, false
		}
		i++
		return id, true
	}
	tree, ok := hexLine("tree")
	if !ok {
		return tree, nil, "it does not begin with a tree line"
	}
	for i < len(lines) && strings.HasPrefix(lines[i], "parent ") {
		p, ok := hexLine("parent")
		if !ok {
			return tree, nil, fmt.Sprintf("line %d is a bad parent line", i+1)
		}
		parents = append(parents, p)
	}
	for _, key := range []string{"author", "committer"} {
		if i >= len(lines) || !strings.HasPrefix(lines[i], key+" ") {
			return tree, nil, "it has no " + key + " line where git expects one"
		}
		if !identLine.MatchString(strings.TrimPrefix(lines[i], key+" ")) {
			return tree, nil, fmt.Sprintf("its %s line is not a git identity (Name <email> seconds +zone)", key)
		}
		i++
	}
	for ; i < len(lines); i++ {
		if strings.HasPrefix(lines[i], "author ") || strings.HasPrefix(lines[i], "committer ") {
			return tree, nil, "it has a second " + strings.Fields(lines[i])[0] + " line"
		}
	}
	return tree, parents, ""
}

// checkTree reads a tree as git fsck --strict does, returning its entries
// or why it is malformed.
func checkTree(f oid.Format, b []byte) ([]treeEntry, string) {
	var out []treeEntry
	hl := f.Size()
	names := map[string]bool{}
	prev := ""
	for len(b) > 0 {
		sp := bytes.IndexByte(b, ' ')
		nul := bytes.IndexByte(b, 0)
		if sp <= 0 || nul < sp || len(b) < nul+1+hl {
			return nil, "an entry is cut short"
		}
		var mode uint32
		switch string(b[:sp]) {
		case "40000":
			mode = modeTree
		case "100644":
			mode = modeBlob
		case "100755":
			mode = 0o100755
		case "120000":
			mode = 0o120000
		case "160000":
			mode = modeGitlink
		default:
			return nil, fmt.Sprintf("mode %q is not one git writes", b[:sp])
		}
		name := string(b[sp+1 : nul])
		switch folded := strings.ToLower(strings.TrimRight(name, ". ")); {
		case name == "" || name == "." || name == ".." || strings.Contains(name, "/") || len(name) > 4096:
			return nil, fmt.Sprintf("an entry is named %q", name)
		case folded == ".git" || folded == "git~1":
			return nil, fmt.Sprintf("an entry is named %q, which git reads as its own directory", name)
		case folded == ".gitmodules":
			return nil, fmt.Sprintf("an entry is named %q (a job may not change submodules)", name)
		case names[name]:
			return nil, fmt.Sprintf("two entries are named %q", name)
		}
		names[name] = true
		id, ok := fromRaw(f, b[nul+1:nul+1+hl])
		if !ok || id.IsZero() {
			return nil, fmt.Sprintf("entry %q has a null id", name)
		}
		e := treeEntry{name: name, mode: mode, hash: id}
		if k := treeKey(e); prev != "" && k <= prev {
			return nil, fmt.Sprintf("entry %q is out of git's order", name)
		} else {
			prev = k
		}
		out = append(out, e)
		b = b[nul+1+hl:]
	}
	return out, ""
}

// ChangedPaths lists the paths of files (blobs, links, submodules) whose
// content or mode differs between the trees of commits from and to, as
// git diff --name-only does (no rename detection), sorted; at most limit
// are listed, and the number of all of them is returned. Subtrees the two
// share are not read.
func (s *Repo) ChangedPaths(from, to oid.ID, limit int) ([]string, int, error) {
	fc, err := s.readCommitID(from)
	if err != nil {
		return nil, 0, err
	}
	tc, err := s.readCommitID(to)
	if err != nil {
		return nil, 0, err
	}
	var paths []string
	n := 0
	add := func(p string) {
		n++
		if len(paths) < limit {
			paths = append(paths, p)
		}
	}
	var all func(dir string, tree oid.ID) error
	all = func(dir string, tree oid.ID) error {
		es, err := s.treeEntries(tree)
		if err != nil {
			return err
		}
		for _, name := range sortedKeys(es) {
			if e := es[name]; e.isTree() {
				if err := all(dir+name+"/", e.hash); err != nil {
					return err
				}
			} else {
				add(dir + name)
			}
		}
		return nil
	}
	var diff func(dir string, a, b oid.ID) error
	diff = func(dir string, a, b oid.ID) error {
		if a == b {
			return nil
		}
		ae, err := s.treeEntries(a)
		if err != nil {
			return err
		}
		be, err := s.treeEntries(b)
		if err != nil {
			return err
		}
		names := map[string]bool{}
		for k := range ae {
			names[k] = true
		}
		for k := range be {
			names[k] = true
		}
		for _, name := range sortedKeys(names) {
			x, inA := ae[name]
			y, inB := be[name]
			switch {
			case inA && inB && x.isTree() && y.isTree():
				err = diff(dir+name+"/", x.hash, y.hash)
			case inA && inB && x.hash == y.hash && x.mode == y.mode:
			default:
				for _, side := range []struct {
					e  treeEntry
					in bool
				}{{x, inA}, {y, inB}} {
					if side.in && side.e.isTree() {
						if err = all(dir+name+"/", side.e.hash); err != nil {
							return err
						}
					}
				}
				if inA && !x.isTree() || inB && !y.isTree() {
					add(dir + name)
				}
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	if err := diff("", fc.Tree, tc.Tree); err != nil {
		return nil, 0, err
	}
	sort.Strings(paths)
	return paths, n, nil
}

func (s *Repo) treeEntries(h oid.ID) (map[string]treeEntry, error) {
	t, b, err := s.obj.read(h)
	if err != nil {
		return nil, err
	}
	if t != plumbing.TreeObject {
		return nil, fmt.Errorf("object %s is a %s, expected a tree", h, t)
	}
	es, err := decodeTree(h, b)
	if err != nil {
		return nil, err
	}
	out := make(map[string]treeEntry, len(es))
	for _, e := range es {
		out[e.Name] = treeEntry{name: e.Name, mode: e.Mode, hash: e.ID}
	}
	return out, nil
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
