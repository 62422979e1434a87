package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestEveryVerbHelpHasAUsageLineADescriptionAnExampleAndTheExitStatus runs
// -h on every verb and sub-verb in process and reads what it prints.
func TestEveryVerbHelpHasAUsageLineADescriptionAnExampleAndTheExitStatus(t *testing.T) {
	s := &session{env: Env{Getenv: func(string) string { return "" }}}
	leaves := 0
	var walk func(path []string, cmds []*cli.Command)
	walk = func(path []string, cmds []*cli.Command) {
		for _, c := range cmds {
			if c.Hidden {
				continue
			}
			args := append(append([]string{"git-nwdes"}, path...), c.Name, "-h")
			var out, errb bytes.Buffer
			code := Main(context.Background(), args, Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }, Dir: t.TempDir()})
			help := out.String()
			if code != 0 || errb.Len() != 0 {
				t.Errorf("%v: exit %d, stderr %q", args[1:], code, errb.String())
			}
			for _, want := range []string{"USAGE:", "git nwdes " + strings.Join(append(path, c.Name), " ")} {
				if !strings.Contains(help, want) {
					t.Errorf("%v: help lacks %q", args[1:], want)
				}
			}
			if len(c.Subcommands) == 0 {
				leaves++
				for _, want := range []string{"DESCRIPTION:", "EXAMPLES", "EXIT STATUS"} {
					if !strings.Contains(help, want) {
						t.Errorf("%v: help lacks %q", args[1:], want)
					}
				}
			}
			walk(append(path, c.Name), c.Subcommands)
		}
	}
	walk(nil, s.commands())
	if leaves < 20 {
		t.Fatalf("only %d verbs were checked", leaves)
	}
}
