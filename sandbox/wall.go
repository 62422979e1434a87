package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/nwdes/nwdes/refusal"
)

// Wall runs programs nwdes did not write: a contract's CHECK, a probe, a
// swarm worker. It is the supervisor's half; the other half is HelperMain,
// which this binary runs again inside the new process.
//
//   - Filesystem (Landlock): the program writes only beneath its write set
//     (its job directory and Command.Write) and reads only its read set,
//     the wall's Roots (the OS and toolchains) and a few device files.
//   - Network (Command.NoNetwork): an empty network namespace where the
//     kernel permits one, and always a seccomp filter allowing socket(2)
//     for AF_UNIX only; Landlock's TCP rules on top.
//   - Processes: the helper is the init of a new pid namespace with a
//     private /proc, or, where namespaces are refused, a child subreaper;
//     the program has no new privileges and an empty capability bounding
//     set, and runs with resource limits.
//   - Environment: PATH, LANG, HOME and TMPDIR (inside the job), and only
//     the variables Command.Env names.
//   - Time: the supervisor holds the deadline: TERM and CONT to every
//     process of the job, Grace, then KILL; every process is reaped and
//     survivors are counted.
//
// When the kernel cannot enforce the filesystem wall, or the network wall
// when it was asked for, a Strict wall refuses to run (SandboxUnavailable)
// and a best-effort one runs and lists what was missing in
// Result.Enforced.Missing. Nothing is ever claimed that was not enforced.
type Wall struct {
	// Path is the PATH the program sees and the one programs are looked up
	// on; DefaultPath when empty.
	Path string
	// Lang is LANG; DefaultLang when empty.
	Lang string
	// Getenv gives the values of the variables Command.Env names. The
	// library never reads the process environment itself.
	Getenv func(string) string
	// Home is the caller's home directory: no default root ever covers it.
	Home string
	// Roots are the directories the program may read and execute besides
	// its read and write sets; nil means DefaultRoots(Path, Home).
	Roots []string
	// Caches are directories every job may write besides its own (named
	// caches such as a shared GOCACHE).
	Caches []string
	// TempRoot is where job directories are made; DefaultTempRoot when empty.
	TempRoot string
	// Limits are the job's resource limits; zero fields take the defaults.
	Limits Limits
	// Grace is how long the job has between TERM and KILL at its deadline,
	// and how long output is still read after everything was reaped;
	// DefaultGrace when zero.
	Grace time.Duration
	// TailBytes bounds the tail kept of each stream; DefaultTailBytes when 0.
	TailBytes int
	// Strict refuses to run what the kernel cannot wall in.
	Strict bool
	// NoNamespaces starts the helper as a plain child (a subreaper, with
	// the host's /proc and network) even where the kernel allows
	// namespaces: for kernels whose namespaces misbehave, and for tests of
	// that path.
	NoNamespaces bool
	// Helper is how the helper is started: the binary and the argv[0] it
	// is given (the helper verb follows). Zero means /proc/self/exe named
	// git-nwdes, which is right for nwdes and for tests registered with
	// testscript.
	Helper Helper
	// Now is the clock for Started and Duration.
	Now func() time.Time

	nsMu     sync.Mutex
	nsFailed bool // the kernel refused namespaces once: do not ask again
}

// helperEnv is the helper's whole environment (nothing of the caller's).
// GOMAXPROCS=1 and GOGC=off make its Go runtime start faster and stay
// small: it only forks, waits and signals, and allocates next to nothing.
// GORACE only speaks to race-built binaries (tests), which would otherwise
// sleep a second at every exit.
var helperEnv = []string{"GORACE=atexit_sleep_ms=0", "GOMAXPROCS=1", "GOGC=off"}

// Helper names the binary that acts as the wall's helper.
type Helper struct {
	Path  string
	Argv0 string
}

var _ Runner = (*Wall)(nil)

