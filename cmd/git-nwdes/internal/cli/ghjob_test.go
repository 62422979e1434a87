package cli_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// workflowDoc is the document whose GitHub Actions workflow ghjob runs.
const workflowDoc = "../../../../docs/ci.md"

// ghStep is one step of a workflow job, as far as ghjob needs it.
type ghStep struct {
	Name, Uses, If, Run, Shell string
}

// ghWorkflow is the job of a workflow in docs/ci.md: the first ```yaml
// block after the heading "## GitHub Actions".
type ghWorkflow struct {
	// Shell is defaults.run.shell, "" when the workflow sets none.
	Shell string
	Steps []ghStep
}

var (
	ghDefaultShell = regexp.MustCompile(`(?m)^defaults:\n  run:\n    shell: (\S+)`)
	ghKey          = regexp.MustCompile(`^([a-z-]+):(?: (.*))?$`)
)

// parseWorkflow reads the workflow in doc: the steps of its only job,
// each a list item at the indent of the first "- " under "steps:", whose
// keys sit two columns further in; "run: |" takes the lines indented
// past the key, less the first one's indent, as a block scalar keeps
// them. It knows the YAML the document writes, and refuses what it does
// not know.
func parseWorkflow(doc string) (*ghWorkflow, error) {
	block, err := yamlBlockUnder(doc, "## GitHub Actions")
	if err != nil {
		return nil, err
	}
	wf := &ghWorkflow{}
	if m := ghDefaultShell.FindStringSubmatch(block); m != nil {
		wf.Shell = m[1]
	}
	lines := strings.Split(block, "\n")
	start := -1
	for i, l := range lines {
		if strings.TrimSpace(l) == "steps:" {
			if start >= 0 {
				return nil, fmt.Errorf("more than one job's steps")
			}
			start = i + 1
		}
	}
	if start < 0 || start == len(lines) {
		return nil, fmt.Errorf("no steps")
	}
	indent := func(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }
	dash := indent(lines[start])
	keyAt := dash + 2
	var cur *ghStep
	for i := start; i < len(lines); i++ {
		l := lines[i]
		if strings.TrimSpace(l) == "" || strings.HasPrefix(strings.TrimSpace(l), "#") {
			continue
		}
		switch n := indent(l); {
		case n < dash:
			return nil, fmt.Errorf("line %q after the steps", l)
		case n == dash && strings.HasPrefix(l[n:], "- "):
			wf.Steps = append(wf.Steps, ghStep{})
			cur = &wf.Steps[len(wf.Steps)-1]
			l = strings.Repeat(" ", keyAt) + l[keyAt:]
		case n > keyAt:
			continue // a with: or env: value, read by the action GitHub runs
		case n != keyAt:
			return nil, fmt.Errorf("line %q is neither a step nor a step's key", l)
		}
		m := ghKey.FindStringSubmatch(l[keyAt:])
		if m == nil {
			return nil, fmt.Errorf("line %q is not a key", l)
		}
		switch k, v := m[1], m[2]; k {
		case "name":
			cur.Name = v
		case "uses":
			cur.Uses = v
		case "if":
			cur.If = v
		case "shell":
			cur.Shell = v
		case "with":
		case "run":
			if v != "|" {
				cur.Run = v + "\n"
				continue
			}
			var body []string
			cut := -1
			for i+1 < len(lines) && (strings.TrimSpace(lines[i+1]) == "" || indent(lines[i+1]) > keyAt) {
				i++
				if cut < 0 && strings.TrimSpace(lines[i]) != "" {
					cut = indent(lines[i])
				}
				body = append(body, lines[i])
			}
			for j, b := range body {
				if len(b) >= cut {
					body[j] = b[cut:]
				} else {
					body[j] = ""
				}
			}
			cur.Run = strings.TrimRight(strings.Join(body, "\n"), "\n") + "\n"
		default:
			return nil, fmt.Errorf("step key %q: ghjob does not know what GitHub does with it", k)
		}
	}
	for _, s := range wf.Steps {
		if (s.Run == "") == (s.Uses == "") {
			return nil, fmt.Errorf("step %q: want exactly one of run: and uses:", s.Name)
		}
		if strings.Contains(s.Run, "${{") {
			return nil, fmt.Errorf("step %q: an expression in run: (pass it through env: instead)", s.Name)
		}
	}
	return wf, nil
}

