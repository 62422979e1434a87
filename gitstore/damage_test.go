package gitstore_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/gitstoretest"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/refusal"
)

// recordsRegistry declares testRef with the layout records/, holding
// gitstoretest's kind.
func recordsRegistry(t *testing.T) *gitstore.Registry {
	t.Helper()
	return gitstore.MustRegistry(func(r *gitstore.Registry) error {
		if err := r.DeclareKind(gitstore.KindSpec{Kind: gitstoretest.Kind, Version: 1}); err != nil {
			return err
		}
		return r.DeclareRef(gitstore.RefSpec{Ref: testRef, Policy: gitstore.PolicyMerge, Layout: []string{"records"}})
	})
}

// putRecord stores one record with a payload at records/<name>.
func putRecord(t *testing.T, s *gitstore.Store, name string) oid.ID {
	t.Helper()
	rec, err := gitstore.NewRecord(gitstoretest.Kind, 1, gitstoretest.Body{})
	if err != nil {
		t.Fatal(err)
	}
	rec.Payloads = map[string][]byte{"t1": []byte("text of " + name)}
	tip, err := s.Change(context.Background(), testRef, "put "+name, func(tx gitstore.Edit) error { return tx.Put("records/"+name, rec) })
	if err != nil {
		t.Fatal(err)
	}
	return tip
}

// gitWith runs git in dir with extra environment (a temporary index).
func gitWith(t *testing.T, dir string, env []string, stdin []byte, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(gittest.Env(filepath.Dir(dir)), env...)
	cmd.Stdin = bytes.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}

// commitOnTop makes git commit tree on top of ref's tip and moves the ref
// there with git update-ref.
func commitOnTop(t *testing.T, dir string, ref gitstore.RefName, tree string) string {
	t.Helper()
	parent := gittest.Git(t, dir, "rev-parse", string(ref))
	c := gittest.Git(t, dir, "commit-tree", tree, "-p", parent, "-m", "damage")
	gittest.Git(t, dir, "update-ref", string(ref), c)
	return c
}

// replaceAt returns tree with the entry at path set to "<mode> <type>
// <id>" (added, or replaced), each tree above it made by git mktree from
// git ls-tree's lines, so that the entry's own object is not re-read.
func replaceAt(t *testing.T, dir, tree, path, mode, typ, id string) string {
	t.Helper()
	name, rest, deeper := strings.Cut(path, "/")
	var lines []string
	for _, l := range strings.Split(gittest.Git(t, dir, "ls-tree", tree), "\n") {
		if l == "" {
			continue
		}
		f := strings.SplitN(l, "\t", 2)
		if f[1] != name {
			lines = append(lines, l)
			continue
		}
		if deeper {
			id = replaceAt(t, dir, strings.Fields(f[0])[2], rest, mode, typ, id)
			mode, typ = "040000", "tree"
		}
	}
	lines = append(lines, mode+" "+typ+" "+id+"\t"+name)
	return gitWith(t, dir, nil, []byte(strings.Join(lines, "\n")+"\n"), "mktree")
}

// rawTree writes a tree object of exactly the given entries, in the given
// order, with git hash-object --literally (git mktree would sort them).
func rawTree(t *testing.T, dir string, entries ...[3]string) string {
	t.Helper()
	var b bytes.Buffer
	for _, e := range entries {
		h, err := hex.DecodeString(e[2])
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(e[0] + " " + e[1] + "\x00")
		b.Write(h)
	}
	return gitWith(t, dir, nil, b.Bytes(), "hash-object", "-t", "tree", "--literally", "-w", "--stdin")
}

func fsckProblems(t *testing.T, s *gitstore.Store) string {
	t.Helper()
	rep, err := s.Fsck()
	if err != nil {
		t.Fatalf("fsck failed instead of naming the damage: %v", err)
	}
	var b strings.Builder
	for _, p := range rep.Problems {
		b.WriteString(p.String() + "\n")
	}
	return b.String()
}

