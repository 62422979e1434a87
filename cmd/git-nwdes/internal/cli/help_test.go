package cli

import (
	"bytes"
	"context"
	"fmt"
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

func TestVerbsAreNamedAsTheyBuild(t *testing.T) {
	s := &session{env: Env{Getenv: func(string) string { return "" }}}
	for _, v := range verbs {
		if c := v.build(s); c.Name != v.name || len(c.Aliases) != 0 {
			t.Errorf("verb %q builds %q with aliases %v", v.name, c.Name, c.Aliases)
		}
	}
}

// TestARunWithOneVerbAnswersAsTheWholeApp runs every verb's help, a bad
// flag on every verb, and every group bare and with a sub-verb it lacks,
// with the app a run builds (the invoked verb only) and with every verb,
// and holds the two to the same exit code and output.
func TestARunWithOneVerbAnswersAsTheWholeApp(t *testing.T) {
	s := &session{env: Env{Getenv: func(string) string { return "" }}}
	var runs [][]string
	var walk func(path []string, cmds []*cli.Command)
	walk = func(path []string, cmds []*cli.Command) {
		for _, c := range cmds {
			p := append(append([]string(nil), path...), c.Name)
			runs = append(runs, append(p, "-h"), append(p, "--no-such-flag"))
			if len(c.Subcommands) > 0 {
				runs = append(runs, p, append(p, "no-such-verb"), append([]string{"help"}, p...))
			}
			walk(p, c.Subcommands)
		}
	}
	walk(nil, s.commands())
	runs = append(runs, []string{"-C", "sub", "version"}, []string{"-C=sub", "gate", "-h"}, []string{"--C", "sub", "status", "-h"},
		[]string{"version", "--generate-bash-completion"}, []string{"-h"}, nil, []string{"versio"}, []string{"-C"})
	dir := t.TempDir()
	for _, args := range runs {
		argv := append([]string{"git-nwdes"}, args...)
		var got [2][3]string
		for i, v := range []*verb{invokedVerb(argv), nil} {
			var out, errb bytes.Buffer
			code := run(context.Background(), argv, Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }, Dir: dir}, v)
			got[i] = [3]string{fmt.Sprint(code), out.String(), errb.String()}
		}
		if got[0] != got[1] {
			t.Errorf("%q: with its verb alone: exit %s, stdout %q, stderr %q; with every verb: exit %s, stdout %q, stderr %q",
				args, got[0][0], got[0][1], got[0][2], got[1][0], got[1][1], got[1][2])
		}
	}
	if len(runs) < 150 {
		t.Fatalf("only %d runs were compared", len(runs))
	}
}

func TestInvokedVerbIsTheVerbAfterTheGlobalFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"version"}, "version"},
		{[]string{"-C", "x", "hook", "pre-push"}, "hook"},
		{[]string{"-C=x", "status", "--json"}, "status"},
		{[]string{"--C", "x", "gate", "run"}, "gate"},
		{[]string{"--C=x", "man"}, "man"},
		{[]string{"gate", "run", "--generate-bash-completion"}, ""},
		{[]string{"help", "gate", "run"}, ""},
		{[]string{"h", "gate"}, ""},
		{[]string{"-h"}, ""},
		{[]string{"--version"}, ""},
		{[]string{"-C"}, ""},
		{[]string{"versio"}, ""},
		{nil, ""},
	} {
		got := ""
		if v := invokedVerb(append([]string{"git-nwdes"}, tc.args...)); v != nil {
			got = v.name
		}
		if got != tc.want {
			t.Errorf("%q: got verb %q, want %q", tc.args, got, tc.want)
		}
	}
}
