package examine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/internal/gittest"
)

func TestScopeGlobsMatchWholePaths(t *testing.T) {
	t.Parallel()
	cases := []struct {
		glob, path string
		want       bool
	}{
		{"bin/greet", "bin/greet", true},
		{"bin/greet", "bin/greeter", false},
		{"bin/greet", "x/bin/greet", false},
		{"docs", "docs/a.md", false},
		{"docs/", "docs/a.md", true},
		{"docs/", "docs/deep/a.md", true},
		{"docs/", "docs", false},
		{"*.go", "main.go", true},
		{"*.go", "cmd/main.go", false},
		{"src/*", "src/a.go", true},
		{"src/*", "src/a/b.go", false},
		{"src/*.go", "src/.go", true},
		{"src/?.go", "src/a.go", true},
		{"src/?.go", "src/ab.go", false},
		{"src/?.go", "src/é.go", true},
		{"a?b", "a/b", false},
		{"**", "anything/at/all", true},
		{"**/*.go", "main.go", true},
		{"**/*.go", "a/b/main.go", true},
		{"**/*.go", "a/b/main.c", false},
		{"a/**/b", "a/b", true},
		{"a/**/b", "a/x/b", true},
		{"a/**/b", "a/x/y/b", true},
		{"a/**/b", "a/xb", false},
		{"a/**", "a/x/y", true},
		{"a/**", "b/x", false},
		{".nwave/**", ".nwave/features/greeting.md", true},
		{"docs/**.md", "docs/a.md", true},
		{"docs/**.md", "docs/deep/a.md", true},
		{"docs/**.md", "docs/a.txt", false},
		{"/README.md", "README.md", true},
		{"./README.md", "README.md", true},
		{"README.md", "sub/README.md", false},
		{"", "", false},
		{"[ab].go", "[ab].go", true},
		{"[ab].go", "a.go", false},
	}
	for _, c := range cases {
		if got := examine.MatchScope(c.glob, c.path); got != c.want {
			t.Errorf("MatchScope(%q, %q) = %v, want %v", c.glob, c.path, got, c.want)
		}
	}
}

func TestTouchedFilesAreEveryPathThatDiffersBetweenTwoTrees(t *testing.T) {
	t.Parallel()
	dir := gittest.Init(t, false)
	gittest.WriteFile(t, dir, "keep.txt", "same\n")
	gittest.WriteFile(t, dir, "edit.txt", "before\n")
	gittest.WriteFile(t, dir, "gone.txt", "bye\n")
	gittest.WriteFile(t, dir, "old/name.txt", "moved\n")
	gittest.WriteFile(t, dir, "run.sh", "echo\n")
	gittest.Git(t, dir, "add", "-A")
	gittest.Git(t, dir, "commit", "-q", "-m", "base")
	base := gittest.Git(t, dir, "rev-parse", "HEAD")
	gittest.WriteFile(t, dir, "edit.txt", "after\n")
	gittest.WriteFile(t, dir, "new/file.txt", "hi\n")
	gittest.Git(t, dir, "rm", "-q", "gone.txt")
	gittest.Git(t, dir, "mv", "old/name.txt", "new/name.txt")
	if err := os.Chmod(filepath.Join(dir, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "add", "-A")
	gittest.Git(t, dir, "commit", "-q", "-m", "head")
	head := gittest.Git(t, dir, "rev-parse", "HEAD")

	st := openStore(t, dir)
	got, err := examine.TouchedFiles(st, plumbingHash(base), plumbingHash(head))
	if err != nil {
		t.Fatal(err)
	}
	want := gittest.Git(t, dir, "diff", "--name-only", "--no-renames", base, head)
	if !strings.Contains(want, "run.sh") || strings.Join(got, "\n") != want {
		t.Fatalf("touched:\n%s\nwant (git diff --name-only):\n%s", strings.Join(got, "\n"), want)
	}
}

func openStore(t *testing.T, dir string) *gitstore.Store {
	t.Helper()
	loc, err := gitrepo.Discover(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := gitstore.Open(loc, gitstore.Options{Registry: gitstore.MustRegistry(examine.Register)})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestAGlobOfManyStarsStaysFast(t *testing.T) {
	t.Parallel()
	glob := strings.Repeat("*a", 30) + "b"
	path := strings.Repeat("a", 5000)
	done := make(chan bool)
	go func() { done <- examine.MatchScope(glob, path) }()
	select {
	case got := <-done:
		if got {
			t.Fatal("matched a path without b")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("matching took more than 20s")
	}
}

func FuzzMatchScope(f *testing.F) {
	for _, s := range [][2]string{{"docs/**.md", "docs/a/b.md"}, {"a/**/b", "a/b"}, {"*.go", "x.go"}, {"?", "é"}, {"docs/", "docs/x"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, glob, path string) {
		examine.MatchScope(glob, path)
		if utf8.ValidString(path) && !strings.ContainsAny(path, "*?") && path != "" && !strings.HasPrefix(path, "/") && !strings.HasPrefix(path, "./") && !strings.HasSuffix(path, "/") && !examine.MatchScope(path, path) {
			t.Fatalf("the literal glob %q does not match itself", path)
		}
		if path != "" && !examine.MatchScope("**", path) {
			t.Fatalf("** does not match %q", path)
		}
	})
}

func TestScopeMatchingAHugePathUsesBoundedStackAndTime(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("a", 8_000_000)
	start := time.Now()
	for _, c := range []struct {
		glob, path string
		want       bool
	}{
		{"*", huge, true},
	} {
		if got := examine.MatchScope(c.glob, c.path); got != c.want {
			t.Fatalf("MatchScope(%q, <%d bytes>) = %v", c.glob, len(c.path), got)
		}
	}
	// Not a speed goal: linear matching takes well under a second here
	// (26 s under the race detector on a loaded machine), a quadratic one
	// of 8 MB would take hours. The bound names that failure before the
	// package's timeout would, and is far from what load can cause.
	if d := time.Since(start); d > 5*time.Minute {
		t.Fatalf("matching took %v: not linear in the path", d)
	}
}
