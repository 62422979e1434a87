package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Defaults of the wall.
const (
	DefaultDeadline  = 10 * time.Minute
	DefaultGrace     = 3 * time.Second
	DefaultTailBytes = 16 << 10
	DefaultLang      = "C.UTF-8"
	DefaultPath      = "/usr/local/bin:/usr/bin:/bin"
	DefaultTempRoot  = "/tmp"
)

// Command is one program to run inside the wall.
type Command struct {
	// Args is the program and its arguments. A program without a slash is
	// looked up on the wall's PATH, never on the caller's. With Exec set,
	// Args[0] is only the program's argv[0] and is never looked up.
	Args []string
	// Exec, when set, is the program: the regular file open on this
	// descriptor (an O_PATH one is enough, such as an openat walk with
	// O_NOFOLLOW gives), started through the descriptor, never by name.
	// The wall grants read and execute on that one file and nothing else
	// of its directory, which need not be in any read set. What it
	// protects is the inode: renaming or replacing the file's path after
	// the open does not change what runs. What it does not protect is the
	// content: bytes rewritten in place in that same file run as
	// rewritten. The program finds the descriptor open on ExecFD (not
	// close-on-exec, so that a #! script's interpreter, which is handed
	// /dev/fd/5 as the script's path, can open it). The caller keeps and
	// closes the descriptor. A start the kernel refuses ends
	// EndStartFailed with Result.Errno saying why.
	Exec *os.File
	// Dir is the working directory, an absolute path. It is required: the
	// wall never inherits the caller's directory.
	Dir string
	// Write is the write set besides the job's own directory: the program
	// may create, change and remove files beneath these directories and
	// nowhere else. Read is what it may read besides the write set and the
	// wall's roots.
	Write, Read []string
	// JobAt, when set, is an absolute path at which the job directory
	// appears in the job's filesystem view instead of its own path (the
	// view is private, so two jobs never collide): Dir, HOME, TMPDIR,
	// GIT_CEILING_DIRECTORIES and any variable naming a path inside the
	// job directory are given as seen there, so that they are the same
	// from one run to the next (FixedJobDir). Without a view (subreaper
	// mode) the job sees its directory at its own path.
	JobAt string
	// Home and Tmp, when set, are the program's HOME and TMPDIR instead
	// of the job's own: absolute directories inside the write set (an
	// examination probe's are its workspace's scratch).
	Home, Tmp string
	// Set are variables the program gets with these values ("NAME=value",
	// a job's own NWDES_JOB_DIR say), besides those Env passes on.
	Set []string
	// Exclude are directories no root of the wall may cover: a root that
	// holds one of them, or lies inside one, is dropped (a checkout whose
	// bin is on PATH would otherwise be readable whole). The read and
	// write sets are what the caller names, and are kept.
	Exclude []string
	// Env names variables of the caller's environment the program
	// receives; nothing else passes but PATH, LANG, HOME and TMPDIR.
	Env []string
	// NoNetwork denies every socket but a UNIX one.
	NoNetwork bool
	// Deadline ends the program this long after its start (TERM, CONT,
	// Grace, then KILL); zero means DefaultDeadline.
	Deadline time.Duration
	// Stdout and Stderr, when set, also receive each stream as it arrives,
	// in full (the Result keeps only a tail). Writes to them are
	// serialized, so one writer may be given for both. Their errors are
	// ignored.
	Stdout, Stderr io.Writer
}

// FixedJobDir is where gate runs see their job directory: the candidate
// at /nwdes/job/work, HOME at /nwdes/job/home, TMPDIR at /nwdes/job/tmp.
const FixedJobDir = "/nwdes/job"

// ExecFD is the descriptor on which a program started through
// Command.Exec finds its own file.
const ExecFD = 5

// Shell returns the arguments that run line with /bin/sh -c.
func Shell(line string) []string { return []string{"/bin/sh", "-c", line} }

// End says how a run ended.
type End string

const (
	// EndExit: the program exited by itself; Result.ExitCode holds its code.
	EndExit End = "exit"
	// EndSignal: a signal the wall did not send ended the program.
	EndSignal End = "signal"
	// EndDeadline: the supervisor ended the program at its deadline.
	EndDeadline End = "deadline"
	// EndStopped: the caller ended the program with Process.Stop, as its
	// deadline would have; Result.StopReason says why.
	EndStopped End = "stopped"
	// EndWall: the program's output shows the kernel refusing it a path
	// outside its write set (Result.Refused says which); it may have exited
	// any way after that.
	EndWall End = "wall"
	// EndStartFailed: the program never ran (no such program, a directory
	// it may not enter, a program it may not execute).
	EndStartFailed End = "start-failed"
)

