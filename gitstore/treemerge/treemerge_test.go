package treemerge_test

import (
	"bytes"
	"fmt"
	"math/rand"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/gitstore/git"
	"github.com/nwdes/nwdes/gitstore/oid"

	"github.com/nwdes/nwdes/gitstore/treemerge"
)

// memObjects keeps trees and blobs by their git ids (git's own tree
// encoding), so that equal trees have equal ids as in a repository.
type memObjects struct {
	trees map[oid.ID]map[string]treemerge.Entry
	blobs map[oid.ID][]byte
}

func newMem() *memObjects {
	return &memObjects{trees: map[oid.ID]map[string]treemerge.Entry{}, blobs: map[oid.ID][]byte{}}
}

func (m *memObjects) Tree(h oid.ID) (map[string]treemerge.Entry, error) {
	t, ok := m.trees[h]
	if !ok {
		return nil, fmt.Errorf("no tree %s", h)
	}
	out := map[string]treemerge.Entry{}
	for k, v := range t {
		out[k] = v
	}
	return out, nil
}

func (m *memObjects) WriteTree(es map[string]treemerge.Entry) (oid.ID, error) {
	names := make([]string, 0, len(es))
	for n := range es {
		names = append(names, n)
	}
	key := func(n string) string {
		if es[n].IsTree() {
			return n + "/"
		}
		return n
	}
	sort.Slice(names, func(i, j int) bool { return key(names[i]) < key(names[j]) })
	var b bytes.Buffer
	for _, n := range names {
		fmt.Fprintf(&b, "%s %s\x00", strconv.FormatUint(uint64(es[n].Mode), 8), n)
		b.Write(es[n].Hash.Bytes())
	}
	h := git.HashOf(oid.SHA1, git.TreeObject, b.Bytes())
	m.trees[h] = es
	return h, nil
}

func (m *memObjects) Blob(h oid.ID) ([]byte, error) {
	b, ok := m.blobs[h]
	if !ok {
		return nil, fmt.Errorf("no blob %s", h)
	}
	return b, nil
}

func (m *memObjects) WriteBlob(data []byte) (oid.ID, error) {
	h := git.HashOf(oid.SHA1, git.BlobObject, data)
	m.blobs[h] = data
	return h, nil
}

// build writes a tree of files given as path → content ("" ids nothing).
func (m *memObjects) build(t *testing.T, files map[string]string) oid.ID {
	t.Helper()
	type dir map[string]any
	root := dir{}
	for p, c := range files {
		parts := strings.Split(p, "/")
		d := root
		for _, part := range parts[:len(parts)-1] {
			sub, ok := d[part].(dir)
			if !ok {
				sub = dir{}
				d[part] = sub
			}
			d = sub
		}
		d[parts[len(parts)-1]] = c
	}
	var write func(d dir) oid.ID
	write = func(d dir) oid.ID {
		es := map[string]treemerge.Entry{}
		for n, v := range d {
			switch v := v.(type) {
			case dir:
				es[n] = treemerge.Entry{Mode: treemerge.ModeTree, Hash: write(v)}
			case string:
				h, _ := m.WriteBlob([]byte(v))
				es[n] = treemerge.Entry{Mode: treemerge.ModeBlob, Hash: h}
			}
		}
		h, _ := m.WriteTree(es)
		return h
	}
	if len(files) == 0 {
		return oid.Zero
	}
	return write(root)
}

func (m *memObjects) files(t *testing.T, h oid.ID) map[string]string {
	t.Helper()
	out := map[string]string{}
	var walk func(h oid.ID, prefix string)
	walk = func(h oid.ID, prefix string) {
		if h.IsZero() {
			return
		}
		es, err := m.Tree(h)
		if err != nil {
			t.Fatal(err)
		}
		for n, e := range es {
			if e.IsTree() {
				walk(e.Hash, prefix+n+"/")
			} else {
				out[prefix+n] = string(m.blobs[e.Hash])
			}
		}
	}
	walk(h, "")
	return out
}

// records: a directory holding "record" is decided whole, keeping the side
// whose record text sorts last.
var records = treemerge.Rules{
	Unit: func(es map[string]treemerge.Entry) bool { _, ok := es["record"]; return ok },
}