func TestTheWorkflowParserReadsRunBlocks(t *testing.T) {
	doc := "# x\n\n## GitHub Actions\n\n```yaml\nname: x\ndefaults:\n  run:\n    shell: bash\njobs:\n  j:\n    steps:\n" +
		"      - uses: actions/checkout@v4\n        with:\n          fetch-depth: 0\n" +
		"      - name: Two lines\n        run: |\n          echo one\n\n            echo indented\n" +
		"      - name: One line\n        if: always()\n        run: echo \"$X\"\n```\n"
	wf, err := parseWorkflow(doc)
	if err != nil {
		t.Fatal(err)
	}
	want := []ghStep{
		{Uses: "actions/checkout@v4"},
		{Name: "Two lines", Run: "echo one\n\n  echo indented\n"},
		{Name: "One line", If: "always()", Run: "echo \"$X\"\n"},
	}
	if wf.Shell != "bash" || len(wf.Steps) != len(want) {
		t.Fatalf("%+v", wf)
	}
	for i := range want {
		if wf.Steps[i] != want[i] {
			t.Errorf("step %d: %+v, want %+v", i, wf.Steps[i], want[i])
		}
	}
	for _, bad := range []string{
		strings.Replace(doc, "echo one", "echo ${{ github.sha }}", 1),
		strings.Replace(doc, "        if: always()\n", "        env:\n          X: y\n", 1),
		strings.Replace(doc, "```yaml", "```yml", 1),
	} {
		if _, err := parseWorkflow(bad); err == nil {
			t.Errorf("took a workflow it cannot run as GitHub would:\n%s", bad)
		}
	}
}

// ghJob runs the job of docs/ci.md's GitHub Actions workflow in the
// script's current directory, the checkout GitHub would have made, as
// GitHub runs it: `ghjob SUMMARY` (SUMMARY is $GITHUB_STEP_SUMMARY).
//
// Each run: script runs as written, with bash --noprofile --norc -eo
// pipefail when the shell is bash (bash -e otherwise), in an environment
// that holds the script's identity and HOME, CI, GITHUB_ACTIONS,
// GITHUB_STEP_SUMMARY and a fresh GITHUB_PATH whose lines are put before
// PATH for the steps after it; PATH does not hold the git-nwdes under
// test, which the workflow must install. A step without if: runs while no
// step has failed, always() always, failure() after a failure. The uses:
// steps are GitHub's: actions/checkout was the script's clone,
// actions/setup-go puts on PATH a go that answers `go env GOPATH` and
// installs the git-nwdes under test for `go install
// github.com/nwdes/nwdes/cmd/git-nwdes@latest` (there is no network), and
// any other action is skipped. Stdout logs each step and its exit status;
// the job fails, as ghjob does, when any step failed.
func ghJob(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: ghjob SUMMARY")
	}
	doc, err := os.ReadFile(workflowDoc)
	ts.Check(err)
	wf, err := parseWorkflow(string(doc))
	if err != nil {
		ts.Fatalf("%s: %v", workflowDoc, err)
	}
	path, goBin := pathWithGoInstall(ts)
	env := append(scriptIdentity(ts), "CI=true", "GITHUB_ACTIONS=true", "GITHUB_STEP_SUMMARY="+ts.MkAbs(args[0]))
	tmp := filepath.Dir(goBin)
	out := ts.Stdout()
	failed := false
	for i, s := range wf.Steps {
		name := s.Name
		if name == "" {
			name = s.Uses
		}
		switch s.If {
		case "", "success()":
			if failed {
				fmt.Fprintf(out, "== %s: skipped\n", name)
				continue
			}
		case "always()":
		case "failure()":
			if !failed {
				fmt.Fprintf(out, "== %s: skipped\n", name)
				continue
			}
		default:
			ts.Fatalf("step %q: ghjob does not evaluate if: %s", name, s.If)
		}
		if s.Uses != "" {
			action, _, _ := strings.Cut(s.Uses, "@")
			switch action {
			case "actions/checkout":
				fmt.Fprintf(out, "== %s: the script's clone\n", name)
			case "actions/setup-go":
				path = append([]string{goBin}, path...)
				fmt.Fprintf(out, "== %s: go installs the git-nwdes under test\n", name)
			default:
				fmt.Fprintf(out, "== %s: not run here\n", name)
			}
			continue
		}
		shell := s.Shell
		if shell == "" {
			shell = wf.Shell
		}
		argv := []string{"bash", "-e"}
		switch shell {
		case "bash":
			argv = []string{"bash", "--noprofile", "--norc", "-eo", "pipefail"}
		case "":
		default:
			ts.Fatalf("step %q: ghjob runs bash, not %s", name, shell)
		}
		script := filepath.Join(tmp, fmt.Sprintf("step%d.sh", i))
		ghPath := filepath.Join(tmp, fmt.Sprintf("path%d", i))
		ts.Check(os.WriteFile(script, []byte(s.Run), 0o644))
		ts.Check(os.WriteFile(ghPath, nil, 0o644))
		if runCIStep(ts, name, append(argv, script), append(env[:len(env):len(env)],
			"PATH="+strings.Join(path, string(filepath.ListSeparator)), "GITHUB_PATH="+ghPath)) != 0 {
			failed = true
		}
		f, err := os.Open(ghPath)
		ts.Check(err)
		for sc := bufio.NewScanner(f); sc.Scan(); {
			if d := strings.TrimSpace(sc.Text()); d != "" {
				path = append([]string{d}, path...)
			}
		}
		f.Close()
	}
	switch {
	case failed && !neg:
		ts.Fatalf("the job failed")
	case !failed && neg:
		ts.Fatalf("the job succeeded")
	}
}

