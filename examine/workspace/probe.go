package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/refusal"
	"github.com/nwdes/nwdes/sandbox"
)

// Prober runs the commands a candidate declares, inside the wall.
type Prober struct {
	Store *gitstore.Store
	// Wall runs the command. Its Path and Lang are the invoking process's
	// PATH and LANG (C.UTF-8 when unset): the only variables the command
	// gets besides HOME and TMPDIR, which are the workspace's scratch.
	Wall *sandbox.Wall
	// Stdout and Stderr receive the command's streams, with every
	// occurrence of the candidate checkout's path replaced by <candidate>.
	Stdout, Stderr io.Writer
	// Python is the interpreter a pyproject.toml console script runs
	// through ("python3" on the wall's PATH when empty).
	Python string

	// refuseDescriptorStart stands in, in tests, for a system that
	// refuses the descriptor start for permission (as macOS refuses a
	// start through /dev/fd/N): Linux never does, so the path start after
	// it could not be tested otherwise.
	refuseDescriptorStart bool
	// beforeStart, in tests, runs between the walk and the start.
	beforeStart func()
}

// Probe is what a probe ran and how it ended.
type Probe struct {
	Workspace string   `json:"workspace"`
	Command   string   `json:"command"`
	Args      []string `json:"args"`
	// Mode is "declared" or "python"; Launch how the program was started:
	// "descriptor" (the file the walk verified, through its descriptor),
	// "path" (after the descriptor start was refused for permission, the
	// path verified again) or "interpreter" (Python).
	Mode   string         `json:"mode"`
	Launch string         `json:"launch"`
	Result sandbox.Result `json:"-"`
}

// Run runs args[0] with the arguments after it, as the workspace at dir
// admits: it checks the workspace (WorkspaceContaminated), that the
// command is declared and every argument stays inside the workspace
// (ProbeRefused), and that the declared file is there to run
// (InputUnreadable, by cause); then it runs it in the wall with the
// workspace's scratch as its directory, HOME and TMPDIR, scratch its only
// write set and public its read set.
func (p *Prober) Run(ctx context.Context, dir string, args []string) (*Probe, error) {
	w, proj, err := Open(p.Store, dir)
	if err != nil {
		return nil, err
	}
	adm, err := Commands(p.Store, proj)
	if err != nil {
		return nil, err
	}
	if adm.None != nil {
		return nil, adm.None
	}
	names := adm.Names()
	refuse := func(format string, a ...any) error {
		return refusal.New(refusal.ProbeRefused,
			fmt.Sprintf("probe one of the admitted commands (%s) with arguments relative to %s/scratch that stay inside the workspace", strings.Join(names, ", "), w.Path),
			"%s", fmt.Sprintf(format, a...))
	}
	if len(args) == 0 {
		return nil, refuse("no command given")
	}
	name := args[0]
	admitted := false
	for _, n := range names {
		admitted = admitted || n == name
	}
	if !admitted {
		return nil, refuse("%q is not a command the candidate declares", name)
	}
	scratch := filepath.Join(w.Path, ScratchDir)
	for _, a := range args[1:] {
		if err := argInside(w.Path, scratch, a); err != "" {
			return nil, refuse("argument %q %s", a, err)
		}
	}
	pr := &Probe{Workspace: w.Path, Command: name, Args: append([]string{}, args[1:]...), Mode: adm.Mode.String()}
	cmd := sandbox.Command{
		Dir: scratch, Write: []string{scratch}, Read: []string{filepath.Join(w.Path, PublicDir)},
		Home: scratch, Tmp: scratch,
	}
	out, errw := newReplacer(p.Stdout, w.Checkout, "<candidate>"), newReplacer(p.Stderr, w.Checkout, "<candidate>")
	cmd.Stdout, cmd.Stderr = out, errw
	defer out.Flush()
	defer errw.Flush()
	switch adm.Mode {
	case Python:
		err = p.runPython(ctx, pr, adm, w, cmd)
	default:
		err = p.runDeclared(ctx, pr, adm, w, cmd, errw)
	}
	if err != nil {
		return nil, err
	}
	return pr, nil
}

// argInside says why an argument (or the value of --option=value) does not
// stay inside the workspace, or "": it must be relative, and resolve, from
// scratch and through every symbolic link that exists, inside the
// workspace.
func argInside(ws, scratch, arg string) string {
	v := arg
	if strings.HasPrefix(arg, "-") {
		i := strings.IndexByte(arg, '=')
		if i < 0 {
			return "" // a flag, not a path
		}
		v = arg[i+1:]
	}
	if v == "" {
		return ""
	}
	if filepath.IsAbs(v) {
		return "is absolute: arguments are relative to the workspace's scratch"
	}
	path := filepath.Join(scratch, v)
	if !within(path, ws) {
		return "leaves the workspace"
	}
	// The longest part that exists is resolved, links and all; the rest
	// cannot hold a link yet.
	existing, rest := path, ""
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			return "cannot be resolved"
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = parent
	}
	real, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return fmt.Sprintf("cannot be resolved: %v", err)
	}
	if !within(filepath.Join(real, rest), ws) {
		return "leaves the workspace through a symbolic link"
	}
	return ""
}

