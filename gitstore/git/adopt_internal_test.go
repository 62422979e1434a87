package git

import (
	"github.com/nwdes/nwdes/gitstore/oid"
	"strings"
	"testing"
)

func TestCheckTreeRefusesWhatGitFsckStrictRefuses(t *testing.T) {
	t.Parallel()
	id := strings.Repeat("\x01", 20)
	entry := func(mode, name string) string { return mode + " " + name + "\x00" + id }
	for _, tc := range []struct{ name, tree, want string }{
		{"a zero-padded mode", entry("040000", "d"), "mode"},
		{"a group-writable file", entry("100664", "f"), "mode"},
		{"an empty name", entry("100644", ""), "named"},
		{"a name with a slash", entry("100644", "a/b"), "named"},
		{"a dot-dot", entry("40000", ".."), "named"},
		{"a .git in capitals", entry("40000", ".GIT"), "its own directory"},
		{"an NTFS short .git", entry("40000", "GIT~1"), "its own directory"},
		{"a .git with a trailing dot", entry("40000", ".git."), "its own directory"},
		{"a .gitmodules", entry("100644", ".gitmodules"), "submodules"},
		{"two entries of one name", entry("100644", "a") + entry("40000", "a"), "two entries"},
		{"out of order", entry("100644", "b") + entry("100644", "a"), "order"},
		{"a tree sorted as a file", entry("40000", "a") + entry("100644", "a.c"), "order"},
		{"cut short", entry("100644", "a")[:10], "cut short"},
	} {
		if _, why := checkTree(oid.SHA1, []byte(tc.tree)); !strings.Contains(why, tc.want) {
			t.Errorf("%s: checkTree says %q, want %q", tc.name, why, tc.want)
		}
	}
	ok := entry("100644", "a.c") + entry("40000", "a") + entry("100755", "b") + entry("120000", "c") + entry("160000", "d")
	if es, why := checkTree(oid.SHA1, []byte(ok)); why != "" || len(es) != 5 {
		t.Fatalf("a sound tree: %q, %d entries", why, len(es))
	}
}

func TestCheckCommitRefusesWhatGitFsckStrictRefuses(t *testing.T) {
	t.Parallel()
	tree := "tree " + strings.Repeat("a", 40) + "\n"
	who := " A U Thor <a@example.com> 1700000000 +0100\n"
	for _, tc := range []struct{ name, commit, want string }{
		{"no tree", "author" + who + "committer" + who + "\nm\n", "tree line"},
		{"a bad parent", tree + "parent xyz\nauthor" + who + "committer" + who + "\nm\n", "parent"},
		{"no committer", tree + "author" + who + "\nm\n", "no committer"},
		{"two authors", tree + "author" + who + "author" + who + "committer" + who + "\nm\n", "no committer"},
		{"two committers", tree + "author" + who + "committer" + who + "committer" + who + "\nm\n", "second committer"},
		{"a zero-padded date", tree + "author A <a@b> 0170 +0000\ncommitter" + who + "\nm\n", "author line"},
		{"no space before the email", tree + "author A<a@b> 1 +0000\ncommitter" + who + "\nm\n", "author line"},
		{"a bad zone", tree + "author" + who + "committer A <a@b> 1 0100\n\nm\n", "committer line"},
		{"a NUL", tree + "author" + who + "committer" + who + "\nm\x00\n", "NUL"},
		{"unterminated headers", tree + "author" + who + "committer" + strings.TrimSuffix(who, "\n"), "not terminated"},
	} {
		if _, _, why := checkCommit(oid.SHA1, []byte(tc.commit)); !strings.Contains(why, tc.want) {
			t.Errorf("%s: checkCommit says %q, want %q", tc.name, why, tc.want)
		}
	}
	ok := tree + "parent " + strings.Repeat("b", 40) + "\nauthor" + who + "committer" + who + "gpgsig -----BEGIN-----\n x\n -----END-----\n\nmessage\n"
	if _, parents, why := checkCommit(oid.SHA1, []byte(ok)); why != "" || len(parents) != 1 {
		t.Fatalf("a sound commit: %q, %d parents", why, len(parents))
	}
}
