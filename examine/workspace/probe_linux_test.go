package workspace_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/examine/workspace"
	"github.com/nwdes/nwdes/refusal"
	"github.com/nwdes/nwdes/sandbox"
)

// A probe needs a kernel that can wall it in; the wall itself is tested in
// package sandbox.
func wall(t *testing.T) *sandbox.Wall {
	t.Helper()
	if err := sandbox.Available(false); err != nil {
		t.Skipf("this kernel cannot wall a probe in: %v", err)
	}
	return &sandbox.Wall{Path: "/usr/local/bin:/usr/bin:/bin", Strict: true, TempRoot: t.TempDir(),
		Helper: sandbox.Helper{Path: "/proc/self/exe", Argv0: os.Args[0]}}
}

func writeExec(t *testing.T, path, body string, mode os.FileMode) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	os.Chmod(path, mode)
}

type probed struct {
	pr             *workspace.Probe
	stdout, stderr string
	err            error
}

func probe(t *testing.T, p *workspace.Prober, w string, args ...string) probed {
	t.Helper()
	var out, errOut bytes.Buffer
	p.Stdout, p.Stderr = &out, &errOut
	pr, err := p.Run(context.Background(), w, args)
	return probed{pr, out.String(), errOut.String(), err}
}

const greetScript = "#!/bin/sh\necho \"Hello, $1.\"\necho \"dollar0=$0 cwd=$(pwd) home=$HOME tmp=$TMPDIR\" >&2\necho \"env: $(env | cut -d= -f1 | sort | tr '\\n' ' ')\" >&2\n"

func TestAProbeRunsTheDeclaredScriptInScratchThroughItsDescriptor(t *testing.T) {
	checkout, st := candidate(t, nil)
	writeExec(t, filepath.Join(checkout, "bin/greet"), greetScript, 0o755)
	b := prompt(t, st)
	p := &workspace.Prober{Store: st, Wall: wall(t)}
	got := probe(t, p, b.Workspace, "greet", "Ada")
	if got.err != nil {
		t.Fatal(got.err)
	}
	scratch := filepath.Join(b.Workspace, "scratch")
	if got.stdout != "Hello, Ada.\n" || got.pr.Result.ExitCode != 0 || got.pr.Launch != "descriptor" || got.pr.Result.Enforced.Launch != "descriptor" {
		t.Fatalf("probe: %q %+v", got.stdout, got.pr)
	}
	for _, want := range []string{"dollar0=/dev/fd/", "cwd=" + scratch + " ", "home=" + scratch + " ", "tmp=" + scratch} {
		if !strings.Contains(got.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, got.stderr)
		}
	}
	// Only PATH and LANG come from outside (plus what sh itself sets).
	envLine := got.stderr[strings.Index(got.stderr, "env: "):]
	for _, name := range strings.Fields(strings.TrimPrefix(envLine, "env: ")) {
		switch name {
		case "PATH", "LANG", "HOME", "TMPDIR", "PWD", "OLDPWD", "SHLVL", "_", "GIT_CEILING_DIRECTORIES":
		default:
			t.Errorf("the probe received %s", name)
		}
	}
	// The write set is scratch, and the wall's own job directory, which
	// nothing uses (HOME and TMPDIR are scratch).
	enf := got.pr.Result.Enforced
	if enf.Filesystem != "landlock" || len(enf.Write) != 2 || enf.Write[1] != scratch || !strings.Contains(enf.Write[0], "/nwdes-job-") {
		t.Errorf("what the wall enforced: %+v", enf)
	}
}

