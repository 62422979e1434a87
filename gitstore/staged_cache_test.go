package gitstore_test

import (
	"context"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/internal/gittest"
)

// A record read inside a change that then aborts was never written: a tree
// that later names its blob, read through the same Store, is damage (the
// blob is missing), not the record the aborted change staged. The store's
// cache of decoded records once kept staged ones too, and both Get and
// Fsck then answered from it (found by a review).
func TestARecordStagedByAnAbortedChangeIsNotReadLater(t *testing.T) {
	dir := gittest.Init(t, false)
	s := openStore(t, dir, gitstore.Options{})
	rec, err := gitstore.NewRecord("test.note", 1, noteBody{Title: "t", Tags: []string{}, N: 1})
	if err != nil {
		t.Fatal(err)
	}
	abort := errors.New("abort")
	if _, err := s.Change(context.Background(), testRef, "put", func(tx gitstore.Edit) error {
		if err := tx.Put("notes/one", rec); err != nil {
			return err
		}
		if _, err := tx.Get("notes/one"); err != nil { // decoded while staged
			return err
		}
		return abort
	}); !errors.Is(err, abort) {
		t.Fatalf("change: %v", err)
	}

	// The blob id that change staged: the same record written elsewhere.
	other := gittest.Init(t, false)
	if _, err := openStore(t, other, gitstore.Options{}).Change(context.Background(), testRef, "put", func(tx gitstore.Edit) error {
		return tx.Put("notes/one", rec)
	}); err != nil {
		t.Fatal(err)
	}
	blob := gittest.Git(t, other, "rev-parse", string(testRef)+":notes/one/record.json")
	if exec.Command("git", "-C", dir, "cat-file", "-e", blob).Run() == nil {
		t.Fatalf("blob %s is in the repository: the test would prove nothing", blob)
	}
	mktree := func(in string) string {
		cmd := exec.Command("git", "mktree", "--missing")
		cmd.Dir, cmd.Stdin = dir, strings.NewReader(in)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	one := mktree("100644 blob " + blob + "\trecord.json\n")
	notes := mktree("040000 tree " + one + "\tone\n")
	root := mktree("040000 tree " + notes + "\tnotes\n")
	gittest.Git(t, dir, "update-ref", string(testRef), gittest.Git(t, dir, "commit-tree", root, "-m", "names a blob nobody wrote"))

	v, err := s.Records(testRef)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := v.Get("notes/one"); err == nil {
		t.Errorf("a record whose blob is missing read as %s v%d", r.Kind, r.V)
	}
	rep, err := s.Fsck()
	if err != nil {
		t.Fatal(err)
	}
	named := false
	for _, p := range rep.Problems {
		named = named || strings.Contains(p.String(), blob)
	}
	if !named {
		t.Errorf("fsck through the same store did not name the missing blob %s: %+v", blob, rep.Problems)
	}
}

// A record this store decoded before, whose blob is gone since (pruned,
// or damage), reads as missing and fsck names it: the store's caches
// answer only while the object database still has what they hold.
func TestARecordWhoseBlobWentSinceItWasReadIsMissing(t *testing.T) {
	dir := gittest.Init(t, false)
	rec, err := gitstore.NewRecord("test.note", 1, noteBody{Title: "gone", Tags: []string{}, N: 2})
	if err != nil {
		t.Fatal(err)
	}
	// The record's blob written loose, where the test can remove it.
	other := gittest.Init(t, false)
	if _, err := openStore(t, other, gitstore.Options{}).Change(context.Background(), testRef, "put", func(tx gitstore.Edit) error {
		return tx.Put("notes/one", rec)
	}); err != nil {
		t.Fatal(err)
	}
	body := gittest.Git(t, other, "cat-file", "blob", string(testRef)+":notes/one/record.json")
	hash := exec.Command("git", "-C", dir, "hash-object", "-w", "--stdin")
	hash.Stdin = strings.NewReader(body)
	out, err := hash.Output()
	if err != nil {
		t.Fatal(err)
	}
	blob := strings.TrimSpace(string(out))
	mktree := func(in string) string {
		cmd := exec.Command("git", "mktree")
		cmd.Dir, cmd.Stdin = dir, strings.NewReader(in)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	one := mktree("100644 blob " + blob + "\trecord.json\n")
	notes := mktree("040000 tree " + one + "\tone\n")
	root := mktree("040000 tree " + notes + "\tnotes\n")
	gittest.Git(t, dir, "update-ref", string(testRef), gittest.Git(t, dir, "commit-tree", root, "-m", "one record"))

	s := openStore(t, dir, gitstore.Options{})
	v, err := s.Records(testRef)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Get("notes/one"); err != nil {
		t.Fatalf("the record before its blob went: %v", err)
	}
	if rep, err := s.Fsck(); err != nil || len(rep.Problems) != 0 {
		t.Fatalf("fsck before the blob went: %+v, %v", rep, err)
	}
	if err := os.Remove(filepath.Join(dir, ".git", "objects", blob[:2], blob[2:])); err != nil {
		t.Fatal(err)
	}
	v, err = s.Records(testRef)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := v.Get("notes/one"); err == nil {
		t.Errorf("a record whose blob went read as %s v%d", r.Kind, r.V)
	}
	rep, err := s.Fsck()
	if err != nil {
		t.Fatal(err)
	}
	named := false
	for _, p := range rep.Problems {
		named = named || strings.Contains(p.String(), blob)
	}
	if !named {
		t.Errorf("fsck through the same store did not name the missing blob %s: %+v", blob, rep.Problems)
	}
}

// One id at one path, named a tree at the tip and a file in an older
// commit, is checked twice: the older entry is damage (a tree where a file
// is named), and fsck once skipped it as already seen.
func TestFsckChecksAPathNamedOnceAsATreeAndOnceAsAFile(t *testing.T) {
	dir := gittest.Init(t, false)
	s := openStore(t, dir, gitstore.Options{})
	rec, err := gitstore.NewRecord("test.note", 1, noteBody{Title: "t", Tags: []string{}, N: 3})
	if err != nil {
		t.Fatal(err)
	}
	tip, err := s.Change(context.Background(), testRef, "put", func(tx gitstore.Edit) error { return tx.Put("notes/one", rec) })
	if err != nil {
		t.Fatal(err)
	}
	one := gittest.Git(t, dir, "rev-parse", tip.String()+":notes/one")
	mktree := func(in string) string {
		cmd := exec.Command("git", "mktree")
		cmd.Dir, cmd.Stdin = dir, strings.NewReader(in)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	// An older commit whose notes/one is a file holding the tree's id
	// (written literally: git mktree checks the entry's type).
	raw, err := hex.DecodeString(one)
	if err != nil {
		t.Fatal(err)
	}
	lit := exec.Command("git", "hash-object", "--literally", "-w", "-t", "tree", "--stdin")
	lit.Dir, lit.Stdin = dir, strings.NewReader("100644 one\x00"+string(raw))
	out, err := lit.Output()
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.TrimSpace(string(out))
	root := mktree("040000 tree " + notes + "\tnotes\n")
	older := gittest.Git(t, dir, "commit-tree", root, "-m", "a tree named as a file")
	top := gittest.Git(t, dir, "commit-tree", tip.String()+"^{tree}", "-p", older, "-m", "the record")
	gittest.Git(t, dir, "update-ref", string(testRef), top)

	rep, err := openStore(t, dir, gitstore.Options{}).Fsck()
	if err != nil {
		t.Fatal(err)
	}
	named := false
	for _, p := range rep.Problems {
		named = named || p.Commit == older
	}
	if !named {
		t.Errorf("fsck named nothing in %s, whose notes/one is a tree named as a file: %+v", older[:12], rep.Problems)
	}
}