// ErrUnavailable is what a SandboxUnavailable refusal unwraps to.
var ErrUnavailable = errors.New("sandbox unavailable")

func (w *Wall) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

// systemRoots are the OS directories every program needs to read and run.
var systemRoots = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"}

// Device files a program may read and write, and read only.
var (
	devRW = []string{"/dev/null", "/dev/zero", "/dev/full"}
	devRO = []string{"/dev/random", "/dev/urandom"}
)

// DefaultRoots returns the OS roots and the toolchain roots found on path:
// each PATH directory outside the OS roots, or, outside the home
// directory, the directory above it when it is a bin, sbin or shims
// directory (a toolchain installed under /opt or /usr/local keeps its
// libraries beside bin). Inside the home only the PATH directory itself
// is a root: ~/.cargo/bin, never ~/.cargo, which holds credentials. No
// root is "/", the home or above it.
func DefaultRoots(path, home string) []string {
	roots := append([]string{}, systemRoots...)
	// Whatever HOME says, /root and /home are home areas too: with HOME
	// unset, ~/bin on PATH must still not give all of ~.
	homes := []string{"/root", "/home"}
	if h := filepath.Clean(home); filepath.IsAbs(h) && h != "/" {
		homes = append(homes, h)
	}
	inHome := func(d string) bool { return within2(d, homes) }
	aboveHome := func(d string) bool {
		for _, h := range homes {
			if within(h, d) {
				return true
			}
		}
		return false
	}
	for _, d := range filepath.SplitList(path) {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		d = filepath.Clean(d)
		if r, err := filepath.EvalSymlinks(d); err == nil {
			d = r
		}
		cand := d
		switch filepath.Base(d) {
		case "bin", "sbin", "shims":
			if !inHome(d) {
				cand = filepath.Dir(d)
			}
		}
		if cand == "/" || aboveHome(cand) {
			cand = d
		}
		if cand == "/" || aboveHome(cand) {
			continue
		}
		roots = append(roots, cand)
	}
	return minimalRoots(roots)
}

// minimalRoots drops duplicates and directories beneath another root.
func minimalRoots(roots []string) []string {
	var out []string
	for i, r := range roots {
		covered := false
		for j, o := range roots {
			if i != j && within(r, o) && (r != o || j < i) {
				covered = true
				break
			}
		}
		if !covered {
			out = append(out, r)
		}
	}
	return out
}

// Job is a directory the wall owns and makes writable: Work (the program's
// tree, e.g. an exported candidate), Home and Tmp (its HOME and TMPDIR).
// Close removes it all.
type Job struct {
	Root, Work, Home, Tmp string
	wall                  *Wall
}

