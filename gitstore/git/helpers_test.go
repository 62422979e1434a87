package git_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nwdes/nwdes/gitstore/git"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/internal/gittest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	removeBenchFixtures()
	os.Exit(code)
}

// openRepo opens the repository at dir, closed when the test ends.
func openRepo(t testing.TB, dir string, opts git.Options) *git.Repo {
	t.Helper()
	loc, err := gitrepo.Discover(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := git.Open(loc, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// commitFile writes, as nwdes's own writer does (one pack staged, then the
// ref moved by compare-and-swap), a commit on ref's tip whose tree holds
// one file with content, and returns it.
func commitFile(t testing.TB, r *git.Repo, ref git.RefName, name, content string, when time.Time) git.Commit {
	t.Helper()
	tip, err := r.Refs().Read(ref)
	if err != nil {
		t.Fatal(err)
	}
	var b git.Batch
	blob := b.Add(git.BlobObject, []byte(content))
	tree := b.Add(git.TreeObject, git.EncodeTree([]git.TreeEntry{{Name: name, Mode: git.ModeFile, ID: blob}}))
	c := git.Commit{Tree: tree, Time: when, Message: "write " + name}
	if !tip.IsZero() {
		c.Parents = append(c.Parents, tip)
	}
	id := b.Add(git.CommitObject, git.EncodeCommit(c.Tree, c.Parents, "nwdes <nwdes@localhost>", when, c.Message))
	if err := r.Stage(&b, id); err != nil {
		t.Fatal(err)
	}
	if err := r.MoveRef(ref, tip, id); err != nil {
		t.Fatal(err)
	}
	return c
}

var (
	fixtureMu   sync.Mutex
	fixtureDirs = map[string]string{} // name -> temporary root holding repo/
	fixtureErrs = map[string]error{}
)

// benchFixture builds a repository once per test binary run and returns its
// work tree; removeBenchFixtures (from TestMain) deletes it.
func benchFixture(b *testing.B, name string, build func(dir string) error) string {
	b.Helper()
	fixtureMu.Lock()
	defer fixtureMu.Unlock()
	if err := fixtureErrs[name]; err != nil {
		b.Fatal(err)
	}
	if root, ok := fixtureDirs[name]; ok {
		return filepath.Join(root, "repo")
	}
	root, err := os.MkdirTemp("", "nwdes-bench-"+name+"-")
	if err != nil {
		b.Fatal(err)
	}
	fixtureDirs[name] = root // removed even if the build fails
	dir := filepath.Join(root, "repo")
	start := time.Now()
	if out, err := gittest.Run(root, "init", "-q", "-b", "main", dir); err != nil {
		fixtureErrs[name] = fmt.Errorf("git init: %v: %s", err, out)
		b.Fatal(fixtureErrs[name])
	}
	if err := build(dir); err != nil {
		fixtureErrs[name] = fmt.Errorf("build fixture %s: %w", name, err)
		b.Fatal(fixtureErrs[name])
	}
	b.Logf("fixture %s built in %v", name, time.Since(start).Round(time.Millisecond))
	return dir
}

func removeBenchFixtures() {
	fixtureMu.Lock()
	defer fixtureMu.Unlock()
	for _, d := range fixtureDirs {
		os.RemoveAll(d)
	}
}

func gitPipe(dir string, stdin []byte, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gittest.Env(filepath.Dir(dir))
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, errOut.String())
	}
	return strings.TrimSpace(out.String()), nil
}
