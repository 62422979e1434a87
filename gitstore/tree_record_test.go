package gitstore_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/gitstoretest"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/refusal"
)

// A record can carry a tree of a commit's blobs by reference: git sees the
// same tree (ls-tree), fsck --strict is content, it travels by push, and
// our fsck names a blob of it that went missing.
func TestARecordCarriesATreeOfExistingBlobs(t *testing.T) {
	reg := gitstore.MustRegistry(func(r *gitstore.Registry) error {
		if err := r.DeclareKind(gitstore.KindSpec{Kind: gitstoretest.Kind, Version: 1}); err != nil {
			return err
		}
		return r.DeclareRef(gitstore.RefSpec{Ref: testRef, Policy: gitstore.PolicyMerge, Layout: []string{"records"}})
	})
	dir := gittest.Init(t, false)
	gittest.WriteFile(t, dir, "docs/guides/a.md", "# A\n")
	gittest.WriteFile(t, dir, "docs/guides/deep/b.md", "# B\n")
	gittest.WriteFile(t, dir, "src/main.go", "package main\n")
	gittest.Git(t, dir, "add", ".")
	gittest.Git(t, dir, "commit", "-qm", "c")
	s := openStore(t, dir, gitstore.Options{Registry: reg})
	head, err := s.Resolve("HEAD")
	if err != nil {
		t.Fatal(err)
	}
	var files []gitstore.TreeFile
	if err := s.Walk(head, func(p string, mode uint32, blob oid.ID) error {
		if strings.HasPrefix(p, "docs/") {
			files = append(files, gitstore.TreeFile{Path: p, Mode: mode, Blob: blob})
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want, err := gitstore.TreeOf(files)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD:docs")); got == want.String() {
		t.Fatal("test premise: the carried tree is rooted above docs/, not docs itself")
	}
	rec, _ := gitstore.NewRecord(gitstoretest.Kind, 1, gitstoretest.Body{})
	rec.Tree = files
	if _, err := s.Change(context.Background(), testRef, "carry", func(tx gitstore.Edit) error { return tx.Put("records/p", rec) }); err != nil {
		t.Fatal(err)
	}
	tx, err := s.Records(testRef)
	if err != nil {
		t.Fatal(err)
	}
	got, err := tx.Get("records/p")
	if err != nil {
		t.Fatal(err)
	}
	if got.TreeID != want {
		t.Fatalf("TreeID %s, TreeOf %s", got.TreeID, want)
	}
	// git reads the tree as the same files, and the commit's docs tree is
	// the carried tree's docs entry.
	if ls := gittest.Git(t, dir, "ls-tree", "-r", "--name-only", want.String()); strings.TrimSpace(ls) != "docs/guides/a.md\ndocs/guides/deep/b.md" {
		t.Fatalf("git ls-tree of the carried tree:\n%s", ls)
	}
	if a, b := gittest.Git(t, dir, "rev-parse", want.String()+":docs"), gittest.Git(t, dir, "rev-parse", "HEAD:docs"); a != b {
		t.Fatalf("carried docs %s, committed docs %s", a, b)
	}
	gittest.Git(t, dir, "fsck", "--strict")
	if rep, err := s.Fsck(); err != nil || len(rep.Problems) != 0 {
		t.Fatalf("fsck: %v %+v", err, rep)
	}
	// It travels with the record.
	bare := gittest.Init(t, true)
	gittest.Git(t, dir, "push", "-q", bare, string(testRef)+":"+string(testRef))
	gittest.Git(t, bare, "cat-file", "-e", want.String())

	// A blob of it gone missing is named, never read as absent.
	blob := files[0].Blob.String()
	obj := filepath.Join(dir, ".git", "objects", blob[:2], blob[2:])
	gittest.Git(t, dir, "update-ref", "-d", "HEAD") // the commit no longer holds it either
	if err := os.Remove(obj); err != nil {
		t.Skipf("the blob is packed, not loose: %v", err)
	}
	rep, err := s.Fsck()
	if err != nil || len(rep.Problems) == 0 || !strings.Contains(rep.Problems[0].Path, "records/p/tree/docs/guides/a.md") {
		t.Fatalf("fsck of a carried tree with a missing blob: %v %+v", err, rep)
	}
}

func TestACarriedTreeIsRefusedUnlessItsBlobsExistAndItsPathsAreFiles(t *testing.T) {
	dir := gittest.Init(t, false)
	s := openStore(t, dir, gitstore.Options{})
	blob := oid.ID{} // zero: never stored
	for name, files := range map[string][]gitstore.TreeFile{
		"a missing blob":        {{Path: "a.md", Mode: gitstore.ModeFile, Blob: blob}},
		"a symlink":             {{Path: "a.md", Mode: gitstore.ModeSymlink, Blob: blob}},
		"a path given twice":    {{Path: "a.md", Mode: gitstore.ModeFile}, {Path: "a.md", Mode: gitstore.ModeFile}},
		"a file and a dir":      {{Path: "a", Mode: gitstore.ModeFile}, {Path: "a/b", Mode: gitstore.ModeFile}},
		"a dot-dot path":        {{Path: "../a", Mode: gitstore.ModeFile}},
		"an empty tree (given)": {},
	} {
		rec, _ := gitstore.NewRecord("test.note", 1, noteBody{})
		rec.Tree = files
		if name == "an empty tree (given)" {
			rec.Tree = []gitstore.TreeFile{}
		}
		_, err := s.Change(context.Background(), testRef, "bad", func(tx gitstore.Edit) error { return tx.Put("r", rec) })
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if n := refusalName(err); n != "" && n != refusal.PathInvalid && n != refusal.ObjectMissing {
			t.Errorf("%s: %v", name, err)
		}
	}
	if tip, err := s.Tip(testRef); err != nil || !tip.IsZero() {
		t.Fatal("a refused carried tree moved the ref")
	}
}

// TestATreeOfTwoFormatsIsRefused: a tree is of its blobs' object format
// (SHA-256 blobs make a SHA-256 tree); blobs of two formats are refused by
// name, never cut to one length.
func TestATreeOfTwoFormatsIsRefused(t *testing.T) {
	long, err := oid.FromBytes(bytes.Repeat([]byte{0x5a}, 32))
	if err != nil {
		t.Fatal(err)
	}
	tree, err := gitstore.TreeOf([]gitstore.TreeFile{{Path: "f", Mode: gitstore.ModeFile, Blob: long}})
	if err != nil || tree.Format() != oid.SHA256 {
		t.Fatalf("TreeOf of a SHA-256 blob: %v %v, want a SHA-256 tree", tree, err)
	}
	short := oid.MustParse(strings.Repeat("5a", 20))
	_, err = gitstore.TreeOf([]gitstore.TreeFile{{Path: "f", Mode: gitstore.ModeFile, Blob: short}, {Path: "g", Mode: gitstore.ModeFile, Blob: long}})
	if !refusal.Named(err, refusal.UnsupportedRepository) {
		t.Fatalf("TreeOf of SHA-1 and SHA-256 blobs: %v, want UnsupportedRepository", err)
	}
}
