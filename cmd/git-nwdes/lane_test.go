package main_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/sandbox"
)

// TestTheBuiltBinaryRunsAGatesOraclesInALane: git-nwdes built as `make
// build` builds it (not this test binary, whose main may run on another
// thread) runs a gate run's oracles through one lane helper, which each
// oracle sees as its pid 1. A lane the real binary refused (its helper
// not on its first thread) once failed make demo's gate run while every
// test passed.
func TestTheBuiltBinaryRunsAGatesOraclesInALane(t *testing.T) {
	if testing.Short() {
		t.Skip("builds git-nwdes")
	}
	if err := sandbox.Available(true); err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	nwdes := filepath.Join(dir, "git-nwdes")
	if err := gittest.BuildNwdes(nwdes); err != nil {
		t.Fatal(err)
	}
	repo := gittest.Init(t, false)
	const check = `tr '\0' ' ' < /proc/1/cmdline`
	gittest.WriteFile(t, repo, ".nwave/features/lane.md", "# REQUEST\ntwo oracles\n\n# ACCEPTANCE CRITERIA\n"+
		"E1. its pid 1 is a lane's helper\n  CHECK: "+check+"\n  EXPECT: __nwdes-wall-lane\n"+
		"E2. so is the next one's\n  CHECK: "+check+"\n  EXPECT: __nwdes-wall-lane\n"+
		"\n# FILE SCOPE\n.nwave/**\n")
	gittest.Git(t, repo, "add", ".nwave")
	gittest.Git(t, repo, "commit", "-q", "-m", "contract")
	cmd := exec.Command(nwdes, "gate", "run", "--feature", "lane")
	cmd.Dir, cmd.Env = repo, append(gittest.Env(filepath.Dir(repo)), "PATH=/usr/local/bin:/usr/bin:/bin")
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Count(string(out), " MET ") != 2 {
		t.Fatalf("gate run: %v\n%s", err, out)
	}
}
