package workspace_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/examine/workspace"
	"github.com/nwdes/nwdes/refusal"
	"github.com/nwdes/nwdes/sandbox"
)

// pyCandidate declares a python console script "show" that prints the file
// its argument names (a very ordinary public command: cat, a linter, a
// formatter...).
func pyCandidate(t *testing.T) (string, *workspace.Bundle, *workspace.Prober) {
	t.Helper()
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	checkout, st := candidate(t, map[string]string{
		".nwave/examine.json":     "",
		"pyproject.toml":          "[project]\nname = \"show\"\n[project.scripts]\nshow = \"showpkg.cli:main\"\n[tool.hatch.build.targets.wheel]\npackages = [\"src/showpkg\"]\n",
		"src/showpkg/__init__.py": "\n",
		"src/showpkg/cli.py":      "import sys, os\ndef main():\n    a = sys.argv[1]\n    if a == 'cache':\n        open(os.path.join(os.path.dirname(__file__), 'cache.db'), 'w')\n    sys.stdout.write(open(a.split('=', 1)[-1]).read())\n    return 0\n",
	})
	b := prompt(t, st)
	p := &workspace.Prober{Store: st, Wall: wall(t), Python: "/usr/bin/python3"}
	return checkout, b, p
}

// REVIEW 1: a symbolic link in scratch followed by '..' is cleaned away
// lexically before the link is resolved, so the argument check admits a
// path the kernel resolves outside the workspace; in python mode the wall
// lets the program read the whole checkout ("." is always an import root),
// so the examiner reads a private plan.
func TestReviewArgumentWithDotDotAfterAScratchSymlinkIsRefused(t *testing.T) {
	checkout, b, p := pyCandidate(t)
	scratch := filepath.Join(b.Workspace, "scratch")
	if err := os.Symlink(filepath.Join(checkout, "src", "showpkg"), filepath.Join(scratch, "s")); err != nil {
		t.Fatal(err)
	}
	got := probe(t, p, b.Workspace, "show", "s/../../docs/internal/plan.md")
	if got.err == nil {
		t.Fatalf("admitted; the examiner read %q (stderr %q)", got.stdout, got.stderr)
	}
	if refusalName(got.err) != refusal.ProbeRefused {
		t.Fatalf("%v, want ProbeRefused", got.err)
	}
}

// REVIEW 2: a value attached to a short option, or a key=value operand, is
// never checked.
func TestReviewAttachedOptionValuesAreChecked(t *testing.T) {
	checkout, b, p := pyCandidate(t)
	for _, arg := range []string{"-f" + filepath.Join(checkout, "docs/internal/plan.md"), "if=" + filepath.Join(checkout, "docs/internal/plan.md")} {
		got := probe(t, p, b.Workspace, "show", arg)
		if got.err == nil {
			t.Errorf("%q admitted: stdout %q stderr %q", arg, got.stdout, got.stderr)
		} else if refusalName(got.err) != refusal.ProbeRefused {
			t.Errorf("%q: %v", arg, got.err)
		}
	}
}

// REVIEW 3: the wall's refusal report holds the checkout path unreplaced
// (printed by the CLI as "nwdes probe: the wall refused <path>" and in
// --json "wall").
func TestReviewTheWallsRefusalDoesNotNameTheCheckout(t *testing.T) {
	checkout, b, p := pyCandidate(t)
	got := probe(t, p, b.Workspace, "show", "cache")
	if got.err != nil {
		t.Fatal(got.err)
	}
	if strings.Contains(got.stderr, checkout) {
		t.Fatalf("stderr names the checkout: %q", got.stderr)
	}
	if r := got.pr.Result.Refused; r != nil && (strings.Contains(r.Path, checkout) || strings.Contains(r.Line, checkout)) {
		t.Fatalf("the wall's refusal names the checkout: %+v (end %s)", r, got.pr.Result.End)
	}
}

// REVIEW 7: the probe's read set is not kept off the checkout: with the
// checkout's bin on PATH (direnv, `export PATH=$PWD/bin:$PATH`), the wall's
// default roots take the directory above it, the whole checkout, so a
// declared command can read the candidate's private files (here through
// the argument-check bypass of REVIEW 1).
func TestReviewTheDeclaredProbeCannotReadTheCheckoutWithItsBinOnPath(t *testing.T) {
	checkout, st := candidate(t, map[string]string{".nwave/examine.json": `{"commands": [{"name": "show", "path": "bin/show"}]}`})
	writeExec(t, filepath.Join(checkout, "bin/show"), "#!/bin/sh\ncat \"$1\"\n", 0o755)
	b := prompt(t, st)
	w := wall(t)
	w.Path = filepath.Join(checkout, "bin") + ":" + w.Path
	p := &workspace.Prober{Store: st, Wall: w}
	os.Symlink(filepath.Join(checkout, "src"), filepath.Join(b.Workspace, "scratch", "s"))
	got := probe(t, p, b.Workspace, "show", "s/../docs/internal/plan.md")
	if got.err == nil && strings.Contains(got.stdout, "private plan") {
		t.Fatalf("the declared probe read the private plan: %q (read set %v)", got.stdout, got.pr.Result.Enforced.Read)
	}
}

// REVIEW 8: in python mode the interpreter is "python3" looked up on the
// invoking PATH at probe time; a PATH naming scratch (or any directory the
// examiner writes) runs an undeclared program as the "declared" command.
func TestReviewThePythonInterpreterIsNotTakenFromScratch(t *testing.T) {
	_, b, p := pyCandidate(t)
	p.Python = ""
	scratch := filepath.Join(b.Workspace, "scratch")
	writeExec(t, filepath.Join(scratch, "python3"), "#!/bin/sh\necho UNDECLARED\n", 0o755)
	w := p.Wall.(*sandbox.Wall)
	w.Path = scratch + ":" + w.Path
	got := probe(t, p, b.Workspace, "show", "x")
	if strings.Contains(got.stdout, "UNDECLARED") {
		t.Fatalf("an undeclared program ran as the console script: %q", got.stdout)
	}
}
