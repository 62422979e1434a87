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
	"unicode/utf8"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"github.com/nwdes/nwdes/refusal"
	"golang.org/x/sys/unix"
)

// start starts c in j, through lane's helper when lane is not nil and can
// run it, else with a helper of its own.
func (j *Job) start(ctx context.Context, c Command, cleanup func(), lane *Lane) (*Process, error) {
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
	if err := j.ownDirs(c); err != nil {
		return nil, err
	}
	spec, err := w.spec(j, c)
	if err != nil {
		return nil, err
	}
	if what := notText(c.Args, spec.helperSpec); what != "" {
		return nil, fmt.Errorf("run %q: %s is not valid UTF-8, and the wall carries text only (it would reach the program changed); rename it, or pass the bytes in a file", c.Args[0], what)
	}
	if w.Strict {
		if err := Available(c.NoNetwork); err != nil {
			return nil, err
		}
	}
	deadline := orDefault(c.Deadline, DefaultDeadline)
	res := Result{ExitCode: -1, Deadline: deadline}
	writable := append([]string{}, spec.Write...)
	if c.JobAt != "" {
		writable = append(writable, c.JobAt)
	}
	visible := append(append(append([]string{}, writable...), spec.Read...), devRW...)
	for _, cs := range spec.Caches {
		visible = append(visible, cs.Path)
	}
	det := newDetector(c.Dir, writable, visible)
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
	} else if fi, err := os.Stat(prog); err == nil && fi.Mode().IsRegular() && filepath.IsAbs(prog) && w.UnderHome(prog) &&
		!holds(prog, append(append([]string{}, spec.Write...), spec.Read...)) {
		// A toolchain under a home directory needs a root: say which.
		return nil, OutsideRootsError("the program", prog)
	}
	if !within2(c.Dir, append(append([]string{}, spec.Write...), spec.Read...)) {
		return failed(EndStartFailed, fmt.Sprintf("working directory %s is outside the wall (name it with --read or --write)", c.Dir), 0)
	}
	spec.Program, spec.Args = prog, c.Args
	supervise := w.supervise
	if lane != nil && lane.serves(spec.helperSpec) {
		supervise = lane.supervise
	}
	if err := supervise(ctx, p, spec.helperSpec, res, stdout, stderr, []*lineWatch{outW, errW}, det); err != nil {
		return nil, err
	}
	return p, nil
}

// notText names the first of args and the strings of spec that is not
// valid UTF-8 ("" when all are): the spec travels to the helper as JSON,
// which would replace each invalid byte.
func notText(args []string, spec *helperSpec) string {
	for i, a := range args {
		if !utf8.ValidString(a) {
			return fmt.Sprintf("argument %d", i)
		}
	}
	for _, e := range spec.Env {
		if !utf8.ValidString(e) {
			name, _, _ := strings.Cut(e, "=")
			return fmt.Sprintf("the value of %s", strings.ToValidUTF8(name, "?"))
		}
	}
	for _, set := range []struct {
		what  string
		paths []string
	}{{"the program's path", []string{spec.Program}}, {"the working directory", []string{spec.Dir}},
		{"a path of the write set", spec.Write}, {"a path of the read set", spec.Read}} {
		for _, p := range set.paths {
			if !utf8.ValidString(p) {
				return set.what
			}
		}
	}
	return ""
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
			d, err := walkDir(flag, d)
			if err != nil {
				return nil, err
			}
			out = append(out, d)
		}
		return out, nil
	}
	write, err := dirs("write", c.Write)
	if err != nil {
		return builtSpec{}, err
	}
	write = minimalRoots(append([]string{j.Root}, write...))
	caches, err := dirs("cache", w.Caches)
	if err != nil {
		return builtSpec{}, err
	}
	cacheSpecs, err := j.cacheLayers(caches)
	if err != nil {
		return builtSpec{}, err
	}
	read, err := dirs("read", c.Read)
	if err != nil {
		return builtSpec{}, err
	}
	roots := excludeRoots(w.roots(), c.Exclude)
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
		Caches: cacheSpecs, JobRoot: j.Root, JobAt: c.JobAt,
		NoNetwork: c.NoNetwork, Limits: w.Limits.withDefaults(), Strict: w.Strict,
	}, pathEnv: path}, nil
}