// NewJob makes a fresh job directory under the wall's TempRoot, named for
// this process, after sweeping the job directories of runs whose process
// is gone (a supervisor killed with SIGKILL cannot remove its own).
func (w *Wall) NewJob() (*Job, error) {
	tmp := orDefault(w.TempRoot, DefaultTempRoot)
	if fi, err := os.Stat(tmp); err != nil || !fi.IsDir() || !filepath.IsAbs(tmp) {
		return nil, refusal.New(refusal.TempDirUnusable, "set TMPDIR to an existing, writable, absolute directory (or unset it for /tmp)",
			"the directory for job directories, %q, is not an existing absolute directory", tmp)
	}
	sweepJobs(tmp)
	root, err := os.MkdirTemp(tmp, jobPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return nil, refusal.New(refusal.TempDirUnusable, "set TMPDIR to an existing, writable, absolute directory (or unset it for /tmp)",
			"cannot make a job directory in %s: %v", tmp, err)
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	j := &Job{Root: root, Work: filepath.Join(root, "work"), Home: filepath.Join(root, "home"), Tmp: filepath.Join(root, "tmp"), wall: w}
	for _, d := range []string{j.Work, j.Home, j.Tmp} {
		if err := os.Mkdir(d, 0o700); err != nil {
			RemoveAll(root)
			return nil, fmt.Errorf("make job directory: %w", err)
		}
	}
	return j, nil
}

const jobPrefix = "nwdes-job-"

// sweepJobs removes job directories whose supervisor is gone: named
// nwdes-job-<pid>-…, with no process <pid> alive (a pid reused since keeps
// the directory; it is swept once that process is gone too), and the
// nwdes-tree-* and nwdes-run-* directories of versions before the wall,
// once they are an hour old.
func sweepJobs(tmp string) {
	ents, err := os.ReadDir(tmp)
	if err != nil {
		return
	}
	for _, e := range ents {
		name := e.Name()
		if !e.IsDir() {
			continue
		}
		if rest, ok := strings.CutPrefix(name, jobPrefix); ok {
			pid, err := strconv.Atoi(strings.SplitN(rest, "-", 2)[0])
			if err != nil || pid <= 0 || unix.Kill(pid, 0) != unix.ESRCH {
				continue
			}
			RemoveAll(filepath.Join(tmp, name))
			continue
		}
		if strings.HasPrefix(name, "nwdes-tree-") || strings.HasPrefix(name, "nwdes-run-") {
			if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > time.Hour {
				RemoveAll(filepath.Join(tmp, name))
			}
		}
	}
}

// Close removes the job directory and everything the program left in it.
func (j *Job) Close() error { return RemoveAll(j.Root) }

// Run implements Runner: it runs cmd in a job directory of its own (which
// is removed afterwards); cmd.Dir must be given. It is Start then Wait.
func (w *Wall) Run(ctx context.Context, cmd Command) (Result, error) {
	p, err := w.Start(ctx, cmd)
	if err != nil {
		return Result{}, err
	}
	return p.Wait()
}

// Start starts cmd, as Run would, in a job directory of its own, which is
// removed once everything is reaped, before Wait returns; cmd.Dir must be
// given. See Job.Start.
func (w *Wall) Start(ctx context.Context, cmd Command) (*Process, error) {
	j, err := w.NewJob()
	if err != nil {
		return nil, err
	}
	p, err := j.start(ctx, cmd, func() { j.Close() })
	if err != nil {
		j.Close()
		return nil, err
	}
	return p, nil
}

// Run runs cmd inside the wall with the job directory in its write set.
// An empty cmd.Dir is the job's Work directory. It is Start then Wait.
func (j *Job) Run(ctx context.Context, c Command) (Result, error) {
	p, err := j.Start(ctx, c)
	if err != nil {
		return Result{}, err
	}
	return p.Wait()
}

// Start starts cmd inside the wall, as Run does, and returns once the
// helper has reported the program started or failed; the Process then
// runs under the wall's hold (deadline, ctx, reaping) until Wait's Result
// is ready. ctx bounds the whole job, not only its start: when it ends,
// the job is ended as at its deadline and Wait returns ctx's error.
//
// Start returns an error, and starts nothing, for what Run refuses before
// any process exists: no program, a relative directory, a read or write
// set or variable name it refuses, a strict wall this kernel cannot
// enforce, ctx already ended, or a helper that could not be started. A
// program that never ran is a Process, not an error: its Wait returns
// EndStartFailed (when the start is refused before the program is
// executed, as almost always, that Process is already done when Start
// returns). What the helper reports after it started (the wall could not
// be built, or not strictly) comes from Wait, as from Run.
func (j *Job) Start(ctx context.Context, c Command) (*Process, error) {
	return j.start(ctx, c, nil)
}

func (j *Job) start(ctx context.Context, c Command, cleanup func()) (*Process, error) {
	w := j.wall
	if len(c.Args) == 0 {
		return nil, errors.New("run: no program given")
	}
	if c.Dir == "" {
		c.Dir = j.Work
	}
	if !filepath.IsAbs(c.Dir) {
		return nil, fmt.Errorf("run %s: working directory %q is not absolute", c.Args[0], c.Dir)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("run %s: %w", c.Args[0], err)
	}
	spec, err := w.spec(j, c)
	if err != nil {
		return nil, err
	}
	if w.Strict {
		if err := Available(c.NoNetwork); err != nil {
			return nil, err
		}
	}
	deadline := orDefault(c.Deadline, DefaultDeadline)
	res := Result{ExitCode: -1, Deadline: deadline}
	det := newDetector(c.Dir, spec.Write, append(append(append([]string{}, spec.Write...), spec.Read...), devRW...))
	var sinkM sync.Mutex
	tail := orDefault(w.TailBytes, DefaultTailBytes)
	outW, errW := det.stream(), det.stream()
	stdout, stderr := newCapture(tail, c.Stdout, &sinkM, outW), newCapture(tail, c.Stderr, &sinkM, errW)
	res.Started = w.now()
	p := newProcess(c.Args[0], res.Started, cleanup)
	failed := func(end End, why string, errno syscall.Errno) (*Process, error) {
		res.End, res.Err, res.Errno = end, why, errno
		res.Stdout, res.Stderr = stdout.stream(), stderr.stream()
		p.finish(res, nil)
		return p, nil
	}
	var prog string
	if c.Exec != nil {
		fi, err := c.Exec.Stat()
		if err != nil {
			return nil, fmt.Errorf("run %s: the program's descriptor: %w", c.Args[0], err)
		}
		if !fi.Mode().IsRegular() {
			return failed(EndStartFailed, fmt.Sprintf("%s: the program's descriptor is not open on a regular file (%s)", c.Args[0], fi.Mode().Type()), syscall.EACCES)
		}
		spec.ExecFD, spec.execFile = true, c.Exec
	} else if prog, err = lookPath(c.Args[0], spec.pathEnv); err != nil {
		return failed(EndStartFailed, err.Error(), 0)
	}
	if !within2(c.Dir, append(append([]string{}, spec.Write...), spec.Read...)) {
		return failed(EndStartFailed, fmt.Sprintf("working directory %s is outside the wall (name it with --read or --write)", c.Dir), 0)
	}
	spec.Program, spec.Args = prog, c.Args
	if err := w.supervise(ctx, p, spec.helperSpec, res, stdout, stderr, []*lineWatch{outW, errW}, det); err != nil {
		return nil, err
	}
	return p, nil
}

// builtSpec is a helper spec plus what only the supervisor needs.
type builtSpec struct {
	*helperSpec
	pathEnv string
}

func (w *Wall) spec(j *Job, c Command) (builtSpec, error) {
	path := orDefault(w.Path, DefaultPath)
	dirs := func(flag string, in []string) ([]string, error) {
		var out []string
		for _, d := range in {
			if !filepath.IsAbs(d) {
				return nil, refusal.New(refusal.PathUnusable, "give absolute paths of existing directories",
					"%s %q is not an absolute path", flag, d)
			}
			fi, err := os.Stat(d)
			if err != nil || !fi.IsDir() {
				return nil, refusal.New(refusal.PathUnusable, "give absolute paths of existing directories",
					"%s %q is not an existing directory", flag, d)
			}
			if r, err := filepath.EvalSymlinks(d); err == nil {
				d = r
			}
			out = append(out, filepath.Clean(d))
		}
		return out, nil
	}
	write, err := dirs("write", append(append([]string{}, w.Caches...), c.Write...))
	if err != nil {
		return builtSpec{}, err
	}
	write = minimalRoots(append([]string{j.Root}, write...))
	read, err := dirs("read", c.Read)
	if err != nil {
		return builtSpec{}, err
	}
	roots := w.Roots
	if roots == nil {
		roots = DefaultRoots(path, w.Home)
	}
	roots = excludeRoots(roots, c.Exclude)
	read = minimalRoots(append(append(read, roots...), "/proc"))
	for _, d := range []string{c.Home, c.Tmp} {
		if d == "" {
			continue
		}
		if r, err := filepath.EvalSymlinks(d); err != nil || !filepath.IsAbs(d) || !within2(r, write) {
			return builtSpec{}, refusal.New(refusal.PathUnusable, "give a HOME and TMPDIR inside the write set",
				"%q is not an existing directory inside the write set", d)
		}
	}
	env := []string{"PATH=" + path, "LANG=" + orDefault(w.Lang, DefaultLang), "HOME=" + orDefault(c.Home, j.Home), "TMPDIR=" + orDefault(c.Tmp, j.Tmp),
		// A git the program runs finds no repository above its directory.
		"GIT_CEILING_DIRECTORIES=" + filepath.Dir(c.Dir)}
	for _, name := range c.Env {
		if name == "" || strings.ContainsAny(name, "=\x00") {
			return builtSpec{}, refusal.New(refusal.EnvNameInvalid, "name variables as NAME, without a value",
				"%q is not a variable name", name)
		}
		switch name {
		case "PATH", "LANG", "HOME", "TMPDIR", "GIT_CEILING_DIRECTORIES":
			continue // the wall sets these
		}
		if w.Getenv == nil {
			continue
		}
		if v := w.Getenv(name); v != "" {
			env = append(env, name+"="+v)
		}
	}
	for _, kv := range c.Set {
		name, _, ok := strings.Cut(kv, "=")
		switch {
		case !ok || name == "" || strings.ContainsRune(kv, 0):
			return builtSpec{}, refusal.New(refusal.EnvNameInvalid, "set variables as NAME=value",
				"%q is not NAME=value", kv)
		case name == "PATH" || name == "LANG" || name == "HOME" || name == "TMPDIR" || name == "GIT_CEILING_DIRECTORIES":
			return builtSpec{}, refusal.New(refusal.EnvNameInvalid, "give HOME and TMPDIR with Command.Home and Tmp; the wall sets PATH, LANG and GIT_CEILING_DIRECTORIES",
				"%s is the wall's to set", name)
		}
		env = append(env, kv)
	}
	return builtSpec{helperSpec: &helperSpec{
		Dir: c.Dir, Env: env, Write: write, Read: read, DevRW: devRW, DevRO: devRO,
		NoNetwork: c.NoNetwork, Limits: w.Limits.withDefaults(), Strict: w.Strict,
	}, pathEnv: path}, nil
}

// Available reports, without running anything, whether this kernel can
// enforce the filesystem wall, and the network wall when noNetwork: nil,
// or a SandboxUnavailable refusal naming what is missing.
func Available(noNetwork bool) error {
	abi, err := ll.LandlockGetABIVersion()
	if err != nil || abi < minLandlockABI {
		return unavailable(fmt.Sprintf("filesystem: Landlock ABI %d or newer is needed; this kernel has %s",
			minLandlockABI, abiWords(abi, err)))
	}
	if noNetwork && nativeAudit == 0 {
		return unavailable("network: no seccomp socket filter for " + runtime.GOARCH)
	}
	if noNetwork {
		if _, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); err != nil {
			return unavailable("network: seccomp is not available (" + err.Error() + ")")
		}
	}
	return nil
}