// git 2.39 answers a ref packed-refs names twice with one of the lines,
// chosen by where its binary search lands (the last of two, the middle
// of three), and for-each-ref lists every line: there is no one value to
// judge. Read, List, View and Update refuse the ref as damaged
// (RefUnreadable), fsck names it and goes on with the other refs, and a
// loose file over it (which git reads first) is still read.
func TestARefPackedTwiceIsRefusedAsDamageAndFsckNamesIt(t *testing.T) {
	dir := gittest.Init(t, false)
	s := openStore(t, dir, gitstore.Options{Registry: recordsRegistry(t)})
	a := putRecord(t, s, "a").String()
	b := putRecord(t, s, "b").String()
	c := putRecord(t, s, "c").String()
	packed := filepath.Join(dir, ".git", "packed-refs")
	loose := filepath.Join(dir, ".git", filepath.FromSlash(string(testRef)))
	write := func(ids ...string) {
		t.Helper()
		var buf strings.Builder
		buf.WriteString("# pack-refs with: peeled fully-peeled sorted \n")
		for _, id := range ids {
			buf.WriteString(id + " " + string(testRef) + "\n")
		}
		if err := os.WriteFile(packed, []byte(buf.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Remove(loose)
	}
	for _, ids := range [][]string{{a, b}, {b, a}, {a, b, c}} {
		write(ids...)
		if got := gittest.Git(t, dir, "rev-parse", string(testRef)); got != ids[len(ids)/2] {
			t.Fatalf("test premise: git rev-parse of %d lines is %s, not line %d", len(ids), got, len(ids)/2+1)
		}
		if n := strings.Count(gittest.Git(t, dir, "for-each-ref", "refs/nwdes/"), string(testRef)); n != len(ids) {
			t.Fatalf("test premise: git for-each-ref lists the ref %d times, not %d", n, len(ids))
		}
		if id, err := s.Refs().Read(testRef); !refusal.Named(err, refusal.RefUnreadable) || !strings.Contains(err.Error(), "more than one line") {
			t.Fatalf("Read of a ref packed %d times: %s, %v", len(ids), id, err)
		}
		if _, err := s.Refs().List("refs/nwdes/"); !refusal.Named(err, refusal.RefUnreadable) {
			t.Fatalf("List of a ref packed %d times: %v", len(ids), err)
		}
		if _, err := s.Records(testRef); !refusal.Named(err, refusal.RefUnreadable) {
			t.Fatalf("View of a ref packed %d times: %v", len(ids), err)
		}
		before, _ := os.ReadFile(packed)
		if _, err := s.Change(context.Background(), testRef, "on top", func(tx gitstore.Edit) error { return tx.Remove("records/a") }); !refusal.Named(err, refusal.RefUnreadable) {
			t.Fatalf("Update of a ref packed %d times: %v", len(ids), err)
		}
		if after, _ := os.ReadFile(packed); !bytes.Equal(before, after) {
			t.Fatal("a refused update rewrote packed-refs")
		}
		if _, err := os.Stat(loose); err == nil {
			t.Fatal("a refused update wrote the loose ref")
		}
		if p := fsckProblems(t, s); !strings.Contains(p, string(testRef)+": packed-refs holds "+string(rune('0'+len(ids)))+" lines for it") {
			t.Fatalf("fsck of a ref packed %d times:\n%s", len(ids), p)
		}
	}
	// A loose file is what git reads first: Read returns it, fsck still
	// names the packed lines under it.
	write(a, b)
	gittest.Git(t, dir, "update-ref", string(testRef), c, b)
	if got := gittest.Git(t, dir, "rev-parse", string(testRef)); got != c {
		t.Fatalf("test premise: git reads the loose value, got %s", got)
	}
	if id, err := s.Refs().Read(testRef); err != nil || id.String() != c {
		t.Fatalf("Read of a loose ref over duplicated packed lines: %s, %v", id, err)
	}
	if p := fsckProblems(t, s); !strings.Contains(p, "packed-refs holds 2 lines for it") {
		t.Fatalf("fsck of duplicated packed lines under a loose ref:\n%s", p)
	}
}

// A tree of nwdes records holds directories and regular files only: a
// symbolic link or a gitlink in it (which git writes without complaint)
// is damage, refused by every reader (RefUnreadable) and named by fsck.
func TestASymlinkOrGitlinkInARecordTreeIsRefusedAndNamed(t *testing.T) {
	for _, c := range []struct{ name, mode, path string }{
		{"a symbolic link as a payload", "120000", "records/a/payload/t2"},
		{"a gitlink as a payload", "160000", "records/a/payload/t2"},
		{"a symbolic link as the record", "120000", "records/a/record.json"},
		{"a gitlink beside the records", "160000", "records/sub"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := gittest.Init(t, false)
			s := openStore(t, dir, gitstore.Options{Registry: recordsRegistry(t)})
			putRecord(t, s, "a")
			typ, id := "blob", gitWith(t, dir, nil, []byte("/etc/passwd"), "hash-object", "-w", "--stdin")
			if c.mode == "160000" {
				typ, id = "commit", gittest.Git(t, dir, "rev-parse", "HEAD")
			}
			tip := gittest.Git(t, dir, "rev-parse", string(testRef)+"^{tree}")
			commitOnTop(t, dir, testRef, replaceAt(t, dir, tip, c.path, c.mode, typ, id))
			gittest.Git(t, dir, "fsck", "--strict") // git itself finds nothing wrong
			tx, err := s.Records(testRef)
			if err == nil {
				if c.path == "records/sub" {
					_, err = tx.List("records")
				} else {
					_, err = tx.Get("records/a")
				}
			}
			if !refusal.Named(err, refusal.RefUnreadable) || !strings.Contains(err.Error(), c.path[strings.LastIndexByte(c.path, '/')+1:]) {
				t.Fatalf("read of a record tree holding %s: %v", c.name, err)
			}
			if p := fsckProblems(t, s); !strings.Contains(p, ":"+c.path+": ") || !strings.Contains(p, "mode 1") {
				t.Fatalf("fsck of a record tree holding %s:\n%s", c.name, p)
			}
		})
	}
}

// A tree whose entries are out of git's order, or that names one entry
// twice, is one git fsck rejects (treeNotSorted, duplicateEntries) and
// that two readers could read differently: it is refused wherever it is,
// in a ref's records (RefUnreadable at the ref, TreeUnreadable within)
// and in a candidate commit's own tree, and fsck names it.
func TestAnUnsortedOrDuplicateNameTreeIsRefusedEverywhere(t *testing.T) {
	for _, c := range []struct {
		name, gitSays string
		entries       func(blob, tree string) [][3]string
	}{
		{"entries out of order", "treeNotSorted", func(blob, tree string) [][3]string {
			return [][3]string{{"100644", "t2", blob}, {"100644", "t1", blob}}
		}},
		{"one name twice", "duplicateEntries", func(blob, tree string) [][3]string {
			return [][3]string{{"100644", "t1", blob}, {"100644", "t1", blob}}
		}},
		{"a file and a directory of one name", "duplicateEntries", func(blob, tree string) [][3]string {
			return [][3]string{{"100644", "t1", blob}, {"100644", "t1.x", blob}, {"40000", "t1", tree}}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := gittest.Init(t, false)
			s := openStore(t, dir, gitstore.Options{Registry: recordsRegistry(t)})
			putRecord(t, s, "a")
			blob := gittest.Git(t, dir, "rev-parse", string(testRef)+":records/a/payload/t1")
			sub := gittest.Git(t, dir, "rev-parse", "HEAD^{tree}")
			bad := rawTree(t, dir, c.entries(blob, sub)...)
			// The record's payload directory is the damaged tree.
			tip := gittest.Git(t, dir, "rev-parse", string(testRef)+"^{tree}")
			commitOnTop(t, dir, testRef, replaceAt(t, dir, tip, "records/a/payload", "040000", "tree", bad))
			if out, err := gittest.Run(dir, "fsck", "--strict"); err == nil || !strings.Contains(out, c.gitSays) {
				t.Fatalf("test premise: git fsck says %s:\n%s", c.gitSays, out)
			}
			tx, err := s.Records(testRef)
			if err == nil {
				_, err = tx.Get("records/a")
			}
			if !refusal.Named(err, refusal.TreeUnreadable) {
				t.Fatalf("read of a record in a damaged tree: %v", err)
			}
			if p := fsckProblems(t, s); !strings.Contains(p, ":records/a/payload: ") || !strings.Contains(p, bad) {
				t.Fatalf("fsck of a damaged tree in the records:\n%s", p)
			}

			// The same tree as a candidate commit's own tree.
			candidate := gittest.Git(t, dir, "commit-tree", bad, "-m", "candidate")
			id := oid.MustParse(candidate)
			ct, err := s.Files(id)
			if err == nil {
				_, err = ct.ReadDir("")
			}
			if !refusal.Named(err, refusal.TreeUnreadable) {
				t.Fatalf("ReadDir of a candidate's damaged tree: %v", err)
			}
			if err := s.Walk(id, func(string, uint32, oid.ID) error { return nil }); !refusal.Named(err, refusal.TreeUnreadable) {
				t.Fatalf("Walk of a candidate's damaged tree: %v", err)
			}
		})
	}
}

// A candidate commit's own tree may hold symbolic links and gitlinks: only
// the trees of nwdes refs are restricted.
func TestACandidateTreeMayHoldSymlinksAndGitlinks(t *testing.T) {
	dir := gittest.Init(t, false)
	s := openStore(t, dir, gitstore.Options{Registry: recordsRegistry(t)})
	head := gittest.Git(t, dir, "rev-parse", "HEAD")
	blob := gitWith(t, dir, nil, []byte("README"), "hash-object", "-w", "--stdin")
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(t.TempDir(), "index")}
	gitWith(t, dir, env, nil, "read-tree", "HEAD")
	gitWith(t, dir, env, nil, "update-index", "--add", "--cacheinfo", "120000,"+blob+",link")
	gitWith(t, dir, env, nil, "update-index", "--add", "--cacheinfo", "160000,"+head+",sub")
	c := gittest.Git(t, dir, "commit-tree", gitWith(t, dir, env, nil, "write-tree"), "-m", "c")
	tx, err := s.Files(oid.MustParse(c))
	if err != nil {
		t.Fatal(err)
	}
	es, err := tx.ReadDir("")
	if err != nil || len(es) != 3 {
		t.Fatalf("ReadDir of a candidate with a link and a gitlink: %v %v", es, err)
	}
}
