package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"slices"
	"syscall"

	"golang.org/x/sys/unix"
)

// A lane's helper keeps its main goroutine on the process's first thread
// from the start: the runtime runs init functions there, and a goroutine
// locked during them stays there for main. Later, once main has run on
// another thread, nothing could bring it back; and a job's goroutine
// that locked the first thread would outlive its job there (the runtime
// parks that thread instead of ending it).
func init() {
	if len(os.Args) > 1 && os.Args[1] == laneVerb {
		runtime.LockOSThread()
	}
}

// laneRequest is one message of the supervisor to a lane's helper, on its
// request socket (specFD, SOCK_SEQPACKET: a message is a request): a job
// to run (Spec, with the program's standard input, output and error
// passed beside it as SCM_RIGHTS), or a signal for the job numbered Seq.
type laneRequest struct {
	Seq    int         `json:"seq"`
	Spec   *helperSpec `json:"spec,omitempty"`
	Signal int         `json:"signal,omitempty"`
	// Root, the first request and only the first, gives the roots of
	// the helper's own root (see makeLaneRoot) as a spec's read and
	// write sets.
	Root *helperSpec `json:"root,omitempty"`
}

// laneJob is a job a lane's helper was sent.
type laneJob struct {
	seq  int
	spec *helperSpec
	fds  []int // the program's 0, 1 and 2
	root bool  // spec is the helper's root, not a job
}

// laneViewCause is a failed start's cause when a lane's helper could not
// build a job's view: nothing ran, and the supervisor runs the job again
// with a helper of its own, which reports the failure (or, in best
// effort, runs without the view) as every job's does.
const laneViewCause = "lane-view"

// laneRootCause is a lane helper's failure to make its own root: it ends
// before taking any job, and the supervisor runs the lane's jobs each
// with a helper of its own.
const laneRootCause = "lane-root"

// laneMain is the helper of a Lane: the init of a pid namespace (and in
// the IPC and network namespaces the lane was started in) that runs the
// jobs it is sent one after another, each from a thread of its own that
// is given its own mount, filesystem and IPC namespaces, builds that job's
// view and wall, forks the program, and is never given back. Between two
// jobs every process of the first is killed and reaped (finish): with no
// child left, nothing of it is alive in the namespace. The helper ends
// when the supervisor closes the request socket, or after a job that left
// survivors.
func laneMain() int {
	// The main thread is never restricted; each job's thread is, and
	// ends once it has forked its program. The runtime never ends the
	// process's first thread (it parks it), so a job's goroutine must
	// never run there: this goroutine holds it (locked since init), and a
	// helper that is not on it serves no job.
	runtime.LockOSThread()
	if unix.Gettid() != unix.Getpid() {
		// Then it serves no job: they run each with a helper of its own.
		sendStatus(helperStatus{Stage: "failed", Cause: laneRootCause, Detail: "a lane's helper must hold its first thread"})
		return 3
	}
	if os.Getpid() != 1 {
		sendStatus(helperStatus{Stage: "failed", Cause: "setup", Detail: "a lane's helper must be the init of a pid namespace of its own"})
		return 3
	}
	_ = unix.SetNonblock(specFD, true)
	sock := os.NewFile(specFD, "lane")
	requests := make(chan laneJob)
	controls := make(chan helperControl, 16)
	go readLaneRequests(sock, requests, controls)
	sigs := make(chan os.Signal, 64)
	signal.Notify(sigs, unix.SIGCHLD, unix.SIGTERM, unix.SIGINT, unix.SIGHUP)
	// Every other signal sent to the helper is received and dropped: by
	// default the runtime ends a Go program on QUIT, ABRT, ILL, TRAP, SYS
	// and more, even sent with tgkill, and the one thread of the helper a
	// job may signal (see startLaneProgram) could end it under the job.
	// Received, not ignored: an ignored signal would stay ignored in the
	// programs the helper starts.
	dropped := make(chan os.Signal, 1)
	signal.Notify(dropped)
	go func() {
		for range dropped {
		}
	}()
	// The helper lives for many jobs: its heap is collected (HelperMain,
	// which lives for one, runs without).
	debug.SetGCPercent(100)
	var limits *Limits
	// held is every resource limit of the helper as it found or set
	// them; a job must find them so.
	var held []unix.Rlimit
	// Its own root first, before anything of a job: the host's mount
	// table and root stay out of the namespace the jobs are made from.
	root, ok := <-requests
	if !ok {
		return 0
	}
	if !root.root {
		closeFDs(root.fds)
		sendStatus(helperStatus{Stage: "failed", Cause: laneRootCause, Detail: "the first request gives no root"})
		return 3
	}
	if err := makeLaneRoot(root.spec); err != nil {
		sendStatus(helperStatus{Stage: "failed", Cause: laneRootCause, Detail: "the lane's root: " + err.Error()})
		return 3
	}
	for job := range requests {
		if job.root {
			return 3
		}
		if limits == nil {
			// The limits bind the helper, and every job forked from it:
			// a lane's jobs share them (the supervisor starts a lane
			// again for other limits).
			if err := setLimits(job.spec.Limits, true); err != nil {
				closeFDs(job.fds)
				sendStatus(helperStatus{Stage: "failed", Cause: "setup", Detail: err.Error()})
				sendStatus(helperStatus{Stage: "end", Exit: -1})
				return 3
			}
			l := job.spec.Limits
			limits = &l
			held = heldLimits()
		} else if job.spec.Limits != *limits {
			closeFDs(job.fds)
			sendStatus(helperStatus{Stage: "failed", Cause: "setup", Detail: "a lane's jobs run under the limits of its first"})
			sendStatus(helperStatus{Stage: "end", Exit: -1})
			continue
		} else if now := heldLimits(); now == nil || !slices.Equal(now, held) {
			// Something changed them (the kernel lets any process of
			// the helper's user): the helper ends without taking the
			// job, and the supervisor runs it with a helper of its own.
			closeFDs(job.fds)
			return 3
		}
		// From here the job is the helper's: the supervisor runs it
		// elsewhere only when the helper ends before saying so.
		sendStatus(helperStatus{Stage: "took", Seq: job.seq})
		if !runLaneJob(job, sigs, controls) {
			return 3
		}
	}
	return 0
}

