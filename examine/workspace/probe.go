package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/refusal"
	"github.com/nwdes/nwdes/sandbox"
)

// Prober runs the commands a candidate declares, inside the wall.
type Prober struct {
	Store examine.Store
	// Wall runs the command. Its Path and Lang are the invoking process's
	// PATH and LANG (C.UTF-8 when unset): the only variables the command
	// gets besides HOME and TMPDIR, which are the workspace's scratch.
	Wall Wall
	// Stdout and Stderr receive the command's streams, with every
	// occurrence of the candidate checkout's path replaced by <candidate>.
	Stdout, Stderr io.Writer
	// Python is the interpreter a pyproject.toml console script runs
	// through ("python3" on the wall's PATH when empty).
	Python string
	// Network gives the command the host's network, which it otherwise
	// does not have (a network namespace with no interface up, sockets
	// other than AF_UNIX refused): only when the examiner asks for it,
	// and the Probe says so.
	Network bool

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
	Mode   string `json:"mode"`
	Launch string `json:"launch"`
	// Network is "denied", or "open" when the examiner asked for the
	// host's network (Prober.Network): an observation made with it must
	// say so.
	Network NetworkAccess  `json:"network"`
	Result  sandbox.Result `json:"-"`
}

// NetworkAccess is whether a probe had the host's network.
type NetworkAccess string

// How a probe's network was (Probe.Network).
const (
	NetworkDenied NetworkAccess = "denied"
	NetworkOpen   NetworkAccess = "open"
)

// Run runs args[0] with the arguments after it, as the workspace at dir
// admits: it checks the workspace (WorkspaceContaminated), that the
// command is declared and every argument stays inside the workspace
// (ProbeRefused), and that the declared file is there to run
// (InputUnreadable, by cause); then it runs it in the wall with the
// workspace's scratch as its directory, HOME and TMPDIR, scratch its only
// write set and public its read set, and no network unless p.Network.
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
	pr := &Probe{Workspace: w.Path, Command: name, Args: append([]string{}, args[1:]...), Mode: adm.Mode.String(), Network: NetworkDenied}
	if p.Network {
		pr.Network = NetworkOpen
	}
	cmd := sandbox.Command{
		Dir: scratch, Write: []string{scratch}, Read: []string{filepath.Join(w.Path, PublicDir)},
		Home: scratch, Tmp: scratch, NoNetwork: !p.Network,
		// No root of the wall covers the checkout (its bin on PATH would
		// give it whole) or the workspace.
		Exclude: []string{w.Checkout, w.Path},
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
	// What the wall reports quotes the program's output and paths: the
	// checkout is named there as in the streams, <candidate>.
	hide := func(s string) string {
		var b strings.Builder
		r := newReplacer(&b, w.Checkout, "<candidate>")
		r.Write([]byte(s))
		r.Flush()
		return b.String()
	}
	pr.Result.Err = hide(pr.Result.Err)
	if r := pr.Result.Refused; r != nil {
		pr.Result.Refused = &sandbox.Refusal{Path: hide(r.Path), Line: hide(r.Line), Step: r.Step}
	}
	return pr, nil
}

// argInside says why an argument does not stay inside the workspace, or
// "". Every part of it a program could take for a path is checked: the
// argument itself unless it is an option, the value after its first "="
// (--option=value, and key=value operands such as dd's if=), and what
// follows a one-letter option (-fVALUE). Each must be relative and, walked
// from scratch as the kernel walks it (a symbolic link that exists is
// read before the ".." after it applies), stay inside the workspace.
func argInside(ws, scratch, arg string) string {
	var parts []string
	if !strings.HasPrefix(arg, "-") {
		parts = append(parts, arg)
	} else if !strings.HasPrefix(arg, "--") && len(arg) > 2 {
		parts = append(parts, arg[2:])
	}
	if i := strings.IndexByte(arg, '='); i >= 0 {
		parts = append(parts, arg[i+1:])
	}
	for _, v := range parts {
		if v == "" {
			continue
		}
		if filepath.IsAbs(v) {
			return "is absolute: arguments are relative to the workspace's scratch"
		}
		if why := resolveInside(ws, scratch, v); why != "" {
			return why
		}
	}
	return ""
}