func TestAnELFBinaryRunsAndItsExitAndStreamsPassThrough(t *testing.T) {
	checkout, st := candidate(t, map[string]string{".nwave/examine.json": `{"commands": [{"name": "ls", "path": "bin/ls"}]}`})
	ls, err := os.ReadFile("/bin/ls")
	if err != nil {
		t.Skip("no /bin/ls to copy")
	}
	writeExec(t, filepath.Join(checkout, "bin/ls"), string(ls), 0o111) // execute-only
	b := prompt(t, st)
	p := &workspace.Prober{Store: st, Wall: wall(t)}
	got := probe(t, p, b.Workspace, "ls", "../public")
	if got.err != nil || got.stdout != "README.md\ndocs\n" {
		t.Fatalf("ls ../public: %q %v", got.stdout, got.err)
	}
	got = probe(t, p, b.Workspace, "ls", "missing-here")
	if got.err != nil || got.pr.Result.ExitCode == 0 || !strings.Contains(got.stderr, "missing-here") {
		t.Fatalf("ls of a missing name: exit %d %q %v", got.pr.Result.ExitCode, got.stderr, got.err)
	}
}

func TestProbeRefusesUndeclaredCommandsAndEscapingArguments(t *testing.T) {
	checkout, st := candidate(t, nil)
	writeExec(t, filepath.Join(checkout, "bin/greet"), greetScript, 0o755)
	b := prompt(t, st)
	scratch := filepath.Join(b.Workspace, "scratch")
	os.Symlink("/etc", filepath.Join(scratch, "etc"))
	os.Symlink("../public", filepath.Join(scratch, "pub"))
	os.Mkdir(filepath.Join(scratch, "in"), 0o755)
	p := &workspace.Prober{Store: st, Wall: wall(t)}
	for _, args := range [][]string{
		{"sh", "-c", "id"}, {"nope"}, {"greet", "/etc/passwd"}, {"greet", "../../x"}, {"greet", "--file=/etc/passwd"},
		{"greet", "--file=../../x"}, {"greet", "etc/passwd"}, {"greet", "etc"}, {"greet", "in/../../.."},
	} {
		got := probe(t, p, b.Workspace, args...)
		var r *refusal.Error
		if !errors.As(got.err, &r) || r.Name != refusal.ProbeRefused || !strings.Contains(r.Remedy, "greet") {
			t.Errorf("probe %q: %v, want ProbeRefused naming greet", args, got.err)
		}
	}
	for _, args := range [][]string{{"greet", "Ada"}, {"greet", "pub/README.md"}, {"greet", "--name=in/x"}, {"greet", "-v"}, {"greet", "../public/docs"}} {
		if got := probe(t, p, b.Workspace, args...); got.err != nil {
			t.Errorf("probe %q: %v", args, got.err)
		}
	}
}

func TestADeclaredFileThatCannotRunIsRefusedByCause(t *testing.T) {
	for name, c := range map[string]struct {
		setup func(checkout string)
		want  string
	}{
		"missing":        {func(string) {}, "make bin/greet"},
		"not executable": {func(co string) { writeExec(t, filepath.Join(co, "bin/greet"), greetScript, 0o644) }, "chmod +x -- 'bin/greet'"},
		"a symlink": {func(co string) {
			writeExec(t, filepath.Join(co, "real"), greetScript, 0o755)
			os.MkdirAll(filepath.Join(co, "bin"), 0o755)
			os.Symlink("../real", filepath.Join(co, "bin/greet"))
		}, "remove the symbolic link"},
		"not a program": {func(co string) { writeExec(t, filepath.Join(co, "bin/greet"), "\x00\x01garbage", 0o755) }, "not_a_program"},
	} {
		t.Run(name, func(t *testing.T) {
			checkout, st := candidate(t, nil)
			c.setup(checkout)
			b := prompt(t, st)
			got := probe(t, &workspace.Prober{Store: st, Wall: wall(t)}, b.Workspace, "greet", "Ada")
			var r *refusal.Error
			if !errors.As(got.err, &r) || r.Name != refusal.InputUnreadable || !strings.Contains(r.Error()+" "+r.Remedy, c.want) {
				t.Fatalf("%v (remedy %v), want InputUnreadable with %q", got.err, r, c.want)
			}
			if strings.Contains(r.Error(), checkout) {
				t.Errorf("the refusal names the checkout: %v", r)
			}
		})
	}
}