func abiWords(abi int, err error) string {
	if err != nil || abi <= 0 {
		return "no Landlock (not built in, or not in the lsm= boot list)"
	}
	return "ABI " + strconv.Itoa(abi)
}

func unavailable(what string) error {
	return refusal.New(refusal.SandboxUnavailable,
		"run where the kernel has Landlock ABI 3+ (Linux 6.2+), seccomp and mount and pid namespaces, or accept a partly walled run (gate run --best-effort, recorded in the evidence; sandbox run without --strict)",
		"the kernel cannot enforce the wall: %s", what).Wrap(ErrUnavailable)
}

// cloneFlags are the namespaces the helper is started in.
func (w *Wall) cloneFlags(noNetwork bool) (uintptr, bool) {
	w.nsMu.Lock()
	defer w.nsMu.Unlock()
	if w.nsFailed || w.NoNamespaces {
		return 0, false
	}
	f := uintptr(unix.CLONE_NEWPID | unix.CLONE_NEWNS | unix.CLONE_NEWIPC)
	if noNetwork {
		f |= unix.CLONE_NEWNET
	}
	return f, true
}

func (w *Wall) helper() Helper {
	h := w.Helper
	if h.Path == "" {
		h.Path = "/proc/self/exe"
	}
	if h.Argv0 == "" {
		h.Argv0 = "git-nwdes"
	}
	return h
}

