package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/sandbox"
)

func TestGateRunShowsProgressOnATerminalOnly(t *testing.T) {
	if err := sandbox.Available(true); err != nil {
		t.Skipf("this kernel cannot wall a program in: %v", err)
	}
	dir := gittest.Init(t, false)
	gittest.WriteFile(t, dir, ".nwave/features/f.md", "# REQUEST\nr\n# ACCEPTANCE CRITERIA\nE1. one\n  CHECK: echo ok\n  EXPECT: ok\n")
	gittest.Git(t, dir, "add", "-A")
	gittest.Git(t, dir, "commit", "-q", "-m", "c")
	env := map[string]string{"PATH": "/usr/bin:/bin", "TMPDIR": t.TempDir(), "HOME": filepath.Dir(dir)}
	for _, terminal := range []bool{true, false} {
		var out, errb bytes.Buffer
		code := Main(context.Background(), []string{"git-nwdes", "gate", "run", "--feature", "f"},
			Env{Stdout: &out, Stderr: &errb, Dir: dir, Terminal: terminal, Getenv: func(k string) string { return env[k] }})
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		shown := strings.Contains(errb.String(), "gate E1: running echo ok") && strings.Contains(errb.String(), "gate E1: MET in ")
		if shown != terminal {
			t.Fatalf("terminal %v, stderr %q", terminal, errb.String())
		}
	}
}