// resolveInside walks rel from dir name by name as the kernel would,
// reading each symbolic link that exists, and says why the walk leaves ws
// at any step, or "". A name that does not exist ends what can be known:
// the rest is applied as text.
func resolveInside(ws, dir, rel string) string {
	cur := dir
	pending := strings.Split(rel, "/")
	links := 0
	exists := true
	for len(pending) > 0 {
		name := pending[0]
		pending = pending[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
		default:
			next := filepath.Join(cur, name)
			if exists {
				fi, err := os.Lstat(next)
				switch {
				case err != nil:
					exists = false
				case fi.Mode()&fs.ModeSymlink != 0:
					target, err := os.Readlink(next)
					if err != nil {
						return fmt.Sprintf("cannot be resolved: %v", err)
					}
					if links++; links > 40 {
						return "passes through too many symbolic links"
					}
					if filepath.IsAbs(target) {
						cur = "/"
					}
					pending = append(strings.Split(target, "/"), pending...)
					continue
				}
			}
			cur = next
		}
		if !within(cur, ws) {
			if links > 0 {
				return "leaves the workspace through a symbolic link"
			}
			return "leaves the workspace"
		}
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

// pythonBoot runs a console script's entry point as pip's launcher would,
// importing its top-level package from the one directory the wall lets it
// read (the checkout around it stays closed, so the path finder cannot
// list it): argv[1] is the entry point, argv[2] the package's directory,
// then the command's name and arguments.
const pythonBoot = `import sys, os, types, importlib, importlib.util
entry, pkgdir = sys.argv[1], sys.argv[2]
sys.argv = sys.argv[3:]
mod, _, attr = entry.partition(":")
mod = mod.strip()
top = mod.split(".")[0]
init = os.path.join(pkgdir, "__init__.py")
if os.path.exists(init):
    spec = importlib.util.spec_from_file_location(top, init, submodule_search_locations=[pkgdir])
    pkg = importlib.util.module_from_spec(spec)
    sys.modules[top] = pkg
    spec.loader.exec_module(pkg)
else:
    pkg = types.ModuleType(top)
    pkg.__path__ = [pkgdir]
    sys.modules[top] = pkg
obj = importlib.import_module(mod)
for part in attr.strip().split("."):
    if part:
        obj = getattr(obj, part)
sys.exit(obj())
`

// entryPoint is what a console script may name: module[:attr].
var entryPoint = regexp.MustCompile(`^\s*[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*\s*(:\s*[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*\s*)?$`)

// runPython runs a pyproject.toml console script through the current
// Python with -I -B (isolated: no user site, no PYTHON* variables, no
// script directory on the path; no bytecode written). The wall lets it
// read the entry point's top-level package directory, found under the
// import roots the committed wheel declares, and nothing else of the
// checkout. The interpreter is python3 on the wall's PATH, never one
// inside the workspace or the checkout.
func (p *Prober) runPython(ctx context.Context, pr *Probe, adm *Admission, w *examine.Workspace, cmd sandbox.Command) error {
	entry := adm.Scripts[pr.Command]
	if !entryPoint.MatchString(entry) {
		return refusal.NewUnreadable(refusal.InputUnreadable, "name the entry point as module.path:function in [project.scripts]",
			"%s: the entry point of %q, %q, is not module[:attribute]", PyprojectPath, pr.Command, entry)
	}
	top := strings.TrimSpace(strings.SplitN(strings.SplitN(entry, ":", 2)[0], ".", 2)[0])
	pkgdir := ""
	for _, r := range adm.Roots {
		dir := filepath.Join(w.Checkout, filepath.FromSlash(r), top)
		if fi, err := os.Lstat(dir); err == nil && fi.IsDir() {
			pkgdir = dir
			break
		}
	}
	if pkgdir == "" {
		return refusal.NewUnreadable(refusal.InputUnreadable,
			"make the console script's module part of a package directory under the import roots the wheel declares",
			"%s: %q of %q is not a package directory under the import roots (%s): nwdes lets a probed Python command read its package, nothing else of the checkout",
			PyprojectPath, top, pr.Command, strings.Join(adm.Roots, ", "))
	}
	python, err := p.interpreter(w)
	if err != nil {
		return err
	}
	cmd.Read = append(cmd.Read, pkgdir)
	cmd.Args = append([]string{python, "-I", "-B", "-c", pythonBoot, entry, pkgdir, pr.Command}, pr.Args...)
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

// interpreter finds the Python a console script runs through: Python, or
// python3 on the wall's PATH, skipping every directory inside the
// workspace or the checkout; the file it resolves to must lie outside
// both too.
func (p *Prober) interpreter(w *examine.Workspace) (string, error) {
	inside := func(path string) bool {
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			real = path
		}
		return within(real, w.Path) || within(real, w.Checkout) || within(path, w.Path) || within(path, w.Checkout)
	}
	refuse := func(what string) error {
		return refusal.NewUnreadable(refusal.InputUnreadable,
			"install Python 3 outside the workspace and the checkout, on PATH",
			"no Python to run the console script: %s", what)
	}
	if p.Python != "" {
		if !filepath.IsAbs(p.Python) || inside(p.Python) {
			return "", refuse(fmt.Sprintf("%s is not an absolute path outside the workspace and the checkout", p.Python))
		}
		return p.Python, nil
	}
	path := p.Wall.SearchPath()
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) || inside(dir) {
			continue
		}
		c := filepath.Join(dir, "python3")
		if fi, err := os.Stat(c); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 && !inside(c) {
			return c, nil
		}
	}
	return "", refuse("python3 is not on PATH " + path)
}