// supervise starts the helper on a goroutine of its own, which holds the
// deadline, ctx and p's Stop, and reaps, and returns once the helper has
// reported the program started or failed (and, when it failed before the
// program ran, once everything is reaped), or an error when no helper
// could be started.
func (w *Wall) supervise(ctx context.Context, p *Process, spec *helperSpec, res Result,
	stdout, stderr *capture, watches []*lineWatch, det *detector) error {
	started := make(chan error, 1)
	go w.hold(ctx, p, spec, res, stdout, stderr, watches, det, started)
	if err := <-started; err != nil {
		return err
	}
	select {
	case <-p.reported:
		if p.startFailed {
			<-p.done
		}
	case <-p.done:
	}
	return nil
}

// hold starts the helper, says on started whether it could, holds the
// deadline, ctx and p's Stop, reaps, and finishes p.
func (w *Wall) hold(ctx context.Context, p *Process, spec *helperSpec, res Result,
	stdout, stderr *capture, watches []*lineWatch, det *detector, started chan<- error) {
	// The helper's parent-death signal fires when the thread that started
	// it ends: keep this goroutine on its thread until the helper is reaped.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	outR, outW, err := os.Pipe()
	if err != nil {
		started <- fmt.Errorf("run %s: %w", spec.Args[0], err)
		return
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		started <- fmt.Errorf("run %s: %w", spec.Args[0], err)
		return
	}
	// The pids cgroup is joined before the helper reads its spec, so the
	// program is in it from its first instruction.
	cg, _ := newPidsCgroup(spec.Limits.Processes)
	cmd, specW, statusR, err := w.startHelper(spec, outW, errW)
	outW.Close()
	errW.Close()
	if err == nil && cg != nil {
		if cg.add(cmd.Process.Pid) != nil {
			cg.remove()
			cg = nil
		}
	}
	if err != nil {
		if cg != nil {
			cg.remove()
		}
		outR.Close()
		errR.Close()
		started <- fmt.Errorf("run %s: start the wall's helper: %w", spec.Args[0], err)
		return
	}
	p.pid = cmd.Process.Pid
	var nsIno uint64
	if spec.PIDNS && cg == nil {
		nsIno = namespaceInode(cmd.Process.Pid)
	}
	var readers sync.WaitGroup
	readers.Add(2)
	go func() { defer readers.Done(); io.Copy(stdout, outR) }()
	go func() { defer readers.Done(); io.Copy(stderr, errR) }()

	statuses := make(chan []helperStatus, 1)
	go func() {
		var all []helperStatus
		sc := bufio.NewScanner(statusR)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			var s helperStatus
			if json.Unmarshal(sc.Bytes(), &s) == nil {
				all = append(all, s)
				if s.Stage == "ready" || s.Stage == "failed" {
					p.report(s.Stage == "failed")
				}
			}
		}
		statuses <- all
	}()
	// The spec pipe stays open after the spec: it carries Signal's
	// requests to the helper until the helper has ended.
	p.ctl, p.specSent = specW, make(chan struct{})
	go func() {
		defer close(p.specSent)
		_ = json.NewEncoder(specW).Encode(spec)
	}()
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	started <- nil

	grace := orDefault(w.Grace, DefaultGrace)
	timer := time.NewTimer(res.Deadline)
	defer timer.Stop()
	var deadlineHit, canceled, stopped bool
	select {
	case <-exited:
	case <-timer.C:
		deadlineHit = true
	case <-ctx.Done():
		canceled = true
	case <-p.stop:
		stopped = true
	}
	if deadlineHit || canceled || stopped {
		// TERM (the helper forwards it, with a CONT, to every process of the
		// job), the grace, then the end: KILL for a helper that is init
		// (the kernel kills its namespace with it), USR1 for a subreaper
		// (it kills and reaps the job), and KILL if even that hangs.
		_ = cmd.Process.Signal(unix.SIGTERM)
		if !waitFor(exited, grace) {
			if spec.PIDNS {
				_ = cmd.Process.Kill()
			} else {
				// The helper's own bounded effort, then the grace: a
				// helper killed while it reaps would leave what it had
				// not reaped yet to the host.
				_ = cmd.Process.Signal(unix.SIGUSR1)
				if !waitFor(exited, finishBound+grace) {
					_ = cmd.Process.Kill()
				}
			}
			<-exited
		}
	}
	p.closeControl()
	res.Duration = w.now().Sub(res.Started)
	cgroupSurvivors := 0
	if cg != nil {
		// Whatever is still in the cgroup outlived the helper: count it,
		// then kill it.
		cgroupSurvivors = len(cg.pids())
		cg.end(grace)
	}
	drained := make(chan struct{})
	go func() { readers.Wait(); close(drained) }()
	if !waitFor(drained, grace) {
		res.OutputCut = true
		outR.Close()
		errR.Close()
		<-drained
	}
	outR.Close()
	errR.Close()
	for _, lw := range watches {
		lw.flush()
	}
	var ready, failed, end *helperStatus
	for _, s := range <-statuses {
		s := s
		switch s.Stage {
		case "ready":
			ready = &s
		case "failed":
			failed = &s
		case "end":
			end = &s
		}
	}
	statusR.Close()
	res.Stdout, res.Stderr = stdout.stream(), stderr.stream()
	res.Refused, res.Step = det.result()
	for _, s := range []*helperStatus{failed, ready} {
		if s != nil && s.Enforced != nil {
			res.Enforced = *s.Enforced
		}
	}
	if res.Enforced.Limits.Processes != 0 {
		// RLIMIT_NPROC does not bind root outside a user namespace.
		res.Enforced.Limits.ProcessesIgnored = os.Geteuid() == 0
		res.Enforced.PidsCgroup = cg != nil
		if res.Enforced.Limits.ProcessesIgnored && cg == nil {
			res.Enforced.Missing = append(res.Enforced.Missing,
				"process count: RLIMIT_NPROC does not bind root and no pids cgroup could be made")
		}
	}
	switch {
	case failed != nil && failed.Cause == "unavailable":
		p.finish(res, unavailable(failed.Detail))
		return
	case failed != nil && failed.Cause == "exec":
		res.End, res.Err, res.Errno = EndStartFailed, failed.Detail, syscall.Errno(failed.Errno)
	case failed != nil:
		p.finish(res, fmt.Errorf("run %s: the wall could not be built: %s", spec.Args[0], failed.Detail))
		return
	case ready == nil && (deadlineHit || stopped || canceled):
		// The deadline (or a stop, or the caller's cancel) came before
		// the program started, on a machine too loaded to start it in
		// time: that is how it ended, not a failure of the wall (a
		// cancel is still the caller's error, below).
		res.Err = "the program had not started when it was ended"
	case ready == nil:
		p.finish(res, fmt.Errorf("run %s: the wall's helper ended before starting the program (%v)", spec.Args[0], cmd.ProcessState))
		return
	}
	if end != nil {
		res.Survivors = end.Survivors
		if res.End == "" {
			res.ExitCode, res.Signal = end.Exit, end.Signal
		}
	}
	res.Survivors = max(res.Survivors, cgroupSurvivors)
	if nsIno != 0 {
		// The kernel kills a namespace with its init; count what it holds
		// now, as an outside check of the helper's own count (the pids
		// cgroup is that check where there is one).
		res.Survivors = max(res.Survivors, countInNamespace(nsIno))
	}
	if res.End == "" {
		switch {
		case stopped:
			res.End, res.StopReason = EndStopped, p.stopReason
		case deadlineHit || canceled:
			res.End = EndDeadline
		case res.Refused != nil:
			res.End = EndWall
		case res.Signal != "":
			res.End = EndSignal
		case end == nil:
			res.End, res.Signal = EndSignal, "helper ended without a report"
		default:
			res.End = EndExit
		}
	}
	if canceled {
		p.finish(res, fmt.Errorf("run %s: %w", spec.Args[0], ctx.Err()))
		return
	}
	p.finish(res, nil)
}

