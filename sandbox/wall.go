package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

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
	// Now is the clock for Started and Duration. Jobs run at the same
	// time (a supervisor's, gate run --jobs) call it from their own
	// goroutines: it must be safe for concurrent use (time.Now is).
	Now func() time.Time

	nsMu     sync.Mutex
	nsFailed bool // the kernel refused namespaces once: do not ask again

	// What a wall keeps for all its jobs (a gate run makes one job per
	// oracle): when it last swept the job directories of dead supervisors
	// (at most every sweepEvery), the pids cgroup nwdes's own once found,
	// and its default roots for the PATH and home they were made from,
	// while the links they were resolved through are unchanged.
	onceMu  sync.Mutex
	sweptAt map[string]time.Time // by TempRoot
	cgBase  string               // the pids cgroup found, "" until one is
	rootsAt *rootsMemo
}

// rootsMemo is the default roots of a PATH and home, and the names met
// resolving them.
type rootsMemo struct {
	key   [2]string
	roots []string
	seen  []pathName
}

// current reports whether the roots are still those of key: made for it,
// and every link met still pointing where it did, every missing name still
// missing (a switched /usr/local/go or nix profile is seen at the next
// run). A directory on the way that becomes a link is not seen until the
// PATH or home changes.
func (m *rootsMemo) current(key [2]string) bool {
	if m == nil || m.key != key {
		return false
	}
	for _, n := range m.seen {
		if !n.unchanged() {
			return false
		}
	}
	return true
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
	roots, _ := defaultRoots(path, home)
	return roots
}