func TestWhatRunsIsTheFileTheWalkCheckedNotWhatReplacedItsPath(t *testing.T) {
	checkout, st := candidate(t, nil)
	path := filepath.Join(checkout, "bin/greet")
	writeExec(t, path, greetScript, 0o755)
	b := prompt(t, st)
	p := &workspace.Prober{Store: st, Wall: wall(t)}
	workspace.BeforeStart(p, func() {
		writeExec(t, path+".new", "#!/bin/sh\necho replaced\n", 0o755)
		if err := os.Rename(path+".new", path); err != nil {
			t.Fatal(err)
		}
	})
	got := probe(t, p, b.Workspace, "greet", "Ada")
	if got.err != nil || got.stdout != "Hello, Ada.\n" {
		t.Fatalf("after the path was replaced: %q %v", got.stdout, got.err)
	}
}

func TestARefusedDescriptorStartFallsBackToAVerifiedPathStart(t *testing.T) {
	checkout, st := candidate(t, nil)
	path := filepath.Join(checkout, "bin/greet")
	writeExec(t, path, greetScript, 0o755)
	b := prompt(t, st)
	p := &workspace.Prober{Store: st, Wall: wall(t)}
	workspace.SimulateRefusedDescriptorStart(p)
	got := probe(t, p, b.Workspace, "greet", "Ada")
	if got.err != nil || got.stdout != "Hello, Ada.\n" || got.pr.Launch != "path" || !strings.HasPrefix(got.stderr, "nwdes: bin/greet: launched by path\n") {
		t.Fatalf("path start: %q %q %+v %v", got.stdout, got.stderr, got.pr, got.err)
	}
	// The file changed between the walk and the second verification: no
	// path start is made.
	workspace.BeforeStart(p, func() {
		writeExec(t, path+".new", "#!/bin/sh\necho replaced\n", 0o755)
		os.Rename(path+".new", path)
	})
	got = probe(t, p, b.Workspace, "greet", "Ada")
	var we *workspace.WalkError
	if !errors.As(got.err, &we) || we.Cause != workspace.CauseChanged || strings.Contains(got.stdout, "replaced") {
		t.Fatalf("a replaced file after a refused descriptor start: %q %v", got.stdout, got.err)
	}
}

func TestTheCheckoutPathIsRewrittenInAPythonTraceback(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	_, st := candidate(t, map[string]string{
		".nwave/examine.json":      "",
		"pyproject.toml":           "[project]\nname = \"greet\"\n[project.scripts]\ngreet = \"greetpkg.cli:main\"\n[tool.hatch.build.targets.wheel]\npackages = [\"src/greetpkg\"]\n",
		"src/greetpkg/__init__.py": "\n",
		"src/greetpkg/cli.py":      "import sys\ndef main():\n    if sys.argv[1:] == ['boom']:\n        raise RuntimeError('boom')\n    print('Hello, %s.' % sys.argv[1])\n    return 0\n",
	})
	b := prompt(t, st)
	p := &workspace.Prober{Store: st, Wall: wall(t)}
	got := probe(t, p, b.Workspace, "greet", "Ada")
	if got.err != nil || got.stdout != "Hello, Ada.\n" || got.pr.Launch != "interpreter" {
		t.Fatalf("python console script: %q %q %v", got.stdout, got.stderr, got.err)
	}
	got = probe(t, p, b.Workspace, "greet", "boom")
	if got.err != nil || got.pr.Result.ExitCode != 1 || !strings.Contains(got.stderr, `File "<candidate>/src/greetpkg/cli.py"`) {
		t.Fatalf("traceback: exit %d %q %v", got.pr.Result.ExitCode, got.stderr, got.err)
	}
}
