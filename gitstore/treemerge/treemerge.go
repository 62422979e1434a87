package treemerge

import (
	"bytes"
	"maps"
	"slices"

	"github.com/nwdes/nwdes/gitstore/oid"
)

// Git tree modes the merge tells apart.
const (
	ModeTree uint32 = 0o40000
	ModeBlob uint32 = 0o100644
)

// Entry is one tree entry: its mode and object (the name is its key).
type Entry struct {
	Mode uint32
	Hash oid.ID
}

// IsTree reports whether the entry is a directory.
func (e Entry) IsTree() bool { return e.Mode == ModeTree }

// Objects is where the merge reads and writes: trees as name → entry (an
// absent tree, the zero id, is empty), blobs as bytes.
type Objects interface {
	Tree(h oid.ID) (map[string]Entry, error)
	WriteTree(entries map[string]Entry) (oid.ID, error)
	Blob(h oid.ID) ([]byte, error)
	WriteBlob(data []byte) (oid.ID, error)
}

// Rules are what the caller decides.
type Rules struct {
	// Notes makes two versions of one file the concatenation of both texts
	// (a notes tree), rather than a choice.
	Notes bool
	// NoteMerge, with Notes, joins two versions of one note given their
	// common base (nil when there was none) instead of concatenating them.
	NoteMerge func(base, ours, theirs []byte) ([]byte, error)
	// Unit reports whether a directory (below the root) is decided whole.
	Unit func(entries map[string]Entry) bool
	// Decide picks the unit directory at path that both sides changed; it
	// returns ours or theirs.
	Decide func(path string, ours, theirs oid.ID, o, t map[string]Entry) (oid.ID, error)
}

// Merge merges the trees ours and theirs over base (zero ids are absent
// trees) and returns the merged tree (zero when it is empty) and the paths
// where both sides had changed something and a rule chose or joined.
func Merge(objs Objects, base, ours, theirs oid.ID, rules Rules) (oid.ID, []string, error) {
	m := &merger{objs: objs, rules: rules}
	h, err := m.tree("", base, ours, theirs)
	return h, m.resolved, err
}

type merger struct {
	objs     Objects
	rules    Rules
	resolved []string
}

func (m *merger) entries(h oid.ID) (map[string]Entry, error) {
	if h.IsZero() {
		return map[string]Entry{}, nil
	}
	return m.objs.Tree(h)
}

