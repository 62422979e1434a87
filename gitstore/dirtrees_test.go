package gitstore

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/gitstore/git"
	"github.com/nwdes/nwdes/gitstore/oid"
)

func TestGenerationsKeepWhatIsInUseWithinTheirBound(t *testing.T) {
	id := func(i int) oid.ID { return git.HashOf(oid.SHA1, git.BlobObject, []byte(fmt.Sprint(i))) }
	tree := dirEntries{{Name: strings.Repeat("n", 1000), Mode: ModeFile, ID: id(0)}}
	perGeneration := decodedTreeBytes / 2 / decodedTreeCost(tree)
	c := newGenerations[oid.ID](decodedTreeBytes, decodedTreeCost)
	for i := range 3 * perGeneration {
		c.put(id(i), tree)
		if _, ok := c.get(id(0)); !ok {
			t.Fatalf("tree 0, read after every put, was dropped at put %d", i)
		}
		if c.curCost > decodedTreeBytes/2 {
			t.Fatalf("put %d: the current generation holds %d bytes, over half of %d", i, c.curCost, decodedTreeBytes)
		}
	}
	if _, ok := c.get(id(1)); ok {
		t.Errorf("tree 1, not read for two generations, is still kept")
	}
	if n := len(c.cur) + len(c.prev); n > 2*perGeneration {
		t.Errorf("%d trees kept, at most %d fit", n, 2*perGeneration)
	}
}

func TestDirEntriesAreInTheByteOrderOfTheirNames(t *testing.T) {
	id := git.HashOf(oid.SHA1, git.BlobObject, nil)
	// git's order: a directory sorts as if its name ended in "/".
	gitOrder := []git.TreeEntry{{Name: "a.b", Mode: ModeFile, ID: id}, {Name: "a", Mode: ModeTree, ID: id}, {Name: "a0", Mode: ModeFile, ID: id}}
	raw, err := git.EncodeTree(gitOrder)
	if err != nil {
		t.Fatal(err)
	}
	tid := git.HashOf(oid.SHA1, git.TreeObject, raw)
	decoded, err := git.DecodeTree(tid, raw)
	if err != nil {
		t.Fatal(err)
	}
	d := sortedDirEntries(decoded)
	var names []string
	for _, e := range d {
		names = append(names, e.Name)
	}
	if want := []string{"a", "a.b", "a0"}; !slices.Equal(names, want) {
		t.Errorf("order %q, want %q", names, want)
	}
	for _, e := range gitOrder {
		if got, ok := d.lookup(e.Name); !ok || got != e {
			t.Errorf("lookup(%q) = %v, %v", e.Name, got, ok)
		}
	}
	if _, ok := d.lookup("a/"); ok {
		t.Errorf("lookup(%q) found an entry", "a/")
	}
}