// cacheState is the directory of a job that holds the upper and work
// directories of its cache overlays; the job's view covers it.
const cacheState = ".caches"

// cacheLayers makes, in the job directory, the upper and work directory
// of an overlay for each cache: what the job writes there is its own, and
// goes with the job directory.
func (j *Job) cacheLayers(caches []string) ([]cacheSpec, error) {
	var out []cacheSpec
	for i, c := range caches {
		d := filepath.Join(j.Root, cacheState, strconv.Itoa(i))
		cs := cacheSpec{Path: c, Upper: filepath.Join(d, "upper"), Work: filepath.Join(d, "work")}
		for _, p := range []string{cs.Upper, cs.Work} {
			if err := os.MkdirAll(p, 0o700); err != nil {
				return nil, fmt.Errorf("make the copy-on-write layer of cache %s: %w", c, err)
			}
		}
		out = append(out, cs)
	}
	return out, nil
}

// walkDir checks that d is an absolute, clean path of an existing
// directory whose every name, from /, is not a symbolic link: a link
// planted by an earlier job in a directory it could write would otherwise
// turn a write set into a directory nobody named. Each name is opened
// relative to the one before it, with O_PATH|O_NOFOLLOW (OpenNoFollow, the
// walk examination probes use).
func walkDir(flag, d string) (string, error) {
	if !filepath.IsAbs(d) {
		return "", refusal.New(refusal.PathUnusable, "give absolute paths of existing directories",
			"%s %q is not an absolute path", flag, d)
	}
	d = filepath.Clean(d)
	fd, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", fmt.Errorf("open /: %w", err)
	}
	defer func() { unix.Close(fd) }()
	at := ""
	for _, name := range strings.Split(strings.TrimPrefix(d, "/"), "/") {
		if name == "" {
			continue
		}
		at += "/" + name
		next, err := OpenNoFollow(fd, name)
		if err != nil {
			return "", refusal.New(refusal.PathUnusable, "give absolute paths of existing directories",
				"%s %q is not an existing directory", flag, d)
		}
		unix.Close(fd)
		fd = next
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return "", fmt.Errorf("%s %q: stat %s: %w", flag, d, at, err)
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
		case unix.S_IFLNK:
			target, _ := filepath.EvalSymlinks(d)
			remedy := "name the directory itself, not a symbolic link to it (a link in a directory a job could write may have been planted by that job)"
			if target != "" {
				remedy += "; it leads to " + target + ", if that is the directory you mean"
			}
			return "", refusal.New(refusal.PathIsLink, remedy,
				"%s %q passes through a symbolic link, %s", flag, d, at)
		default:
			return "", refusal.New(refusal.PathUnusable, "give absolute paths of existing directories",
				"%s %q is not an existing directory (%s is not a directory)", flag, d, at)
		}
	}
	return d, nil
}

// OpenNoFollow opens name relative to the directory dirfd with O_PATH and
// O_NOFOLLOW (a symbolic link is opened itself, never followed), retrying
// an interrupted call.
func OpenNoFollow(dirfd int, name string) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
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

// outputPipes makes the pipes of a program's stdout and stderr: both, or
// neither.
func outputPipes() (outR, outW, errR, errW *os.File, err error) {
	if outR, outW, err = os.Pipe(); err != nil {
		return nil, nil, nil, nil, err
	}
	if errR, errW, err = os.Pipe(); err != nil {
		outR.Close()
		outW.Close()
		return nil, nil, nil, nil, err
	}
	return outR, outW, errR, errW, nil
}

// supervise starts the helper on a goroutine of its own, which holds the
// deadline, ctx and p's Stop, and reaps, and returns once the helper has
// reported the program started or failed (and, when it failed before the
// program ran, once everything is reaped), or an error when no helper
// could be started.
func (w *Wall) supervise(ctx context.Context, p *Process, spec *helperSpec, res Result,
	stdout, stderr *capture, watches []*lineWatch, det *detector) error {
	return superviseWith(p, func(started chan<- error) {
		w.hold(ctx, p, spec, res, stdout, stderr, watches, det, started)
	})
}