// heldLimits reads every resource limit of the helper (nil where one
// cannot be read: the helper then ends before its next job).
func heldLimits() []unix.Rlimit {
	out := make([]unix.Rlimit, rlimitCount)
	for r := range out {
		if err := unix.Prlimit(0, r, nil, &out[r]); err != nil {
			return nil
		}
	}
	return out
}

// rlimitCount is RLIM_NLIMITS, the number of resource limits Linux has
// had since 2.6.25.
const rlimitCount = 16

// runLaneJob runs one job and reports its end; false when something of it
// survived the reaping, and the lane must end.
func runLaneJob(job laneJob, sigs chan os.Signal, controls <-chan helperControl) bool {
	// A signal left from between jobs is no one's.
	for drained := false; !drained; {
		select {
		case <-sigs:
		default:
			drained = true
		}
	}
	type laneStart struct {
		pid int
		err error
	}
	started := make(chan laneStart, 1)
	go func() {
		// Never unlocked: this thread takes the job's namespaces and
		// restrictions, and ends with the goroutine (the runtime ends a
		// thread whose goroutine exits locked) as soon as the program is
		// forked, never running anything else. So no thread of the
		// helper is left in the job's Landlock domain: the job can
		// signal none (scoping), trace none, read none's memory. Its
		// children pass to another thread of the helper, which reaps
		// them; the program has no parent-death signal to lose with it
		// (the helper is the init of the pid namespace: when it dies the
		// kernel kills every process of the namespace).
		runtime.LockOSThread()
		pid, err := startLaneProgram(job.spec, job.fds)
		started <- laneStart{pid, err}
	}()
	st := <-started
	// The program holds its own copies; the helper keeps none, so that
	// the supervisor sees the end of the output when the job ends.
	closeFDs(job.fds)
	var end helperStatus
	if st.err != nil {
		end = helperStatus{Stage: "end", Exit: -1, Survivors: finish(nil)}
	} else {
		end = reap(st.pid, job.seq, sigs, controls)
	}
	sendStatus(end)
	return end.Survivors == 0
}

