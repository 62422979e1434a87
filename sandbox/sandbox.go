package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Defaults for Exec and Command.
const (
	DefaultTimeout   = 10 * time.Minute
	DefaultTailBytes = 16 << 10
	DefaultGrace     = 2 * time.Second
	DefaultLang      = "C.UTF-8"
	DefaultPath      = "/usr/local/bin:/usr/bin:/bin"
	DefaultTempRoot  = "/tmp"
)

// Command is one process to run.
type Command struct {
	// Args is the program and its arguments. A program without a slash is
	// looked up on the runner's PATH, never on the caller's.
	Args []string
	// Dir is the working directory, an absolute path. It is required: a
	// runner never inherits the caller's directory.
	Dir string
	// Timeout ends the process group this long after the start; zero means
	// DefaultTimeout.
	Timeout time.Duration
	// Stdout and Stderr, when set, also receive each stream as it is
	// written, in full (the Result keeps only a tail), so that a caller can
	// search a stream of any length. Their errors are ignored.
	Stdout io.Writer
	Stderr io.Writer
}

// Shell returns the arguments that run line with /bin/sh -c.
func Shell(line string) []string { return []string{"/bin/sh", "-c", line} }

// Cause says how a process ended.
type Cause string

const (
	// Exited: the process exited by itself; Result.ExitStatus holds its code.
	Exited Cause = "exit"
	// Signaled: a signal the runner did not send ended the process.
	Signaled Cause = "signal"
	// TimedOut: the runner killed the process group at its timeout.
	TimedOut Cause = "timeout"
	// StartFailed: the process never ran (no such program or directory…).
	StartFailed Cause = "start-failed"
)

// Stream is what was captured of one output stream.
type Stream struct {
	// Bytes is the length of the whole stream.
	Bytes int64
	// SHA256 is the hex digest of the whole stream.
	SHA256 string
	// Tail is the stream's last bytes, at most the runner's tail bound.
	Tail []byte
}

// Truncated reports whether Tail is less than the whole stream.
func (s Stream) Truncated() bool { return s.Bytes > int64(len(s.Tail)) }

// Result is what happened to a process.
type Result struct {
	Cause Cause
	// ExitStatus is the exit code when Cause is Exited, otherwise -1.
	ExitStatus int
	// Signal names the signal when Cause is Signaled.
	Signal string
	// Err says why the start failed, when Cause is StartFailed.
	Err string
	// Started is when the process was started; Duration how long it ran
	// until its group was ended.
	Started  time.Time
	Duration time.Duration
	Timeout  time.Duration
	Stdout   Stream
	Stderr   Stream
	// OutputCut is set when something outside the process group still held
	// the output open after the group was killed, so reading was abandoned
	// after the grace period.
	OutputCut bool
}

// Runner runs untrusted commands.
//
// Run runs cmd to its end and reports what happened in the Result: a
// non-zero exit, a signal, a timeout or a failure to start are results,
// not errors. Run returns an error only when the runner itself could not
// work (its private directories could not be made) or when ctx ended, in
// which case the process group has been killed before Run returns. No
// process of the group outlives Run. Run is safe for concurrent use.
type Runner interface {
	Run(ctx context.Context, cmd Command) (Result, error)
}

// Exec runs commands as plain child processes:
//
//   - the working directory is Command.Dir, always;
//   - the environment is exactly PATH (Path), LANG (Lang), HOME and
//     TMPDIR pointing into a private temporary directory made for this run,
//     and GIT_CEILING_DIRECTORIES set to the parent of Dir
//     and removed after it; nothing else of the caller's environment;
//   - standard input is /dev/null;
//   - the process leads its own process group; at the timeout, or when ctx
//     ends, the whole group is killed (SIGKILL), and once the leader has
//     exited whatever it left running in the group is killed too;
//   - each output stream is digested in full while only its last TailBytes
//     bytes are kept.
//
// A process that leaves its group (setsid) escapes the kill; a stricter
// Runner is where that is closed.
type Exec struct {
	// Path is the PATH the process sees and the one programs are looked up
	// on; DefaultPath when empty. The CLI passes the user's PATH.
	Path string
	// Lang is LANG; DefaultLang when empty.
	Lang string
	// TempRoot is where the private HOME and TMPDIR are made;
	// DefaultTempRoot when empty.
	TempRoot string
	// TailBytes bounds the tail kept of each stream; DefaultTailBytes when 0.
	TailBytes int
	// Grace is how long output is still read after the group was killed;
	// DefaultGrace when zero.
	Grace time.Duration
	// Now is the clock for Started and Duration.
	Now func() time.Time
}

var _ Runner = (*Exec)(nil)