// pathWithGoInstall is the script's PATH less the directory of the
// git-nwdes under test, and a directory holding a go that answers `go env
// GOPATH` and installs that git-nwdes for `go install
// github.com/nwdes/nwdes/cmd/git-nwdes@latest` (there is no network), as a
// CI job must.
func pathWithGoInstall(ts *testscript.TestScript) (path []string, goBin string) {
	nwdes, err := exec.LookPath("git-nwdes")
	ts.Check(err)
	for _, d := range filepath.SplitList(ts.Getenv("PATH")) {
		if d != filepath.Dir(nwdes) {
			path = append(path, d)
		}
	}
	tmp, err := os.MkdirTemp(ts.Getenv("WORK"), ".cijob")
	ts.Check(err)
	goBin = filepath.Join(tmp, "go-bin")
	ts.Check(os.Mkdir(goBin, 0o755))
	ts.Check(os.WriteFile(filepath.Join(goBin, "go"), []byte(`#!/bin/sh
gopath=${GOPATH:-$HOME/go}
case "$*" in
"env GOPATH") echo "$gopath" ;;
"install github.com/nwdes/nwdes/cmd/git-nwdes@latest") mkdir -p "$gopath/bin" && cp '`+nwdes+`' "$gopath/bin/git-nwdes" ;;
*) echo "go (CI job under test): go $* needs the network" >&2; exit 2 ;;
esac
`), 0o755))
	return path, goBin
}

// scriptIdentity is the script's HOME, temporary directory and git
// identity, which a CI job's environment keeps.
func scriptIdentity(ts *testscript.TestScript) []string {
	var env []string
	for _, k := range []string{"HOME", "TMPDIR", "GIT_CONFIG_NOSYSTEM", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL",
		"GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE", "NO_COLOR"} {
		if v := ts.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// yamlBlockUnder is the first ```yaml block after the heading line in doc.
func yamlBlockUnder(doc, heading string) (string, error) {
	_, after, ok := strings.Cut(doc, "\n"+heading+"\n")
	if !ok {
		return "", fmt.Errorf("no heading %q", heading)
	}
	_, after, ok = strings.Cut(after, "\n```yaml\n")
	if !ok {
		return "", fmt.Errorf("no ```yaml block under %q", heading)
	}
	block, _, ok := strings.Cut(after, "\n```\n")
	if !ok {
		return "", fmt.Errorf("the ```yaml block under %q is not closed", heading)
	}
	return block, nil
}

// runCIStep runs argv in the script's current directory with env, as a CI
// job's step, logging its name and exit status on the script's stdout,
// and returns that status.
func runCIStep(ts *testscript.TestScript, name string, argv, env []string) int {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = ts.MkAbs("."), env, ts.Stdout(), ts.Stderr()
	fmt.Fprintf(ts.Stdout(), "== %s\n", name)
	code := 0
	if err := cmd.Run(); err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			ts.Fatalf("%s: %v", name, err)
		}
		code = ee.ExitCode()
	}
	fmt.Fprintf(ts.Stdout(), "== %s: exit %d\n", name, code)
	return code
}
