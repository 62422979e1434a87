package git_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/nwdes/nwdes/gitstore/git"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/refusal"
)

// TestASHA256IdIsRefusedNeverCut: in a SHA-1 repository an id of the
// other format is refused by name wherever the API takes one. The id here is a real commit's SHA-1 digest followed by twelve
// more bytes, so that cutting it to 20 bytes would read that commit: every
// answer must be the refusal, and nothing may move.
func TestASHA256IdIsRefusedNeverCut(t *testing.T) {
	dir := gittest.Init(t, false)
	r := openRepo(t, dir, git.Options{})
	const ref = git.RefName("refs/nwdes/sha")
	c := commitFile(t, r, ref, "f", "content", time.Unix(1767225600, 0))
	tip, err := r.Refs().Read(ref)
	if err != nil {
		t.Fatal(err)
	}
	long, err := oid.FromBytes(append(tip.Bytes(), bytes.Repeat([]byte{0xab}, 12)...))
	if err != nil || long.Format() != oid.SHA256 {
		t.Fatalf("a SHA-256 id: %v %v", long, err)
	}
	refused := func(what string, err error) {
		t.Helper()
		if !refusal.Named(err, refusal.UnsupportedRepository) {
			t.Errorf("%s of a SHA-256 id: %v, want UnsupportedRepository", what, err)
		}
	}
	_, _, err = r.Read(long)
	refused("Read", err)
	_, err = r.ReadCommit(long)
	refused("ReadCommit", err)
	_, err = r.ReadTree(long)
	refused("ReadTree", err)
	_, err = r.ReadBlob(long)
	refused("ReadBlob", err)
	_, _, err = r.Parents(long)
	refused("Parents", err)
	_, err = r.CommitMeta(long)
	refused("CommitMeta", err)
	_, err = r.ReadFile(long, "f")
	refused("ReadFile", err)
	refused("Walk", r.Walk(long, func(string, uint32, oid.ID) error { return nil }))
	_, err = r.IsAncestor(tip, long)
	refused("IsAncestor", err)
	_, err = r.MergeBases(long, tip)
	refused("MergeBases", err)
	_, _, err = r.ChangedPaths(tip, long, 10)
	refused("ChangedPaths", err)
	_, err = git.EncodeTree([]git.TreeEntry{{Name: "a", Mode: git.ModeFile, ID: c.Tree}, {Name: "f", Mode: git.ModeFile, ID: long}})
	refused("EncodeTree mixing formats", err)
	_, err = git.EncodeCommit(c.Tree, []oid.ID{long}, "a <a@b>", time.Unix(0, 0), "m")
	refused("EncodeCommit", err)
	if r.Freshen(long) {
		t.Error("Freshen of a SHA-256 id found it stored")
	}
	refused("CompareAndSwap", r.Refs().CompareAndSwap(ref, tip, long))
	refused("MoveRef", r.MoveRef(ref, long, oid.Zero))
	if now, err := r.Refs().Read(ref); err != nil || now != tip {
		t.Fatalf("the ref moved to %v (%v), want %v", now, err, tip)
	}
	// The SHA-1 id itself still reads: the refusal is of the format only.
	if _, err := r.ReadCommit(tip); err != nil {
		t.Fatal(err)
	}
}