func TestMergeRules(t *testing.T) {
	cases := []struct {
		name               string
		base, ours, theirs map[string]string
		notes              bool
		want               map[string]string
	}{
		{"one side adds", map[string]string{"a": "1"}, map[string]string{"a": "1", "b": "2"}, map[string]string{"a": "1"}, false, map[string]string{"a": "1", "b": "2"}},
		{"both add apart", map[string]string{}, map[string]string{"x/a": "1"}, map[string]string{"y/b": "2"}, false, map[string]string{"x/a": "1", "y/b": "2"}},
		{"one side deletes", map[string]string{"a": "1", "b": "2"}, map[string]string{"a": "1"}, map[string]string{"a": "1", "b": "2"}, false, map[string]string{"a": "1"}},
		{"delete against change keeps the change", map[string]string{"a": "1"}, map[string]string{}, map[string]string{"a": "2"}, false, map[string]string{"a": "2"}},
		{"a unit both changed is decided whole", map[string]string{"r/record": "0", "r/p": "0"}, map[string]string{"r/record": "1", "r/p": "ours"}, map[string]string{"r/record": "2", "r/p": "0"}, false, map[string]string{"r/record": "2", "r/p": "0"}},
		{"a unit deleted against changed stays whole", map[string]string{"r/record": "0", "r/p": "0"}, map[string]string{}, map[string]string{"r/record": "1"}, false, map[string]string{"r/record": "1"}},
		{"notes both changed keep both texts", map[string]string{"n": "base\n"}, map[string]string{"n": "from a\n"}, map[string]string{"n": "from b\n"}, true, map[string]string{"n": "from a\n\nfrom b\n"}},
		{"a note containing the other is kept", map[string]string{"n": "x\n"}, map[string]string{"n": "x\ny\n"}, map[string]string{"n": "y\n"}, true, map[string]string{"n": "x\ny\n"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newMem()
			rules := records
			rules.Notes = c.notes
			rules.Decide = func(path string, o, th oid.ID, oe, te map[string]treemerge.Entry) (oid.ID, error) {
				if string(m.blobs[oe["record"].Hash]) >= string(m.blobs[te["record"].Hash]) {
					return o, nil
				}
				return th, nil
			}
			b, o, th := m.build(t, c.base), m.build(t, c.ours), m.build(t, c.theirs)
			for _, swap := range []bool{false, true} {
				x, y := o, th
				if swap {
					x, y = th, o
				}
				got, _, err := treemerge.Merge(m, b, x, y, rules)
				if err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(m.files(t, got)) != fmt.Sprint(c.want) {
					t.Fatalf("swap %v: merged %v, want %v", swap, m.files(t, got), c.want)
				}
			}
		})
	}
}

// TestMergeIsSymmetricAndKeepsOneSidedChanges: on random trees, merging
// (ours, theirs) and (theirs, ours) give the same tree, and a path only one
// side changed has that side's value.
func TestMergeIsSymmetricAndKeepsOneSidedChanges(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	paths := []string{"a", "b", "d/a", "d/b", "d/e/a", "n/x", "n/y"}
	random := func(from map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range from {
			out[k] = v
		}
		for _, p := range paths {
			switch r.Intn(4) {
			case 0:
				delete(out, p)
			case 1:
				out[p] = fmt.Sprint(r.Intn(3))
			}
		}
		return out
	}
	for i := 0; i < 500; i++ {
		m := newMem()
		base := random(nil)
		ours, theirs := random(base), random(base)
		b, o, th := m.build(t, base), m.build(t, ours), m.build(t, theirs)
		x, _, err := treemerge.Merge(m, b, o, th, treemerge.Rules{})
		if err != nil {
			t.Fatal(err)
		}
		y, _, err := treemerge.Merge(m, b, th, o, treemerge.Rules{})
		if err != nil {
			t.Fatal(err)
		}
		if x != y {
			t.Fatalf("case %d: merge is not symmetric: %v vs %v", i, m.files(t, x), m.files(t, y))
		}
		got := m.files(t, x)
		for _, p := range paths {
			bv, bok := base[p]
			ov, ook := ours[p]
			tv, tok := theirs[p]
			if ook == bok && ov == bv && (tok != bok || tv != bv) {
				if gv, gok := got[p]; gok != tok || gv != tv {
					t.Fatalf("case %d: %s changed only by theirs (%q %v) merged to %q %v", i, p, tv, tok, gv, gok)
				}
			}
		}
	}
}