// defaultRoots is DefaultRoots, with the names its answer depends on:
// each link followed to resolve a PATH entry, and each name that could
// not be read.
func defaultRoots(path, home string) ([]string, []pathName) {
	var seen []pathName
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
		if r, err := resolve(d, &seen); err == nil {
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
	return minimalRoots(roots), seen
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
// Work is made with the job; Home and Tmp when a command that gives no
// HOME or TMPDIR of its own starts (ownDirs): a swarm job gives both, and
// making a directory it would not use costs as much as any other file
// where the file system makes them slowly. Close removes it all.
type Job struct {
	Root, Work, Home, Tmp string
	wall                  *Wall
}

// sweepEvery is how often a wall sweeps the job directories of dead
// supervisors: a long-lived wall (a supervisor's) still sweeps those of
// supervisors that died after its start, and a gate run's jobs do not
// each list TempRoot.
const sweepEvery = 5 * time.Minute

// NewJob makes a fresh job directory under the wall's TempRoot, named for
// this process. The wall's first job, and then one job at most every
// sweepEvery (by the wall's clock), first sweeps the job directories of
// runs whose process is gone (a supervisor killed with SIGKILL cannot
// remove its own).
func (w *Wall) NewJob() (*Job, error) {
	tmp := orDefault(w.TempRoot, DefaultTempRoot)
	if fi, err := os.Stat(tmp); err != nil || !fi.IsDir() || !filepath.IsAbs(tmp) {
		return nil, refusal.New(refusal.TempDirUnusable, "set TMPDIR to an existing, writable, absolute directory (or unset it for /tmp)",
			"the directory for job directories, %q, is not an existing absolute directory", tmp)
	}
	if w.sweepDue(tmp) {
		sweepJobs(tmp)
	}
	root, err := os.MkdirTemp(tmp, jobPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return nil, refusal.New(refusal.TempDirUnusable, "set TMPDIR to an existing, writable, absolute directory (or unset it for /tmp)",
			"cannot make a job directory in %s: %v", tmp, err)
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	j := &Job{Root: root, Work: filepath.Join(root, "work"), Home: filepath.Join(root, "home"), Tmp: filepath.Join(root, "tmp"), wall: w}
	if err := os.Mkdir(j.Work, 0o700); err != nil {
		RemoveAll(root)
		return nil, fmt.Errorf("make job directory: %w", err)
	}
	return j, nil
}

// ownDirs makes the job's Home and Tmp for a command that gives no HOME
// or TMPDIR of its own; one an earlier command of the job made is left as
// it is, as NewJob's were before every command.
func (j *Job) ownDirs(c Command) error {
	for _, d := range []struct{ given, dir string }{{c.Home, j.Home}, {c.Tmp, j.Tmp}} {
		if d.given != "" {
			continue
		}
		if err := os.Mkdir(d.dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("make job directory: %w", err)
		}
	}
	return nil
}

const jobPrefix = "nwdes-job-"

// sweepDue reports whether the job directories under tmp are to be swept
// now, and if so marks them swept: the sweep itself, which may delete
// whole trees, runs outside the lock, and one job of many made at once
// does it.
func (w *Wall) sweepDue(tmp string) bool {
	now := w.now()
	w.onceMu.Lock()
	defer w.onceMu.Unlock()
	if last, ok := w.sweptAt[tmp]; ok && now.Sub(last) < sweepEvery {
		return false
	}
	if w.sweptAt == nil {
		w.sweptAt = map[string]time.Time{}
	}
	w.sweptAt[tmp] = now
	return true
}

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
	p, err := j.start(ctx, cmd, func() { j.Close() }, nil)
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
	return j.start(ctx, c, nil, nil)
}

func unavailable(what string) error {
	return refusal.NewUnavailable(refusal.SandboxUnavailable,
		"run where the kernel has Landlock ABI 3+ (Linux 6.2+), seccomp and mount and pid namespaces, or accept a partly walled run (gate run --best-effort, recorded in the evidence; sandbox run without --strict)",
		"the kernel cannot enforce the wall: %s", what).Wrap(ErrUnavailable)
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

// roots are the wall's roots: Roots, or the defaults for its PATH and
// home, made again when a link they were resolved through changed.
func (w *Wall) roots() []string {
	if w.Roots != nil {
		return w.Roots
	}
	key := [2]string{orDefault(w.Path, DefaultPath), w.Home}
	w.onceMu.Lock()
	m := w.rootsAt
	w.onceMu.Unlock()
	if !m.current(key) {
		m = &rootsMemo{key: key}
		m.roots, m.seen = defaultRoots(key[0], key[1])
		w.onceMu.Lock()
		w.rootsAt = m
		w.onceMu.Unlock()
	}
	return append([]string{}, m.roots...)
}

// Holds reports whether a job's view holds the file at path: whether it
// lies, symbolic links resolved, in one of the wall's roots or in dirs (the
// job's read and write sets).
func (w *Wall) Holds(path string, dirs []string) bool {
	return holds(path, append(append([]string{}, w.roots()...), dirs...))
}

// holds reports whether path lies in one of dirs, symbolic links resolved.
func holds(path string, dirs []string) bool {
	real := func(p string) string {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		return filepath.Clean(p)
	}
	p := real(path)
	for _, d := range dirs {
		if within(p, real(d)) {
			return true
		}
	}
	return false
}

// UnderHome reports whether path lies under a home area: /root, /home or
// the wall's Home, which no default root covers beyond a PATH directory.
func (w *Wall) UnderHome(path string) bool {
	homes := []string{"/root", "/home"}
	if h := filepath.Clean(w.Home); filepath.IsAbs(h) && h != "/" {
		homes = append(homes, h)
	}
	return within2(filepath.Clean(path), homes)
}

// SuggestRoot is the directory to make a root for path, a file a job
// needs: the toolchain directory above a bin, sbin or shims directory on
// PATH that holds it (~/.pyenv/versions/3.12 for a library beside its
// bin), else the directory above the file's own bin, else the file's
// directory.
func SuggestRoot(path, pathList string) string {
	path = filepath.Clean(path)
	for _, d := range filepath.SplitList(pathList) {
		if !filepath.IsAbs(d) {
			continue
		}
		d = filepath.Clean(d)
		switch filepath.Base(d) {
		case "bin", "sbin", "shims":
			if top := filepath.Dir(d); top != "/" && within(path, top) {
				return top
			}
		}
	}
	dir := filepath.Dir(path)
	switch filepath.Base(dir) {
	case "bin", "sbin", "shims":
		dir = filepath.Dir(dir)
	}
	return dir
}

// RootRemedy is the remedy for a file a job needs that no root holds,
// naming dir as the root to add: the one configuration every kind of job
// reads its roots from.
func RootRemedy(dir string) string {
	return "make the directory that holds it, and what it needs, a root of the wall, read-only: git config --add nwdes.sandbox.root " + dir +
		" (gate runs, examination probes and swarm jobs all read it; sandbox run takes --root); or call a program the default roots hold"
}

// OutsideRootsError is the refusal of a program no root of the wall holds.
func OutsideRootsError(what, path string) error {
	return refusal.New(refusal.OutsideRoots, RootRemedy(SuggestRoot(path, "")),
		"%s %s lies outside the wall's roots: a job would not find it", what, path)
}
