package stage_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/gitstore/git"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/gitstore/stage"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/refusal"
)

// TestAStagedCheckoutIsOneGitSeesAsClean stages a commit of a SHA-1 and of
// a SHA-256 repository (files, an executable, a symlink, nested and odd
// names) and asks git, as a second client, about the index nwdes wrote:
// it lists exactly the commit's tree, its stat data matches the files
// (git diff-files, which compares stat data alone, finds nothing), git
// status is clean, git fsck --strict accepts the repository, and a commit
// made there has the staged commit as its parent.
func TestAStagedCheckoutIsOneGitSeesAsClean(t *testing.T) {
	for _, format := range []string{"sha1", "sha256"} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			src := filepath.Join(t.TempDir(), "src")
			gittest.Git(t, filepath.Dir(src), "init", "-q", "-b", "main", "--object-format="+format, src)
			for name, body := range map[string]string{
				"README":                 "hello\n",
				"a/b/c/deep.txt":         "deep\n",
				"name with spaces.txt":   "spaces\n",
				"ünïcödé.md":             "utf-8\n",
				"a/b.txt":                "orders after a/ as git orders names\n",
				"a-b":                    "and before a/ again\n",
				strings.Repeat("n", 200): "a long name\n",
				"empty":                  "",
			} {
				gittest.WriteFile(t, src, name, body)
			}
			gittest.WriteFile(t, src, "bin/run", "#!/bin/sh\necho run\n")
			if err := os.Chmod(filepath.Join(src, "bin/run"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("a/b/c/deep.txt", filepath.Join(src, "link")); err != nil {
				t.Fatal(err)
			}
			gittest.Git(t, src, "add", "-A")
			gittest.Git(t, src, "commit", "-q", "-m", "files")
			head := gittest.Git(t, src, "rev-parse", "HEAD")

			loc, err := gitrepo.Discover(src, nil)
			if err != nil {
				t.Fatal(err)
			}
			r, err := git.Open(loc, git.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			id, err := oid.ParseOf(r.Format(), head)
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(t.TempDir(), "job")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			export := func(d string) error {
				cmd := exec.Command("sh", "-c", `git -C "$1" archive HEAD | tar -x -C "$2"`, "sh", src, d)
				cmd.Env = gittest.Env(t.TempDir())
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Logf("%s", out)
				}
				return err
			}
			if err := stage.Repository(r, id, dir, "worker/card", export); err != nil {
				t.Fatal(err)
			}

			if got, want := gittest.Git(t, dir, "ls-files", "-s"), lsTree(t, src); got != want {
				t.Fatalf("git ls-files -s in the staged checkout:\n%s\nwant (git ls-tree -r HEAD):\n%s", got, want)
			}
			if out, err := gittest.Run(dir, "diff-files", "--quiet"); err != nil {
				t.Fatalf("git diff-files: the index's stat data does not match the files: %v %s%s", err, out, gittest.Git(t, dir, "diff-files"))
			}
			if st := gittest.Git(t, dir, "status", "--porcelain"); st != "" {
				t.Fatalf("git status in the staged checkout:\n%s", st)
			}
			if out, err := gittest.Run(dir, "fsck", "--strict", "--no-dangling"); err != nil {
				t.Fatalf("git fsck --strict: %v %s", err, out)
			}
			gittest.WriteFile(t, dir, "new.txt", "work\n")
			gittest.Git(t, dir, "add", "new.txt")
			gittest.Git(t, dir, "commit", "-q", "-m", "work")
			if parent := gittest.Git(t, dir, "rev-parse", "HEAD^"); parent != head {
				t.Fatalf("the job's commit has parent %s, want the staged %s", parent, head)
			}
		})
	}
}

// lsTree is git ls-tree -r HEAD as git ls-files -s prints the same
// entries: "<mode> <id> 0\t<path>".
func lsTree(t *testing.T, dir string) string {
	var lines []string
	for _, l := range strings.Split(gittest.Git(t, dir, "ls-tree", "-r", "--full-tree", "HEAD"), "\n") {
		meta, path, _ := strings.Cut(l, "\t")
		f := strings.Fields(meta)
		lines = append(lines, f[0]+" "+f[2]+" 0\t"+path)
	}
	return strings.Join(lines, "\n")
}

// TestACommitOfAnotherFormatIsRefusedNeverCut: a SHA-256 id handed to
// a SHA-1 repository's stager is refused by name, and nothing is staged.
func TestACommitOfAnotherFormatIsRefusedNeverCut(t *testing.T) {
	src := gittest.Init(t, false)
	loc, err := gitrepo.Discover(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := git.Open(loc, git.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	long, err := oid.ParseOf(oid.SHA256, strings.Repeat("ab", 32))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	err = stage.Repository(r, long, dir, "worker/card", func(string) error { t.Fatal("exported"); return nil })
	if !refusal.Named(err, refusal.UnsupportedRepository) {
		t.Fatalf("staging a SHA-256 id in a SHA-1 repository: %v, want UnsupportedRepository", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("a refused staging left %d entries", len(ents))
	}
}

// TestAStagedBranchIsPackedSoNoDirectoryIsMadeForIt: the checkout's
// branch is the one line of its packed-refs (no refs/heads/ is made for
// it, which is two directories made a staging), and git holds it as a
// branch all the same: rev-parse answers it, git branch lists it, git
// fsck --strict accepts the repository, and a commit there writes it
// loose on top of the staged commit.
func TestAStagedBranchIsPackedSoNoDirectoryIsMadeForIt(t *testing.T) {
	src := gittest.Init(t, false)
	head := gittest.Git(t, src, "rev-parse", "HEAD")
	loc, err := gitrepo.Discover(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := git.Open(loc, git.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	id, err := oid.ParseOf(r.Format(), head)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	export := func(d string) error { return os.WriteFile(filepath.Join(d, "README"), []byte("hello\n"), 0o644) }
	if err := stage.Repository(r, id, dir, "worker/card", export); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dir, ".git", "refs", "heads")); !os.IsNotExist(err) {
		t.Fatalf("refs/heads in the staged repository: %v, want none (the branch is packed)", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, ".git", "packed-refs")); err != nil || !strings.Contains(string(b), head+" refs/heads/worker/card\n") {
		t.Fatalf("packed-refs: %q, %v; want the line %s refs/heads/worker/card", b, err, head)
	}
	if got := gittest.Git(t, dir, "rev-parse", "refs/heads/worker/card"); got != head {
		t.Fatalf("git rev-parse worker/card: %s, want %s", got, head)
	}
	if got := gittest.Git(t, dir, "branch", "--show-current"); got != "worker/card" {
		t.Fatalf("git branch --show-current: %q, want worker/card", got)
	}
	if out, err := gittest.Run(dir, "fsck", "--strict", "--no-dangling"); err != nil {
		t.Fatalf("git fsck --strict: %v %s", err, out)
	}
	gittest.WriteFile(t, dir, "new.txt", "work\n")
	gittest.Git(t, dir, "add", "new.txt")
	gittest.Git(t, dir, "commit", "-q", "-m", "work")
	if got := gittest.Git(t, dir, "rev-parse", "worker/card^"); got != head {
		t.Fatalf("the branch's commit has parent %s, want the staged %s", got, head)
	}
}
