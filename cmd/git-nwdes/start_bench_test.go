package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/nwdes/nwdes/internal/gittest"
)

// BenchmarkStart times a fresh process answering `version`: git-nwdes built
// as `make build` builds it, against its twin `git version`, and an empty
// static Go program as the floor a Go binary cannot go under. Each
// iteration runs all three, the order rotating, so that the machine's load
// falls on them alike. The goal (issue 26) is a ratio of at most 1.3.
func BenchmarkStart(b *testing.B) {
	dir := b.TempDir()
	nwdes := filepath.Join(dir, "git-nwdes")
	if err := gittest.BuildNwdes(nwdes); err != nil {
		b.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(filepath.Join(dir, "empty.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", empty, filepath.Join(dir, "empty.go"))
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build the empty program: %v\n%s", err, out)
	}
	for _, argv := range [][]string{{nwdes, "version"}, {"git", "version"}, {empty}} {
		if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil { // page the binaries in
			b.Fatalf("%s: %v\n%s", argv[0], err, out)
		}
	}
	gittest.Alternate(b, dir, gittest.Env(dir), []string{"nwdes", "git", "empty-go"},
		[]string{nwdes, "version"}, []string{"git", "version"}, []string{empty})
}