// tree merges three versions of the directory at path.
func (m *merger) tree(path string, base, ours, theirs oid.ID) (oid.ID, error) {
	switch {
	case ours == theirs:
		return ours, nil
	case base == ours:
		return theirs, nil
	case base == theirs:
		return ours, nil
	}
	o, err := m.entries(ours)
	if err != nil {
		return oid.Zero, err
	}
	t, err := m.entries(theirs)
	if err != nil {
		return oid.Zero, err
	}
	unit := func(es map[string]Entry) bool { return m.rules.Unit != nil && m.rules.Unit(es) }
	if path != "" && (unit(o) || unit(t)) {
		switch {
		case ours.IsZero():
			return theirs, nil // deleted here, changed there: keep the change, whole
		case theirs.IsZero():
			return ours, nil
		case unit(o) && unit(t):
			m.resolved = append(m.resolved, path)
			return m.rules.Decide(path, ours, theirs, o, t)
		}
	}
	b, err := m.entries(base)
	if err != nil {
		return oid.Zero, err
	}
	names := map[string]bool{}
	for _, set := range []map[string]Entry{b, o, t} {
		for n := range set {
			names[n] = true
		}
	}
	out := map[string]Entry{}
	for _, n := range slices.Sorted(maps.Keys(names)) {
		e, keep, err := m.entry(join(path, n), b[n], o[n], t[n])
		if err != nil {
			return oid.Zero, err
		}
		if keep {
			out[n] = e
		}
	}
	if len(out) == 0 {
		return oid.Zero, nil
	}
	return m.objs.WriteTree(out)
}

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// entry merges one name; keep is false when the merged result is absent.
func (m *merger) entry(path string, b, o, t Entry) (Entry, bool, error) {
	present := func(e Entry) bool { return e.Mode != 0 }
	same := func(x, y Entry) bool { return x.Mode == y.Mode && x.Hash == y.Hash }
	switch {
	case same(o, t):
		return o, present(o), nil
	case same(b, o):
		return t, present(t), nil
	case same(b, t):
		return o, present(o), nil
	case (o.IsTree() || !present(o)) && (t.IsTree() || !present(t)):
		// Two directories, or one against its deletion: merge inside, so a
		// deletion of what the other side left alone still applies.
		var bh, oh, th oid.ID
		if b.IsTree() {
			bh = b.Hash
		}
		if o.IsTree() {
			oh = o.Hash
		}
		if t.IsTree() {
			th = t.Hash
		}
		h, err := m.tree(path, bh, oh, th)
		if err != nil || h.IsZero() {
			return Entry{}, false, err
		}
		return Entry{Mode: ModeTree, Hash: h}, true, nil
	case !present(o):
		return t, true, nil // deleted here, changed there: keep the change
	case !present(t):
		return o, true, nil
	case m.rules.Notes && m.rules.NoteMerge != nil && !o.IsTree() && !t.IsTree():
		h, err := m.noteMerge(b, o.Hash, t.Hash)
		if err != nil {
			return Entry{}, false, err
		}
		m.resolved = append(m.resolved, path)
		return Entry{Mode: ModeBlob, Hash: h}, true, nil
	case m.rules.Notes && !o.IsTree() && !t.IsTree():
		h, err := m.concat(o.Hash, t.Hash)
		if err != nil {
			return Entry{}, false, err
		}
		m.resolved = append(m.resolved, path)
		return Entry{Mode: ModeBlob, Hash: h}, true, nil
	default:
		// A blob against a tree, or two blobs outside any unit: keep the
		// larger id, which both sides compute alike.
		m.resolved = append(m.resolved, path)
		if oid.Compare(o.Hash, t.Hash) >= 0 {
			return o, true, nil
		}
		return t, true, nil
	}
}

// noteMerge joins two versions of a note by the caller's rule.
func (m *merger) noteMerge(b Entry, o, t oid.ID) (oid.ID, error) {
	var base []byte
	if b.Mode != 0 && !b.IsTree() {
		var err error
		if base, err = m.objs.Blob(b.Hash); err != nil {
			return oid.Zero, err
		}
	}
	x, err := m.objs.Blob(o)
	if err != nil {
		return oid.Zero, err
	}
	y, err := m.objs.Blob(t)
	if err != nil {
		return oid.Zero, err
	}
	out, err := m.rules.NoteMerge(base, x, y)
	if err != nil {
		return oid.Zero, err
	}
	return m.objs.WriteBlob(out)
}

// concat merges two versions of one note without losing either: when one
// already contains the other it is kept as is (so repeated merges
// converge); otherwise both texts are joined, in byte order, separated by a
// blank line.
func (m *merger) concat(a, b oid.ID) (oid.ID, error) {
	x, err := m.objs.Blob(a)
	if err != nil {
		return oid.Zero, err
	}
	y, err := m.objs.Blob(b)
	if err != nil {
		return oid.Zero, err
	}
	switch {
	case bytes.Contains(x, y):
		return a, nil
	case bytes.Contains(y, x):
		return b, nil
	}
	if bytes.Compare(x, y) > 0 {
		x, y = y, x
	}
	var buf bytes.Buffer
	buf.Write(x)
	if len(x) > 0 && x[len(x)-1] != '\n' {
		buf.WriteByte('\n')
	}
	buf.WriteByte('\n')
	buf.Write(y)
	return m.objs.WriteBlob(buf.Bytes())
}