// Stream is what was captured of one output stream.
type Stream struct {
	// Bytes is the length of the whole stream.
	Bytes int64
	// SHA256 is the hex digest of the whole stream.
	SHA256 string
	// Tail is the stream's last bytes, at most the wall's tail bound.
	Tail []byte
}

// Truncated reports whether Tail is less than the whole stream.
func (s Stream) Truncated() bool { return s.Bytes > int64(len(s.Tail)) }

// Refusal is the first refusal of a path outside the write set seen in
// the program's output.
type Refusal struct {
	// Path is the refused path as the program printed it.
	Path string `json:"path"`
	// Line is the output line that named it, bounded.
	Line string `json:"line"`
	// Step is the number of the last "STEP <n>" line seen before it, or "".
	Step string `json:"step,omitempty"`
}

// Result is what happened to a program.
type Result struct {
	End End
	// ExitCode is the program's exit code when it exited (also when End is
	// EndWall), otherwise -1.
	ExitCode int
	// Signal names the signal that ended the program, if one did.
	Signal string
	// Err says why the start failed, when End is EndStartFailed.
	Err string
	// StopReason is the reason given to Process.Stop, when End is
	// EndStopped.
	StopReason string
	// Errno is the kernel's reason when End is EndStartFailed because a
	// system call refused the start: execve (EACCES or EPERM: refused for
	// permission, by mode bits, a noexec mount or the wall; ENOEXEC: not a
	// program; ENOENT: no such program or interpreter), or entering Dir.
	// It is 0 when the wall refused before asking the kernel (a program
	// not found on PATH, a directory outside the wall), except that an
	// Exec descriptor that is not a regular file gives EACCES, as execve
	// would.
	Errno syscall.Errno
	// Refused is set when the output showed the wall refusing a path.
	Refused *Refusal
	// Step is the last "STEP <n>" line seen in the output, or "".
	Step string
	// Survivors counts processes of the run still alive after it was
	// reaped; anything but 0 is a failure of the wall, reported.
	Survivors int
	Started   time.Time
	Duration  time.Duration
	Deadline  time.Duration
	Stdout    Stream
	Stderr    Stream
	// OutputCut is set when something still held the output open after
	// every process of the run was reaped, so reading was abandoned after
	// the grace period.
	OutputCut bool
	// Enforced is what the kernel actually enforced for this run.
	Enforced Enforced
}

// Runner runs untrusted commands inside the wall.
//
// Run runs cmd to its end and reports what happened in the Result: a
// non-zero exit, a signal, a deadline, a refusal by the wall or a failure
// to start are results, not errors. Run returns an error when the wall
// itself could not work, when it could not enforce what was asked and is
// strict (a SandboxUnavailable refusal), or when ctx ended, in which case
// the program was ended as at its deadline before Run returns. No process
// of the run outlives Run. Run is safe for concurrent use. Run is Start
// then Wait (Wall.Start, Job.Start, Process).
type Runner interface {
	Run(ctx context.Context, cmd Command) (Result, error)
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

// capture digests a whole stream, keeps its last max bytes, forwards it to
// a sink under a lock shared with the other stream, and feeds a watch.
type capture struct {
	h     hash.Hash
	n     int64
	max   int
	tail  []byte
	sink  io.Writer
	sinkM *sync.Mutex
	watch *lineWatch
}

func newCapture(max int, sink io.Writer, sinkM *sync.Mutex, w *lineWatch) *capture {
	return &capture{h: sha256.New(), max: max, sink: sink, sinkM: sinkM, watch: w}
}

func (c *capture) Write(p []byte) (int, error) {
	c.h.Write(p)
	c.n += int64(len(p))
	if c.sink != nil {
		c.sinkM.Lock()
		_, _ = c.sink.Write(p)
		c.sinkM.Unlock()
	}
	if c.watch != nil {
		c.watch.Write(p)
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
// directories writable again: a program may leave read-only directories
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

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// excludeRoots drops every root that holds one of the excluded
// directories or lies inside one (symbolic links in both resolved).
func excludeRoots(roots, exclude []string) []string {
	if len(exclude) == 0 {
		return roots
	}
	real := func(p string) string {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		return filepath.Clean(p)
	}
	var out []string
	for _, r := range roots {
		rr, keep := real(r), true
		for _, x := range exclude {
			xr := real(x)
			if within(xr, rr) || within(rr, xr) {
				keep = false
			}
		}
		if keep {
			out = append(out, r)
		}
	}
	return out
}

// finishBound bounds the helper's effort to kill and reap the job; the
// supervisor waits that long, and its grace, before it kills a helper it
// asked to finish.
const finishBound = 2 * time.Second
