package cli

import (
	"context"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestDocsCliMdVerbTableIsTheHelp holds docs/cli.md's verb table to the
// commands the help is made from: every verb the CLI has is in the
// table, every verb the table names exists, and every --flag a row gives
// a verb is one of that verb's flags. A verb added, renamed or given a
// flag without the table changing fails here.
func TestDocsCliMdVerbTableIsTheHelp(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## Verbs\n")
	if !ok {
		t.Fatal("docs/cli.md has no ## Verbs")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	s := &session{env: Env{Getenv: func(string) string { return "" }}}
	root := &cli.Command{Subcommands: s.commands()}

	documented := map[string]bool{}
	rows := 0
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		rows++
		cell := strings.SplitN(strings.ReplaceAll(line, `\|`, "\x00"), " | ", 2)[0]
		for _, span := range docCodeSpans(cell) {
			for _, usage := range docAlternatives(strings.ReplaceAll(span, "\x00", "|")) {
				path, cmd, rest := docVerb(root, usage)
				switch {
				case len(path) == 0 && strings.HasPrefix(usage, "help"):
					continue // the help verb, which every group also has
				case len(path) == 0:
					t.Errorf("docs/cli.md: `%s` names no verb", usage)
					continue
				case len(cmd.Subcommands) > 0:
					t.Errorf("docs/cli.md: `%s` names the group %q, not one of its verbs", usage, strings.Join(path, " "))
					continue
				}
				documented[strings.Join(path, " ")] = true
				for _, m := range docFlagRe.FindAllStringSubmatch(rest, -1) {
					if !docHasFlag(cmd, m[1]) {
						t.Errorf("docs/cli.md: `%s` gives %s --%s, which it does not have", usage, strings.Join(path, " "), m[1])
					}
				}
			}
		}
	}
	if rows < 20 {
		t.Fatalf("docs/cli.md's verb table has %d rows: the table was not found whole", rows)
	}
	var missing []string
	var walk func(path []string, cmds []*cli.Command)
	walk = func(path []string, cmds []*cli.Command) {
		for _, c := range cmds {
			if c.Hidden || c.Name == "help" {
				continue
			}
			p := append(append([]string(nil), path...), c.Name)
			if len(c.Subcommands) == 0 && !documented[strings.Join(p, " ")] {
				missing = append(missing, strings.Join(p, " "))
			}
			walk(p, c.Subcommands)
		}
	}
	walk(nil, root.Subcommands)
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("docs/cli.md's verb table lacks %s", strings.Join(missing, ", "))
	}
}

var (
	docSpanRe = regexp.MustCompile("`([^`]*)`")
	docFlagRe = regexp.MustCompile(`--([a-z][a-z0-9-]*)`)
	// "hooks install | uninstall | status [--server]": one row for
	// several verbs of a group, sharing what follows.
	docAltRe = regexp.MustCompile(`^((?:\S+ )*?)([a-z][\w-]*)((?: \| [a-z][\w-]*)+)(.*)$`)
)

func docCodeSpans(cell string) []string {
	var out []string
	for _, m := range docSpanRe.FindAllStringSubmatch(cell, -1) {
		out = append(out, m[1])
	}
	return out
}

func docAlternatives(usage string) []string {
	m := docAltRe.FindStringSubmatch(usage)
	if m == nil {
		return []string{usage}
	}
	out := []string{m[1] + m[2] + m[4]}
	for _, alt := range strings.Split(strings.TrimPrefix(m[3], " | "), " | ") {
		out = append(out, m[1]+alt+m[4])
	}
	return out
}

// docVerb walks usage's leading words down the command tree: the verb's
// path, its command, and the rest of the usage.
func docVerb(root *cli.Command, usage string) ([]string, *cli.Command, string) {
	words := strings.Fields(usage)
	cmd, path := root, []string(nil)
	for len(words) > 0 {
		var next *cli.Command
		for _, sub := range cmd.Subcommands {
			if sub.Name == words[0] && sub.Name != "help" {
				next = sub
			}
		}
		if next == nil {
			break
		}
		cmd, path, words = next, append(path, next.Name), words[1:]
	}
	return path, cmd, strings.Join(words, " ")
}

func docHasFlag(cmd *cli.Command, name string) bool {
	for _, f := range cmd.Flags {
		for _, n := range f.Names() {
			if n == name {
				return true
			}
		}
	}
	return false
}

// TestExitRequiredFlagsHoldOnEveryVerbOfAGroup: a required flag holds on
// every verb that takes it. Verbs of a group once shared one flag value,
// and making the first verb's flag required-by-nwdes cleared the mark for
// the others, so ledger show without --ledger ran on the ledger "", and
// examine probe without --workspace on the current directory.
func TestExitRequiredFlagsHoldOnEveryVerbOfAGroup(t *testing.T) {
	// Not parallel: urfave/cli applies its one global HelpFlag in every run.
	for _, args := range [][]string{
		{"ledger", "append", "--event", "{}"}, {"ledger", "show"}, {"ledger", "verify"}, {"ledger", "seal"},
		{"trace", "validate", "b"}, {"trace", "append", "--store", "s", "b"}, {"trace", "read", "--receipt", "r", "--output", "o"}, {"trace", "list"},
		{"trust", "add", "--key", "k"}, {"trust", "remove", "--key", "k"},
		{"examine", "read"}, {"examine", "probe", "--", "x"},
	} {
		var out, errb strings.Builder
		code := Main(context.Background(), append([]string{"git-nwdes"}, args...), Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }, Dir: t.TempDir()})
		if code != ExitRefused || !strings.Contains(errb.String(), "required flag") {
			t.Errorf("%v: exit %d, stderr %q; want a usage error naming the required flag", args, code, errb.String())
		}
	}
}
