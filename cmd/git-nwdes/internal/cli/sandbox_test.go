package cli

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/nwdes/nwdes/sandbox"
)

func TestSandboxRunPassesTheProgramsEndThroughAsItsExitCode(t *testing.T) {
	if err := sandbox.Available(true); err != nil {
		t.Skipf("this kernel cannot wall a program in: %v", err)
	}
	t.Parallel()
	env := map[string]string{"PATH": "/usr/bin:/bin", "TMPDIR": t.TempDir(), "HOME": t.TempDir()}
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"an exit code is passed through", []string{"--", "sh", "-c", "exit 3"}, 3},
		{"a success is 0", []string{"--", "true"}, 0},
		{"a signal is 128+n", []string{"--", "sh", "-c", "kill -USR2 $$"}, 128 + 12},
		{"the deadline is 124", []string{"--deadline", "100ms", "--grace", "100ms", "--", "sleep", "30"}, 124},
		{"a program that cannot start is 127", []string{"--", "no-such-program-nwdes"}, 127},
		{"a refused directory is 2", []string{"--write", "/no/such/dir", "--", "true"}, 2},
		{"a usage error is 2", []string{"--limit", "cpu=-1", "--", "true"}, 2},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		args := append([]string{"git-nwdes", "sandbox", "run"}, c.args...)
		code := Main(context.Background(), args, Env{Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return env[k] }, Dir: os.TempDir()})
		if code != c.code {
			t.Errorf("%s: %v exited %d, want %d (stderr %q)", c.name, c.args, code, c.code, errb.String())
		}
	}
}