// superviseWith runs hold on a goroutine of its own and waits as
// supervise says: hold is Wall.hold, or Lane.hold.
func superviseWith(p *Process, hold func(started chan<- error)) error {
	started := make(chan error, 1)
	go hold(started)
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

	outR, outW, errR, errW, err := outputPipes()
	if err != nil {
		started <- fmt.Errorf("run %s: %w", spec.Args[0], err)
		return
	}
	// The pids cgroup is joined before the helper reads its spec, so the
	// program is in it from its first instruction.
	cg, _ := w.newPidsCgroup(spec.Limits.Processes)
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
	var nsCount func() int
	if nsIno != 0 {
		nsCount = func() int { return countInNamespace(nsIno) }
	}
	w.conclude(ctx, p, spec, res, concluding{
		stdout: stdout, stderr: stderr, outR: outR, errR: errR, readers: &readers, watches: watches, det: det,
		statuses: func() []helperStatus { all := <-statuses; statusR.Close(); return all }, pidsCgroup: cg != nil,
		cgroupSurvivors: cgroupSurvivors, nsCount: nsCount, helperState: cmd.ProcessState,
		deadlineHit: deadlineHit, canceled: canceled, stopped: stopped,
	})
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

// concluding is what conclude needs of a run whose helper has ended (or,
// in a lane, whose end the helper has reported).
type concluding struct {
	stdout, stderr  *capture
	outR, errR      *os.File
	readers         *sync.WaitGroup
	watches         []*lineWatch
	det             *detector
	statuses        func() []helperStatus
	pidsCgroup      bool
	cgroupSurvivors int
	// nsCount, when set, counts what the job's pid namespace still holds
	// besides its helper: the outside check where no pids cgroup is.
	nsCount                        func() int
	helperState                    any
	deadlineHit, canceled, stopped bool
}

// conclude drains the output, reads the helper's statuses and finishes p
// with the Result they make.
func (w *Wall) conclude(ctx context.Context, p *Process, spec *helperSpec, res Result, c concluding) {
	drained := make(chan struct{})
	go func() { c.readers.Wait(); close(drained) }()
	if !waitFor(drained, orDefault(w.Grace, DefaultGrace)) {
		res.OutputCut = true
		c.outR.Close()
		c.errR.Close()
		<-drained
	}
	c.outR.Close()
	c.errR.Close()
	for _, lw := range c.watches {
		lw.flush()
	}
	var ready, failed, end *helperStatus
	for _, s := range c.statuses() {
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
	res.Stdout, res.Stderr = c.stdout.stream(), c.stderr.stream()
	res.Refused, res.Step = c.det.result()
	for _, s := range []*helperStatus{failed, ready} {
		if s != nil && s.Enforced != nil {
			res.Enforced = *s.Enforced
		}
	}
	if res.Enforced.Limits.Processes != 0 {
		// RLIMIT_NPROC does not bind root outside a user namespace.
		res.Enforced.Limits.ProcessesIgnored = os.Geteuid() == 0
		res.Enforced.PidsCgroup = c.pidsCgroup
		if res.Enforced.Limits.ProcessesIgnored && !c.pidsCgroup {
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
	case ready == nil && (c.deadlineHit || c.stopped || c.canceled):
		// The deadline (or a stop, or the caller's cancel) came before
		// the program started, on a machine too loaded to start it in
		// time: that is how it ended, not a failure of the wall (a
		// cancel is still the caller's error, below).
		res.Err = "the program had not started when it was ended"
	case ready == nil:
		p.finish(res, fmt.Errorf("run %s: the wall's helper ended before starting the program (%v)", spec.Args[0], c.helperState))
		return
	}
	if end != nil {
		res.Survivors = end.Survivors
		if res.End == "" {
			res.ExitCode, res.Signal = end.Exit, end.Signal
		}
	}
	res.Survivors = max(res.Survivors, c.cgroupSurvivors)
	if c.nsCount != nil {
		// The kernel kills a namespace with its init; count what it holds
		// now, as an outside check of the helper's own count (the pids
		// cgroup is that check where there is one).
		res.Survivors = max(res.Survivors, c.nsCount())
	}
	if res.End == "" {
		switch {
		case c.stopped:
			res.End, res.StopReason = EndStopped, p.stopReason
		case c.deadlineHit || c.canceled:
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
	if c.canceled {
		p.finish(res, fmt.Errorf("run %s: %w", spec.Args[0], ctx.Err()))
		return
	}
	p.finish(res, nil)
}