// startLaneProgram gives the calling thread (locked, never given back)
// mount, filesystem and IPC namespaces of its own, builds the job's view
// in them and the wall around the thread (buildWall: capabilities,
// no_new_privs, Landlock, seccomp, all of the thread only), and forks the
// program from it, which inherits all of it. It reports the start.
func startLaneProgram(spec *helperSpec, fds []int) (int, error) {
	if err := unix.Unshare(unix.CLONE_NEWNS | unix.CLONE_FS | unix.CLONE_NEWIPC); err != nil {
		sendStatus(helperStatus{Stage: "failed", Cause: laneViewCause, Detail: "unshare the job's mount and IPC namespaces: " + err.Error()})
		return 0, err
	}
	spec.Proc = "pid-namespace"
	if err := makeView(spec); err != nil {
		sendStatus(helperStatus{Stage: "failed", Cause: laneViewCause, Detail: "filesystem view: " + err.Error()})
		return 0, err
	}
	spec.View = true
	spec.relocate()
	spec.placeCaches()
	enf, err := buildWall(spec)
	if err != nil {
		reportBuildFailure(err, enf)
		return 0, err
	}
	files := make([]uintptr, len(fds))
	for i, fd := range fds {
		files[i] = uintptr(fd)
	}
	// Ready before the fork, as execMain says it before its exec: once
	// the program runs, whatever it does to the helper (were it to end
	// the helper before a "ready" after the fork) is how the job ended,
	// never a helper that failed to start it. A fork or exec that fails
	// is still reported below, and a report of failure is read first.
	sendStatus(helperStatus{Stage: "ready", Enforced: enf})
	pid, err := syscall.ForkExec(spec.Program, spec.Args, &syscall.ProcAttr{
		Dir: spec.Dir, Env: spec.Env, Files: files,
		Sys: &syscall.SysProcAttr{Setpgid: true},
	})
	if err != nil {
		errno, _ := err.(syscall.Errno)
		sendStatus(helperStatus{Stage: "failed", Cause: "exec", Errno: int(errno),
			Detail: fmt.Sprintf("%s: %v", spec.Program, err), Enforced: enf})
		return 0, err
	}
	return pid, nil
}

// readLaneRequests reads the supervisor's requests until it closes the
// socket: jobs on requests (which it then closes), signals on controls. A
// message it cannot read whole ends the lane.
func readLaneRequests(sock *os.File, requests chan<- laneJob, controls chan<- helperControl) {
	defer close(requests)
	rc, err := sock.SyscallConn()
	if err != nil {
		return
	}
	buf := make([]byte, maxLaneRequest)
	oob := make([]byte, unix.CmsgSpace(4*laneFDs))
	for {
		var n, oobn, flags int
		var rerr error
		err := rc.Read(func(fd uintptr) bool {
			n, oobn, flags, _, rerr = unix.Recvmsg(int(fd), buf, oob, unix.MSG_CMSG_CLOEXEC)
			return rerr != unix.EAGAIN
		})
		if err != nil || rerr != nil || n == 0 {
			return
		}
		fds, ferr := rightsOf(oob[:oobn])
		if ferr != nil || flags&(unix.MSG_TRUNC|unix.MSG_CTRUNC) != 0 {
			closeFDs(fds)
			return
		}
		var r laneRequest
		dec := json.NewDecoder(bytes.NewReader(buf[:n]))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			closeFDs(fds)
			return
		}
		if r.Root != nil {
			closeFDs(fds)
			requests <- laneJob{spec: r.Root, root: true}
			continue
		}
		if r.Spec == nil {
			closeFDs(fds)
			select {
			case controls <- helperControl{Signal: r.Signal, Seq: r.Seq}:
			default: // a job that is sent more than it takes loses some
			}
			continue
		}
		if err := checkSpec(r.Spec); err != nil || len(fds) != laneFDs {
			closeFDs(fds)
			return
		}
		requests <- laneJob{seq: r.Seq, spec: r.Spec, fds: fds}
	}
}

// laneFDs is how many descriptors come with a job: its 0, 1 and 2.
const laneFDs = 3

// maxLaneRequest bounds one request (a spec is a few kilobytes).
const maxLaneRequest = 1 << 20

// rightsOf is the descriptors an SCM_RIGHTS message carried.
func rightsOf(oob []byte) ([]int, error) {
	if len(oob) == 0 {
		return nil, nil
	}
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, err
	}
	var fds []int
	for _, m := range msgs {
		r, err := unix.ParseUnixRights(&m)
		if err != nil {
			closeFDs(fds)
			return nil, err
		}
		fds = append(fds, r...)
	}
	return fds, nil
}

func closeFDs(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// checkSpec refuses a spec that names no program or directory.
func checkSpec(s *helperSpec) error {
	if (s.Program == "" && !s.ExecFD) || len(s.Args) == 0 || s.Dir == "" {
		return errors.New("the wall's spec names no program or directory")
	}
	if s.ExecFD {
		return errors.New("a lane does not start a program through its descriptor")
	}
	return nil
}