func (x *Exec) now() time.Time {
	if x.Now != nil {
		return x.Now()
	}
	return time.Now()
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Run implements Runner.
func (x *Exec) Run(ctx context.Context, c Command) (Result, error) {
	if len(c.Args) == 0 {
		return Result{}, errors.New("run: no program given")
	}
	if !filepath.IsAbs(c.Dir) {
		return Result{}, fmt.Errorf("run %s: working directory %q is not absolute", c.Args[0], c.Dir)
	}
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("run %s: %w", c.Args[0], err)
	}
	timeout := orDefault(c.Timeout, DefaultTimeout)
	path := orDefault(x.Path, DefaultPath)
	res := Result{ExitStatus: -1, Timeout: timeout}

	priv, err := os.MkdirTemp(orDefault(x.TempRoot, DefaultTempRoot), "nwdes-run-")
	if err != nil {
		return Result{}, fmt.Errorf("run %s: private directory: %w", c.Args[0], err)
	}
	defer RemoveAll(priv)
	home, tmp := filepath.Join(priv, "home"), filepath.Join(priv, "tmp")
	for _, d := range []string{home, tmp} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return Result{}, fmt.Errorf("run %s: private directory: %w", c.Args[0], err)
		}
	}
	// GIT_CEILING_DIRECTORIES keeps a git the command runs from finding a
	// repository above its directory (the user's own, when the export sits
	// inside it): a command sees only the tree it was given.
	env := []string{"PATH=" + path, "LANG=" + orDefault(x.Lang, DefaultLang), "HOME=" + home, "TMPDIR=" + tmp,
		"GIT_CEILING_DIRECTORIES=" + filepath.Dir(c.Dir)}

	tail := orDefault(x.TailBytes, DefaultTailBytes)
	stdout, stderr := newCapture(tail, c.Stdout), newCapture(tail, c.Stderr)
	res.Started = x.now()
	prog, err := lookPath(c.Args[0], path)
	if err != nil {
		res.Cause, res.Err = StartFailed, err.Error()
		res.Stdout, res.Stderr = stdout.stream(), stderr.stream()
		return res, nil
	}

	outR, outW, err := os.Pipe()
	if err != nil {
		return Result{}, fmt.Errorf("run %s: %w", c.Args[0], err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return Result{}, fmt.Errorf("run %s: %w", c.Args[0], err)
	}
	cmd := &exec.Cmd{
		Path: prog, Args: c.Args, Dir: c.Dir, Env: env,
		Stdout: outW, Stderr: errW,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	err = cmd.Start()
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		res.Cause, res.Err = StartFailed, err.Error()
		res.Duration = x.now().Sub(res.Started)
		res.Stdout, res.Stderr = stdout.stream(), stderr.stream()
		return res, nil
	}
	var readers sync.WaitGroup
	readers.Add(2)
	go func() { defer readers.Done(); io.Copy(stdout, outR) }()
	go func() { defer readers.Done(); io.Copy(stderr, errR) }()

	pid := cmd.Process.Pid
	exited := make(chan struct{})
	go func() {
		// Wait for the leader's exit without reaping it, so that its pid,
		// which is the group's id, cannot be reused before the group is
		// killed below.
		var info unix.Siginfo
		for {
			if err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil); err != unix.EINTR {
				break
			}
		}
		close(exited)
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var timedOut, canceled bool
	select {
	case <-exited:
	case <-timer.C:
		select {
		case <-exited:
		default:
			timedOut = true
		}
	case <-ctx.Done():
		canceled = true
	}
	killGroup(pid)
	<-exited
	res.Duration = x.now().Sub(res.Started)
	killGroup(pid)
	waitErr := cmd.Wait()

	drained := make(chan struct{})
	go func() { readers.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(orDefault(x.Grace, DefaultGrace)):
		res.OutputCut = true
		outR.Close()
		errR.Close()
		<-drained
	}
	outR.Close()
	errR.Close()
	res.Stdout, res.Stderr = stdout.stream(), stderr.stream()

	if canceled {
		return res, fmt.Errorf("run %s: %w", c.Args[0], ctx.Err())
	}
	if cmd.ProcessState == nil {
		return res, fmt.Errorf("run %s: %w", c.Args[0], waitErr)
	}
	st, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	switch {
	case timedOut:
		res.Cause = TimedOut
	case st.Signaled():
		res.Cause, res.Signal = Signaled, unix.SignalName(st.Signal())
		if res.Signal == "" {
			res.Signal = st.Signal().String()
		}
	default:
		res.Cause, res.ExitStatus = Exited, cmd.ProcessState.ExitCode()
	}
	return res, nil
}

// killGroup sends SIGKILL to every process of the group led by pid; a group
// with nothing left in it is not an error.
func killGroup(pid int) {
	_ = unix.Kill(-pid, unix.SIGKILL)
}

// lookPath finds prog on path the way a shell would, without consulting the
// caller's environment.
func lookPath(prog, path string) (string, error) {
	if strings.Contains(prog, "/") {
		return prog, nil
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, prog)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: not found on PATH %s", prog, path)
}

// capture digests a whole stream and keeps its last max bytes.
type capture struct {
	h    hash.Hash
	n    int64
	max  int
	tail []byte
	sink io.Writer
}

func newCapture(max int, sink io.Writer) *capture {
	return &capture{h: sha256.New(), max: max, sink: sink}
}

func (c *capture) Write(p []byte) (int, error) {
	c.h.Write(p)
	c.n += int64(len(p))
	if c.sink != nil {
		_, _ = c.sink.Write(p)
	}
	if len(p) >= c.max {
		c.tail = append(c.tail[:0], p[len(p)-c.max:]...)
		return len(p), nil
	}
	c.tail = append(c.tail, p...)
	if over := len(c.tail) - c.max; over > 0 {
		c.tail = append(c.tail[:0], c.tail[over:]...)
	}
	return len(p), nil
}

func (c *capture) stream() Stream {
	return Stream{Bytes: c.n, SHA256: hex.EncodeToString(c.h.Sum(nil)), Tail: append([]byte{}, c.tail...)}
}

// RemoveAll removes path and everything under it, first making
// directories writable again: a command may leave read-only directories
// behind in its tree or its private HOME.
func RemoveAll(path string) error {
	if err := os.RemoveAll(path); err == nil {
		return nil
	}
	_ = filepath.WalkDir(path, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(path)
}
