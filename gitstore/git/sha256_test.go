package git_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
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

// TestASHA256RepositoryIsReadAndWrittenAsGitDoes: in a repository git made
// with --object-format=sha256, what nwdes writes (a pack, loose objects, a
// ref) is what git reads and git fsck --strict accepts, what git writes
// (loose, packed, deltified, with a commit-graph) nwdes reads, revisions
// and merge bases agree with git's, and a SHA-1 id is refused by name,
// never padded.
func TestASHA256RepositoryIsReadAndWrittenAsGitDoes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "repo")
	gittest.Git(t, filepath.Dir(dir), "init", "-q", "-b", "main", "--object-format=sha256", dir)
	for i := range 3 {
		gittest.WriteFile(t, dir, "f", strings.Repeat("line\n", 50)+fmt.Sprint(i)+"\n")
		gittest.Git(t, dir, "add", "f")
		gittest.Git(t, dir, "commit", "-q", "-m", fmt.Sprint("c", i))
	}
	gittest.Git(t, dir, "repack", "-q", "-a", "-d")
	gittest.Git(t, dir, "commit-graph", "write", "--reachable")
	gittest.WriteFile(t, dir, "g", "loose\n")
	gittest.Git(t, dir, "add", "g")
	gittest.Git(t, dir, "commit", "-q", "-m", "loose")
	r := openRepo(t, dir, git.Options{})
	if r.Format() != oid.SHA256 {
		t.Fatalf("format %v", r.Format())
	}
	head := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD"))
	for _, rev := range []string{"HEAD", "main~2", "HEAD^", head, head[:12], "main^{commit}"} {
		want := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "--verify", rev+"^{commit}"))
		got, err := r.Resolve(rev)
		if err != nil || got.String() != want || got.Format() != oid.SHA256 {
			t.Fatalf("Resolve(%s) = %v %v, git says %s", rev, got, err, want)
		}
	}
	tip, _ := r.Resolve("HEAD")
	first, _ := r.Resolve("main~3")
	if bases, err := r.MergeBases(tip, first); err != nil || len(bases) != 1 || bases[0] != first {
		t.Fatalf("MergeBases = %v %v", bases, err)
	}
	if ok, err := r.IsAncestor(first, tip); err != nil || !ok {
		t.Fatalf("IsAncestor = %v %v", ok, err)
	}
	if b, err := r.ReadFile(tip, "f"); err != nil || !strings.HasSuffix(string(b.Data), "line\n2\n") {
		t.Fatalf("ReadFile of a deltified blob: %q %v", b.Data, err)
	}

	const ref = git.RefName("refs/nwdes/sha256")
	c := commitFile(t, r, ref, "note", "written by nwdes", time.Unix(1767225600, 0))
	c2 := commitFile(t, r, ref, "note", "again", time.Unix(1767225660, 0))
	mine, err := r.Refs().Read(ref)
	if err != nil || mine.Format() != oid.SHA256 {
		t.Fatalf("ref: %v %v", mine, err)
	}
	if got := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", string(ref)+"^{tree}")); got != c2.Tree.String() {
		t.Fatalf("git reads tree %s, nwdes wrote %s", got, c2.Tree)
	}
	if got := gittest.Git(t, dir, "cat-file", "blob", string(ref)+"~1:note"); got != "written by nwdes" {
		t.Fatalf("git reads %q", got)
	}
	loose, err := r.Write(git.BlobObject, []byte("a loose blob\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := gittest.Git(t, dir, "cat-file", "-t", loose.String()); strings.TrimSpace(got) != "blob" {
		t.Fatalf("git cat-file -t of nwdes's loose blob: %q", got)
	}
	gittest.Git(t, dir, "update-ref", "refs/keep/loose", loose.String())
	// Enough updates that the small packs are consolidated (consolidate.go).
	for i := range 30 {
		commitFile(t, r, ref, "note", fmt.Sprint("update ", i), time.Unix(1767225700+int64(i), 0))
	}
	packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "pack-*.idx"))
	if len(packs) > 25 {
		t.Errorf("%d packs: none consolidated", len(packs))
	}
	gittest.Git(t, dir, "fsck", "--strict", "--no-dangling")
	if got := gittest.Git(t, dir, "cat-file", "blob", string(ref)+"~31:note"); got != "written by nwdes" {
		t.Fatalf("after consolidation git reads %q", got)
	}
	_ = c
	if mine, err = r.Refs().Read(ref); err != nil {
		t.Fatal(err)
	}

	short := oid.MustParse(tip.String()[:40])
	refused := func(what string, err error) {
		t.Helper()
		if !refusal.Named(err, refusal.UnsupportedRepository) {
			t.Errorf("%s of a SHA-1 id: %v, want UnsupportedRepository", what, err)
		}
	}
	_, err = r.ReadCommit(short)
	refused("ReadCommit", err)
	_, _, err = r.Read(short)
	refused("Read", err)
	_, err = r.MergeBases(short, tip)
	refused("MergeBases", err)
	refused("MoveRef", r.MoveRef(ref, mine, short))
	refused("Stage", r.Stage(git.NewBatch(oid.SHA1), tip))
	if now, _ := r.Refs().Read(ref); now != mine {
		t.Fatal("the ref moved")
	}
}
