// Package gittest makes real git repositories for tests, with identity,
// dates and configuration pinned so that object ids are reproducible and no
// user or system configuration leaks in. It runs the real git CLI.
package gittest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Env is the pinned environment every git invocation in tests gets.
func Env(home string) []string {
	return []string{
		"HOME=" + home,
		"PATH=" + os.Getenv("PATH"),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Tester",
		"GIT_AUTHOR_EMAIL=tester@example.com",
		"GIT_COMMITTER_NAME=Tester",
		"GIT_COMMITTER_EMAIL=tester@example.com",
		"GIT_AUTHOR_DATE=2026-01-01T00:00:00Z",
		"GIT_COMMITTER_DATE=2026-01-01T00:00:00Z",
		"LANG=C",
	}
}

// Git runs git in dir and returns its trimmed stdout, failing the test on a
// non-zero exit.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := Run(dir, args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(out)
}

// Run runs git in dir and returns combined output and the error.
func Run(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = Env(filepath.Dir(dir))
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Init creates a repository with one commit holding README and returns its
// path. With bare set it creates a bare repository with no commits.
func Init(t testing.TB, bare bool) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	if bare {
		dir += ".git"
		Git(t, filepath.Dir(dir), "init", "-q", "--bare", "-b", "main", dir)
		return dir
	}
	Git(t, filepath.Dir(dir), "init", "-q", "-b", "main", dir)
	WriteFile(t, dir, "README", "hello\n")
	Git(t, dir, "add", "README")
	Git(t, dir, "commit", "-q", "-m", "initial")
	return dir
}

// WriteFile writes a file under dir, creating parent directories.
func WriteFile(t testing.TB, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