// runDeclared runs a declared executable through the descriptor of the
// file the walk verified; only when the system refuses that start for
// permission is the path verified again and started by path.
func (p *Prober) runDeclared(ctx context.Context, pr *Probe, adm *Admission, w *examine.Workspace, cmd sandbox.Command, stderr io.Writer) error {
	var decl Command
	for _, c := range adm.Declaration.Commands {
		if c.Name == pr.Command {
			decl = c
		}
	}
	build := adm.Declaration.Build
	opened, err := OpenDeclared(w.Checkout, decl.Path, build)
	if err != nil {
		return err
	}
	defer opened.Close()
	cmd.Args = append([]string{pr.Command}, pr.Args...)
	cmd.Exec = opened.File
	if p.beforeStart != nil {
		p.beforeStart()
	}
	var res sandbox.Result
	if p.refuseDescriptorStart {
		res = sandbox.Result{End: sandbox.EndStartFailed, Errno: syscall.EACCES, Err: "descriptor start refused (simulated)"}
	} else if res, err = p.Wall.Run(ctx, cmd); err != nil {
		return err
	}
	pr.Launch = "descriptor"
	if res.End == sandbox.EndStartFailed && (res.Errno == syscall.EACCES || res.Errno == syscall.EPERM) {
		again, err := Reverify(w.Checkout, decl.Path, build, opened)
		if err != nil {
			return err
		}
		again.Close()
		fmt.Fprintf(stderr, "nwdes: %s: launched by path\n", decl.Path)
		cmd.Exec = nil
		cmd.Args[0] = filepath.Join(w.Checkout, filepath.FromSlash(decl.Path))
		cmd.Read = append(cmd.Read, filepath.Dir(cmd.Args[0]))
		if res, err = p.Wall.Run(ctx, cmd); err != nil {
			return err
		}
		pr.Launch = "path"
	}
	if res.End == sandbox.EndStartFailed {
		return launchRefused(decl.Path, res)
	}
	pr.Result = res
	return nil
}

// launchRefused names a start the system refused by its cause.
func launchRefused(path string, res sandbox.Result) error {
	cause, remedy := "nothing_to_run", "build the declared file so that it is a program this system can start"
	switch {
	case errors.Is(res.Errno, syscall.EACCES), errors.Is(res.Errno, syscall.EPERM):
		cause, remedy = "noexec", "build the declared file on a file system not mounted noexec"
	case errors.Is(res.Errno, syscall.ENOEXEC):
		cause, remedy = "not_a_program", "build the declared file as an executable or a #! script"
	}
	return refusal.NewUnreadable(refusal.InputUnreadable, remedy,
		"%s cannot be started (cause %s): %s", path, cause, res.Err)
}

// pythonBoot runs a console script's entry point as pip's launcher would:
// argv[1] is the entry point, argv[2] the number n of import roots that
// follow it, then the command's name and arguments.
const pythonBoot = `import sys, importlib
entry, n = sys.argv[1], int(sys.argv[2])
roots, sys.argv = sys.argv[3:3 + n], sys.argv[3 + n:]
sys.path[:0] = roots
mod, _, attr = entry.partition(":")
obj = importlib.import_module(mod.strip())
for part in attr.strip().split("."):
    if part:
        obj = getattr(obj, part)
sys.exit(obj())
`

// runPython runs a pyproject.toml console script through the current
// Python with -I -B (isolated: no user site, no PYTHON* variables, no
// script directory on the path; no bytecode written), importing from the
// candidate's import roots, which the wall lets it read.
func (p *Prober) runPython(ctx context.Context, pr *Probe, adm *Admission, w *examine.Workspace, cmd sandbox.Command) error {
	python := p.Python
	if python == "" {
		python = "python3"
	}
	var roots []string
	for _, r := range adm.Roots {
		dir := filepath.Join(w.Checkout, filepath.FromSlash(r))
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			roots = append(roots, dir)
			cmd.Read = append(cmd.Read, dir)
		}
	}
	cmd.Args = append([]string{python, "-I", "-B", "-c", pythonBoot, adm.Scripts[pr.Command], strconv.Itoa(len(roots))}, roots...)
	cmd.Args = append(append(cmd.Args, pr.Command), pr.Args...)
	res, err := p.Wall.Run(ctx, cmd)
	if err != nil {
		return err
	}
	if res.End == sandbox.EndStartFailed {
		return refusal.NewUnreadable(refusal.InputUnreadable, "install Python 3 on PATH to probe a pyproject.toml console script",
			"%s cannot be started: %s", python, res.Err)
	}
	pr.Launch, pr.Result = "interpreter", res
	return nil
}
