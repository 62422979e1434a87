package gittest

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
)

var (
	fixtureMu   sync.Mutex
	fixtureDirs = map[string]string{} // name -> temporary root holding repo/
	fixtureErrs = map[string]error{}
)

// Fixture builds a repository once per test binary run (git init, then
// build) and returns its work tree; RemoveFixtures, from the package's
// TestMain, deletes every one built. Benchmarks share one fixture this way
// instead of building it for each.
func Fixture(b testing.TB, name string, build func(dir string) error) string {
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
	if out, err := Run(root, "init", "-q", "-b", "main", dir); err != nil {
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

// RemoveFixtures deletes the repositories Fixture built.
func RemoveFixtures() {
	fixtureMu.Lock()
	defer fixtureMu.Unlock()
	for _, d := range fixtureDirs {
		os.RemoveAll(d)
	}
}

// Pipe runs git in dir with stdin, in the pinned test environment (Env of
// dir's parent), and returns its output trimmed, or an error carrying what
// git said.
func Pipe(dir string, stdin []byte, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = Env(filepath.Dir(dir))
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, errOut.String())
	}
	return strings.TrimSpace(out.String()), nil
}

// FixtureDir makes a temporary directory that RemoveFixtures deletes with
// the fixtures (one to build helper programs in, say).
func FixtureDir(name string) (string, error) {
	root, err := os.MkdirTemp("", "nwdes-bench-"+name+"-")
	if err == nil {
		fixtureMu.Lock()
		fixtureDirs["dir "+name] = root
		fixtureMu.Unlock()
	}
	return root, err
}
