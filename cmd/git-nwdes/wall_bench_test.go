package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/sandbox"
)

// bwrapLine is the twin of a run through the wall: bubblewrap with every
// namespace, a read-only host root, its own /tmp, /proc and /dev (issue 26).
var bwrapLine = []string{"bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--tmpfs", "/tmp", "--proc", "/proc", "--dev", "/dev"}

// needWalls skips a benchmark where its twin or the wall cannot run: no
// bwrap on PATH, or a kernel (or container) that refuses the namespaces or
// Landlock either needs.
func needWalls(b *testing.B) {
	b.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		b.Skip("bwrap (bubblewrap) is not on PATH: the twin cannot run")
	}
	if out, err := exec.Command(bwrapLine[0], append(bwrapLine[1:], "true")...).CombinedOutput(); err != nil {
		b.Skipf("bwrap cannot make its namespaces here (user namespaces refused?): %v %s", err, out)
	}
	if err := sandbox.Available(true); err != nil {
		b.Skip(err)
	}
}

// BenchmarkWallCLI times `git-nwdes sandbox run -- /bin/true`, a strict
// run through the CLI as users start one, against bubblewrap running the
// same program (bwrapLine), alternating. The goal (issue 26) is a ratio
// of at most 1.5.
func BenchmarkWallCLI(b *testing.B) {
	needWalls(b)
	dir := b.TempDir()
	nwdes := filepath.Join(dir, "git-nwdes")
	if err := gittest.BuildNwdes(nwdes); err != nil {
		b.Fatal(err)
	}
	gittest.Alternate(b, dir, gittest.Env(dir), []string{"nwdes", "bwrap"},
		[]string{nwdes, "sandbox", "run", "--strict", "--", "/bin/true"},
		append(append([]string{}, bwrapLine...), "/bin/true"))
}

// gateOracles is how many trivial oracles BenchmarkGateRun10's contract has.
const gateOracles = 10

// BenchmarkGateRun10 times `git nwdes gate run` on a repository whose
// contract has ten trivial CHECK oracles (echo a marker), against its
// twin: the same ten commands, each through `/bin/sh -c` in a bubblewrap
// of its own, one after another. The goals (issue 26): a ratio of at most
// 1.5, and at most 3 ms of nwdes's own per oracle
// (overhead-per-oracle-ms: the difference of the two, over ten; in CPU
// time, which a loaded machine inflates less, overhead-per-oracle-cpu-ms).
// The same
// run with --jobs 2 is timed beside them (nwdes-jobs2-ms/op), and so is a
// run of a contract with one oracle of the ten (nwdes-one-ms/op): with it
// the run's cost splits into what each oracle adds
// (marginal-per-oracle-ms, of which marginal-overhead-per-oracle-ms is
// beyond its bubblewrap) and what a run costs whatever its oracles
// (fixed-ms: start, contract, the lane's helper, the evidence record).
func BenchmarkGateRun10(b *testing.B) {
	needWalls(b)
	dir := b.TempDir()
	nwdes := filepath.Join(dir, "git-nwdes")
	if err := gittest.BuildNwdes(nwdes); err != nil {
		b.Fatal(err)
	}
	repo := gittest.Init(b, false)
	var contract, twin strings.Builder
	contract.WriteString("# REQUEST\nten trivial oracles\n\n# ACCEPTANCE CRITERIA\n")
	for i := 1; i <= gateOracles; i++ {
		check := fmt.Sprintf("echo ok-%d", i)
		fmt.Fprintf(&contract, "E%d. it prints ok-%d\n  CHECK: %s\n  EXPECT: ok-%d\n", i, i, check, i)
		fmt.Fprintf(&twin, "%s /bin/sh -c '%s' >/dev/null || exit 1\n", strings.Join(bwrapLine, " "), check)
	}
	contract.WriteString("\n# FILE SCOPE\n.nwave/**\n")
	gittest.WriteFile(b, repo, ".nwave/features/bench.md", contract.String())
	gittest.WriteFile(b, repo, ".nwave/features/one.md",
		"# REQUEST\none trivial oracle\n\n# ACCEPTANCE CRITERIA\nE1. it prints ok-1\n  CHECK: echo ok-1\n  EXPECT: ok-1\n\n# FILE SCOPE\n.nwave/**\n")
	gittest.Git(b, repo, "add", ".nwave")
	gittest.Git(b, repo, "commit", "-q", "-m", "contract")
	// Paths under the home stay outside the wall's roots: PATH names the
	// system's directories only, as on a machine whose toolchain is there.
	env := append(gittest.Env(filepath.Dir(repo)), "PATH=/usr/local/bin:/usr/bin:/bin")
	gate := []string{nwdes, "gate", "run", "--feature", "bench"}
	cmd := exec.Command(gate[0], gate[1:]...)
	cmd.Dir, cmd.Env = repo, env
	if out, err := cmd.CombinedOutput(); err != nil || strings.Count(string(out), " MET ") != gateOracles {
		b.Fatalf("gate run before timing: %v\n%s", err, out)
	}
	cmd = exec.Command(nwdes, "gate", "run", "--feature", "one")
	cmd.Dir, cmd.Env = repo, env
	if out, err := cmd.CombinedOutput(); err != nil || strings.Count(string(out), " MET ") != 1 {
		b.Fatalf("gate run of one oracle before timing: %v\n%s", err, out)
	}
	script := filepath.Join(dir, "twin.sh")
	if err := os.WriteFile(script, []byte(twin.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	jobs2 := append(append([]string{}, gate...), "--jobs", "2")
	one := []string{nwdes, "gate", "run", "--feature", "one"}
	ms, cpu := gittest.Alternate(b, repo, env, []string{"nwdes", "bwrap", "nwdes-jobs2", "nwdes-one"}, gate, []string{"/bin/sh", script}, jobs2, one)
	b.ReportMetric((ms[0]-ms[1])/gateOracles, "overhead-per-oracle-ms")
	b.ReportMetric((cpu[0]-cpu[1])/gateOracles, "overhead-per-oracle-cpu-ms")
	marginal := (ms[0] - ms[3]) / (gateOracles - 1)
	b.ReportMetric(marginal, "marginal-per-oracle-ms")
	b.ReportMetric(marginal-ms[1]/gateOracles, "marginal-overhead-per-oracle-ms")
	b.ReportMetric(ms[3]-marginal, "fixed-ms")
}
