package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/refusal"
)

func TestEveryErrorMapsToTheRowOfTheTableItBelongsTo(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		err  error
		want int
	}{
		"nothing went wrong":                       {nil, ExitOK},
		"a negative judgment":                      {negative("not accepted"), ExitNegative},
		"a finding that is the verb's judgment":    {findings(fmt.Errorf("verify: %w", refusal.NewUnreadable(refusal.LedgerBroken, "r", "entry 3")), refusal.LedgerBroken), ExitNegative},
		"a refusal that is no finding of the verb": {findings(refusal.NewUnreadable(refusal.RecordMalformed, "r", "x"), refusal.LedgerBroken), ExitUndecided},
		"a verb that could not decide":             {undecided("ERROR"), ExitUndecided},
		"a refused request":                        {fmt.Errorf("close: %w", refusal.New(refusal.PartInvalid, "r", "E2")), ExitRefused},
		"a usage error":                            {usagef("a verb is required"), ExitRefused},
		"records that cannot be read":              {refusal.NewUnreadable(refusal.ObjectMissing, "r", "tree x"), ExitUndecided},
		"an input that cannot be read":             {refusal.NewUnreadable(refusal.InputUnreadable, "r", "a FIFO"), ExitUndecided},
		"a wall the kernel cannot build":           {refusal.NewUnavailable(refusal.SandboxUnavailable, "r", "no landlock"), ExitEnvironment},
		"a remote that failed":                     {refusal.NewUnavailable(refusal.RemoteFailed, "r", "git fetch"), ExitEnvironment},
		"git not found":                            {fmt.Errorf("run git: %w", &exec.Error{Name: "git", Err: exec.ErrNotFound}), ExitEnvironment},
		"a full disk":                              {fmt.Errorf("write: %w", &os.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC}), ExitEnvironment},
		"no file descriptor left":                  {&os.PathError{Op: "open", Path: "x", Err: syscall.EMFILE}, ExitEnvironment},
		"an error nwdes does not name":             {errors.New("something odd"), ExitUndecided},
		"an interruption":                          {fmt.Errorf("gate run: %w", context.Canceled), ExitInterrupted},
		"a program's own code":                     {&passthrough{code: 4}, 4},
	} {
		if got := exitCode(c.err); got != c.want {
			t.Errorf("%s: exit %d, want %d (%v)", name, got, c.want, c.err)
		}
	}
}

func TestAnErrorOfAnInterruptedRunIsTheInterruptions(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	code := report(errors.New("signal: killed"), true, &out, &errb, false, style{})
	if code != ExitInterrupted || errb.String() != "interrupted: signal: killed\n" {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
}

func TestAFindingPrintsAsTheRefusalItIs(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	err := findings(refusal.NewUnreadable(refusal.TraceInvalid, "fix the bundle", "line 2: no seal"), refusal.TraceInvalid)
	if code := report(err, false, &out, &errb, false, style{}); code != ExitNegative {
		t.Fatalf("exit %d", code)
	}
	if errb.String() != "TraceInvalid: line 2: no seal\nremedy: fix the bundle\n" {
		t.Fatalf("stderr %q", errb.String())
	}
}

// exitLine is a row of an EXIT STATUS section: the code, its meaning, and
// the verb's note in parentheses.
var exitLine = regexp.MustCompile(`^   (\d+) +(.*)$`)

// exitSection returns the lines of help's EXIT STATUS section.
func exitSection(help string) ([]string, bool) {
	_, after, ok := strings.Cut(help, "EXIT STATUS\n")
	if !ok {
		return nil, false
	}
	var lines []string
	for _, l := range strings.Split(after, "\n") {
		if strings.TrimSpace(l) == "" {
			break
		}
		lines = append(lines, strings.TrimPrefix(l, "   ")) // the description's indent
	}
	return lines, true
}

// TestEveryVerbsExitStatusIsTheTable runs -h on the top level, every verb
// group and every verb, in process, and holds each EXIT STATUS section to
// exitRows: every number is a row of the table, with its meaning word for
// word and at most a note of the verb's own; a verb shows every row but 1,
// and 1 only when it judges; the top level and a group show every row.
func TestEveryVerbsExitStatusIsTheTable(t *testing.T) {
	meaning := map[int]string{}
	for _, r := range exitRows() {
		meaning[r.code] = r.meaning
	}
	var check func(path []string, cmds []*cli.Command)
	checkHelp := func(path []string, group bool) {
		args := append(append([]string{"git-nwdes"}, path...), "-h")
		var out, errb bytes.Buffer
		if code := Main(context.Background(), args, Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }, Dir: t.TempDir()}); code != 0 {
			t.Fatalf("%v: exit %d: %s", path, code, errb.String())
		}
		lines, ok := exitSection(out.String())
		if !ok {
			t.Errorf("%v: no EXIT STATUS", path)
			return
		}
		seen := map[int]bool{}
		passes := false
		for _, l := range lines {
			m := exitLine.FindStringSubmatch(l)
			if m == nil {
				if len(seen) > 0 {
					t.Errorf("%v: %q follows the rows", path, l)
				}
				passes = true // a program's own code, before nwdes's
				continue
			}
			code, _ := strconv.Atoi(m[1])
			want, known := meaning[code]
			switch {
			case !known:
				t.Errorf("%v: exit %d is not in the table", path, code)
			case m[2] != want && !(strings.HasPrefix(m[2], want+" (") && strings.HasSuffix(m[2], ")")):
				t.Errorf("%v: exit %d says %q, the table %q", path, code, m[2], want)
			case seen[code]:
				t.Errorf("%v: exit %d twice", path, code)
			}
			seen[code] = true
		}
		for _, r := range exitRows() {
			optional := r.code == ExitNegative && (!group || passes) || r.code == ExitOK && passes
			if !seen[r.code] && !optional {
				t.Errorf("%v: EXIT STATUS lacks %d (%s)", path, r.code, r.meaning)
			}
		}
	}
	leaves := 0
	check = func(path []string, cmds []*cli.Command) {
		for _, c := range cmds {
			if c.Hidden {
				continue
			}
			p := append(append([]string(nil), path...), c.Name)
			if len(c.Subcommands) == 0 {
				leaves++
				checkHelp(p, false)
				continue
			}
			if c.Description != "" {
				checkHelp(p, true)
			}
			check(p, c.Subcommands)
		}
	}
	checkHelp(nil, true)
	s := &session{env: Env{Getenv: func(string) string { return "" }}}
	check(nil, s.commands())
	if leaves < 20 {
		t.Fatalf("only %d verbs were checked", leaves)
	}
}