func waitFor(ch <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}

// startHelper starts the helper in new namespaces where the kernel allows
// them, else as a plain child (and remembers not to ask again).
func (w *Wall) startHelper(spec *helperSpec, stdout, stderr *os.File) (*exec.Cmd, *os.File, *os.File, error) {
	h := w.helper()
	for {
		flags, ns := w.cloneFlags(spec.NoNetwork)
		specR, specW, err := os.Pipe()
		if err != nil {
			return nil, nil, nil, err
		}
		statusR, statusW, err := os.Pipe()
		if err != nil {
			specR.Close()
			specW.Close()
			return nil, nil, nil, err
		}
		null, err := os.Open(os.DevNull)
		if err != nil {
			return nil, nil, nil, err
		}
		attr := &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL, Cloneflags: flags}
		if ns && os.Geteuid() != 0 {
			attr.Cloneflags |= unix.CLONE_NEWUSER
			attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}}
			attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}}
		}
		cmd := &exec.Cmd{
			Path: h.Path, Args: []string{h.Argv0, HelperVerb}, Dir: "/",
			// The helper's own environment holds nothing of the caller's: a
			// job that reads /proc/<helper>/environ finds nothing. GORACE
			// only speaks to race-built binaries (tests), which would
			// otherwise sleep a second at every exit.
			Env:    helperEnv,
			Stdin:  null,
			Stdout: stdout, Stderr: stderr,
			ExtraFiles:  extraFiles(specR, statusW, spec.execFile),
			SysProcAttr: attr,
		}
		spec.PIDNS, spec.NetNS = ns, ns && spec.NoNetwork
		err = cmd.Start()
		specR.Close()
		statusW.Close()
		null.Close()
		if err == nil {
			return cmd, specW, statusR, nil
		}
		specW.Close()
		statusR.Close()
		if ns && (errors.Is(err, unix.EPERM) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EUSERS) || errors.Is(err, unix.EACCES)) {
			w.nsMu.Lock()
			w.nsFailed = true
			w.nsMu.Unlock()
			continue
		}
		return nil, nil, nil, err
	}
}

// extraFiles are the helper's descriptors from 3 on: its spec, its status
// and, when the program is started through its descriptor, that one as
// ExecFD.
func extraFiles(spec, status, program *os.File) []*os.File {
	if program == nil {
		return []*os.File{spec, status}
	}
	return []*os.File{spec, status, program}
}

// namespaceInode is the inode of pid's pid namespace, or 0.
func namespaceInode(pid int) uint64 {
	var st unix.Stat_t
	if err := unix.Stat("/proc/"+strconv.Itoa(pid)+"/ns/pid", &st); err != nil {
		return 0
	}
	return st.Ino
}

// countInNamespace counts the processes in the pid namespace whose inode
// is ino.
func countInNamespace(ino uint64) int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil && namespaceInode(pid) == ino {
			n++
		}
	}
	return n
}
