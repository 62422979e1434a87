package cli_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/nwdes/nwdes/internal/cli"
	"github.com/nwdes/nwdes/sandbox"
)

// TestMain registers git-nwdes so that scripts run it through git's own
// dispatch: `exec git nwdes …` finds git-nwdes on PATH, exactly as a user's
// git does, and an installed hook reaches the code under test.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"git-nwdes": func() { os.Exit(cli.Main(context.Background(), os.Args, cli.OSEnv())) },
	})
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		// [wall]: this kernel can wall a program in (Landlock ABI 3+,
		// seccomp); scripts that run oracles or sandbox run need it.
		Condition: func(cond string) (bool, error) {
			if cond == "wall" {
				return sandbox.Available(true) == nil, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Setup: func(e *testscript.Env) error {
			home := filepath.Join(e.WorkDir, ".home")
			if err := os.MkdirAll(home, 0o755); err != nil {
				return err
			}
			for k, v := range map[string]string{
				"HOME":                home,
				"GIT_CONFIG_NOSYSTEM": "1",
				"GIT_AUTHOR_NAME":     "Tester",
				"GIT_AUTHOR_EMAIL":    "tester@example.com",
				"GIT_COMMITTER_NAME":  "Tester",
				"GIT_COMMITTER_EMAIL": "tester@example.com",
				"GIT_AUTHOR_DATE":     "2026-01-01T00:00:00Z",
				"GIT_COMMITTER_DATE":  "2026-01-01T00:00:00Z",
				"NO_COLOR":            "1",
			} {
				e.Setenv(k, v)
			}
			return os.WriteFile(filepath.Join(home, ".gitconfig"),
				[]byte("[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n"), 0o644)
		},
	})
}