// The verbs that judge say so in their EXIT STATUS; a verb that judges
// nothing never shows 1.
func TestOnlyTheVerbsThatJudgeShowANegativeJudgment(t *testing.T) {
	judging := map[string]bool{"status": true, "fsck": true, "verify": true, "examine close": true, "gate run": true, "gate status": true,
		"contract check": true, "ledger verify": true, "ledger grade": true, "trial preflight": true, "trace validate": true,
		"hook pre-push": true, "hook pre-receive": true, "hook reference-transaction": true, "swarm land": true, "swarm run": true}
	s := &session{env: Env{Getenv: func(string) string { return "" }}}
	var walk func(path string, cmds []*cli.Command)
	walk = func(path string, cmds []*cli.Command) {
		for _, c := range cmds {
			name := strings.TrimSpace(path + " " + c.Name)
			if len(c.Subcommands) > 0 {
				walk(name, c.Subcommands)
				continue
			}
			if c.Hidden {
				continue
			}
			lines, _ := exitSection(c.Description + "\n")
			shows := false
			for _, l := range lines {
				if m := exitLine.FindStringSubmatch("   " + l); m != nil && m[1] == "1" {
					shows = true
				}
			}
			if shows != judging[name] {
				t.Errorf("%s: shows exit 1 %v, judges %v", name, shows, judging[name])
			}
		}
	}
	walk("", s.commands())
}

func TestDocsCliMdHoldsTheExitTable(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## Exit status\n")
	if !ok {
		t.Fatal("docs/cli.md has no ## Exit status")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	if want := exitDocTable(); !strings.Contains(section, want) {
		t.Fatalf("docs/cli.md's exit table is not the code's; it should read:\n%s", want)
	}
	if n := strings.Count(section, "\n| "); n != len(exitRows())+1 {
		t.Fatalf("docs/cli.md's exit section has %d table lines, want the table's %d rows and a header", n, len(exitRows()))
	}
}

func TestHelpOfASubVerbShowsThatVerb(t *testing.T) {
	// Not parallel: urfave/cli applies its one global HelpFlag in every run.
	for _, args := range [][]string{{"help", "gate", "run"}, {"gate", "help", "run"}, {"h", "gate", "run"}} {
		var out, errb bytes.Buffer
		code := Main(context.Background(), append([]string{"git-nwdes"}, args...), Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }, Dir: t.TempDir()})
		if code != 0 || !strings.Contains(out.String(), "git nwdes gate run - run every oracle") {
			t.Errorf("%v: exit %d, stdout %q", args, code, out.String())
		}
	}
	var out, errb bytes.Buffer
	code := Main(context.Background(), []string{"git-nwdes", "help", "gate", "stat"}, Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }, Dir: t.TempDir()})
	if code != ExitRefused || !strings.HasPrefix(errb.String(), "UnknownVerb: git nwdes gate has no verb \"stat\"\nremedy: did you mean git nwdes gate status?") {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
}

func TestABadFlagValueIsAUsageErrorSayingWhatItLacks(t *testing.T) {
	// Not parallel: urfave/cli applies its one global HelpFlag in every run.
	for args, want := range map[string]string{
		"gate run --feature f --timeout 5":     "usage: --timeout 5: a duration needs a unit, as in 5s, 5m or 5h\n",
		"gate run --feature f --timeout soon":  "usage: --timeout \"soon\" is not a valid value\n",
		"swarm run --worker w --workers many":  "usage: --workers \"many\" is not a valid value\n",
		"export --format junit --max-bytes 1k": "usage: --max-bytes \"1k\" is not a valid value\n",
	} {
		var out, errb bytes.Buffer
		code := Main(context.Background(), append([]string{"git-nwdes"}, strings.Fields(args)...), Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }, Dir: t.TempDir()})
		if code != ExitRefused || !strings.HasPrefix(errb.String(), want) {
			t.Errorf("%s: exit %d, stderr %q", args, code, errb.String())
		}
	}
}
