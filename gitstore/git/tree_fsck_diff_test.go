package git

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/internal/gittest"
)

// treeBytes is a tree's content from entries "mode name" (ids the blob
// "x\n"'s, or the empty tree's for a mode 4xxxx), in the order given.
func treeBytes(entries ...string) []byte {
	blob := oid.MustParse("587be6b4c3f93f93c489c0111bba5596147a26cb") // git hash-object of "x"
	tree := oid.MustParse("4b825dc642cb6eb9a060e54bf8d69288fbee4904")
	var b []byte
	for _, e := range entries {
		mode, _, _ := strings.Cut(e, " ")
		id := blob
		if strings.HasPrefix(mode, "4") {
			id = tree
		}
		raw := id.Raw()
		b = append(append(append(b, e...), 0), raw[:20]...)
	}
	return b
}

// decodeTree refuses what git fsck reports as an error in a tree, and
// reads what it accepts: each tree is written with git hash-object
// --literally and judged by both.
func TestDecodeTreeRefusesWhatGitFsckReports(t *testing.T) {
	for _, tc := range []struct {
		name    string
		entries []string
	}{
		{"a tree of mode 40755 sorts as a directory", []string{"40755 a", "100644 a.b"}},
		{".gitmodules as a symbolic link", []string{"120000 .gitmodules"}},
		{".GITMODULES as a symbolic link", []string{"120000 .GITMODULES"}},
		{"a directory and a file of one name", []string{"100644 a", "40000 a"}},
		{"in order", []string{"100644 a.b", "40755 a"}},
		{"a .gitmodules file", []string{"100644 .gitmodules"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := gittest.Init(t, false)
			blob := exec.Command("git", "hash-object", "-w", "--stdin")
			blob.Dir, blob.Stdin = dir, strings.NewReader("x\n")
			if err := blob.Run(); err != nil {
				t.Fatal(err)
			}
			raw := treeBytes(tc.entries...)
			cmd := exec.Command("git", "hash-object", "--literally", "-w", "-t", "tree", "--stdin")
			cmd.Dir, cmd.Stdin = dir, strings.NewReader(string(raw))
			out, err := cmd.Output()
			if err != nil {
				t.Fatal(err)
			}
			id := oid.MustParse(strings.TrimSpace(string(out)))
			fsck := exec.Command("git", "fsck", "--no-dangling")
			fsck.Dir = dir
			report, fsckErr := fsck.CombinedOutput()
			gitRefuses := fsckErr != nil
			_, err = decodeTree(id, raw)
			if gitRefuses != (err != nil) {
				t.Fatalf("git fsck refuses: %v (%s); decodeTree: %v", gitRefuses, report, err)
			}
		})
	}
}
