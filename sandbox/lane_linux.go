package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
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
)

// laneHelper is a lane's running helper, as the supervisor holds it.
type laneHelper struct {
	cmd *exec.Cmd
	// reqs is the supervisor's end of the request socket.
	reqs *os.File
	// statuses are the helper's status lines, closed when it has ended.
	statuses chan helperStatus
	// exited closes once the helper is reaped.
	exited chan struct{}
	cg     *pidsCgroup
	nsIno  uint64
	// What the helper was started for: a job asking for other
	// namespaces or limits gets another.
	noNetwork bool
	limits    Limits
	seq       int
	// root is what the helper's own root holds (see makeLaneRoot): a
	// job that needs anything else runs with a helper of its own.
	root *helperSpec
}

// laneSignalScope is the Landlock ABI whose scoping keeps a job from
// signalling a process or thread outside its domain: of the helper it
// shares, every thread but the one that forked it, which blocks signals.
const laneSignalScope = 6

// serves reports whether the lane can run the job spec is for (see Lane).
func (l *Lane) serves(spec *helperSpec) bool {
	if spec.ExecFD || secondStage(spec.Limits) {
		return false
	}
	if _, ns := l.wall.cloneFlags(spec.NoNetwork); !ns {
		return false
	}
	abi, err := ll.LandlockGetABIVersion()
	return err == nil && abi >= laneSignalScope
}

// warm starts the helper for jobs with noNetwork and the wall's limits,
// where the lane would run them.
func (l *Lane) warm(noNetwork bool) {
	spec := &helperSpec{NoNetwork: noNetwork, Limits: l.wall.Limits.withDefaults()}
	if !l.serves(spec) {
		return
	}
	if h, err := l.wall.startLane(spec); err == nil {
		l.h = h
	}
}

// supervise is Wall.supervise through the lane's helper.
func (l *Lane) supervise(ctx context.Context, p *Process, spec *helperSpec, res Result,
	stdout, stderr *capture, watches []*lineWatch, det *detector) error {
	return superviseWith(p, func(started chan<- error) {
		l.hold(ctx, p, spec, res, stdout, stderr, watches, det, started)
	})
}

// hold is Wall.hold through the lane's helper: it sends the job, says on
// started that it was sent (or, when the lane cannot run it after all,
// hands it to Wall.hold before anything ran), holds the deadline, ctx and
// p's Stop, and finishes p once the helper has reported the job's end and
// the supervisor has checked that nothing of it is left.
func (l *Lane) hold(ctx context.Context, p *Process, spec *helperSpec, res Result,
	stdout, stderr *capture, watches []*lineWatch, det *detector, started chan<- error) {
	w := l.wall
	alone := func() { w.hold(ctx, p, spec, res, stdout, stderr, watches, det, started) }
	// A helper whose CPU time could reach its RLIMIT_CPU while it holds
	// this job would be killed by the kernel under it: such a job goes to
	// a new helper, or to one of its own when not even a new one could
	// hold it (see cpuFor).
	need := cpuFor(res.Deadline, orDefault(w.Grace, DefaultGrace))
	if need >= spec.Limits.CPUSeconds {
		alone()
		return
	}
	if l.rootless {
		alone()
		return
	}
	h := l.h
	if h != nil && (h.noNetwork != spec.NoNetwork || h.limits != spec.Limits || isClosed(h.exited) ||
		h.cpuUsed()+need >= spec.Limits.CPUSeconds) {
		l.retire()
		h = nil
	}
	if h == nil {
		var err error
		if h, err = w.startLane(spec); err != nil {
			// Started alone, the helper's start fails (or falls back to
			// a subreaper) as every job's does.
			alone()
			return
		}
		l.h = h
	}
	if !h.holds(spec) {
		alone()
		return
	}
	spec.PIDNS, spec.NetNS = true, spec.NoNetwork
	outR, outW, errR, errW, err := outputPipes()
	if err != nil {
		started <- fmt.Errorf("run %s: %w", spec.Args[0], err)
		return
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		outR.Close()
		outW.Close()
		errR.Close()
		errW.Close()
		started <- fmt.Errorf("run %s: %w", spec.Args[0], err)
		return
	}
	h.seq++
	err = h.send(laneRequest{Seq: h.seq, Spec: spec}, null, outW, errW)
	null.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		l.retire()
		alone()
		return
	}
	p.pid, p.seq = h.cmd.Process.Pid, h.seq
	took := false
	var readers sync.WaitGroup
	readers.Add(2)
	go func() { defer readers.Done(); io.Copy(stdout, outR) }()
	go func() { defer readers.Done(); io.Copy(stderr, errR) }()

	timer := time.NewTimer(res.Deadline)
	defer timer.Stop()
	var all []helperStatus
	var end *helperStatus
	var deadlineHit, canceled, stopped, gone, sent bool
	say := func() {
		if !sent {
			sent = true
			// Signal's requests go on a descriptor of the socket of their
			// own, closed once the job has ended.
			if fd, err := unix.Dup(int(h.reqs.Fd())); err == nil {
				unix.CloseOnExec(fd)
				p.ctl = os.NewFile(uintptr(fd), "lane")
			}
			p.specSent = make(chan struct{})
			close(p.specSent)
			started <- nil
		}
	}
	// elsewhere hands a job nothing of which ran to a helper of its own,
	// ending this lane's helper.
	elsewhere := func() {
		readers.Wait()
		outR.Close()
		errR.Close()
		l.retire()
		p.seq = 0
		alone()
	}
wait:
	for {
		select {
		case s, ok := <-h.statuses:
			if !ok && !took && !sent {
				// The helper ended before it took the job (it found its
				// limits changed, or could not read the request): nothing
				// of the job ran, and it runs with a helper of its own.
				elsewhere()
				return
			}
			if !ok {
				gone = true
				break wait
			}
			if s.Stage == "failed" && s.Cause == laneRootCause {
				// It ends without a root of its own, as every helper of
				// this lane would: its jobs run each with a helper of its
				// own.
				l.rootless = true
				continue
			}
			if s.Stage == "took" {
				took = took || s.Seq == h.seq
				continue
			}
			if s.Stage == "failed" && s.Cause == laneViewCause && !sent {
				// Nothing ran: the job's own helper builds its view, or
				// says why it cannot, as for every job.
				for s := range h.statuses {
					if s.Stage == "end" {
						break
					}
				}
				elsewhere()
				return
			}
			all = append(all, s)
			switch s.Stage {
			case "ready", "failed":
				say()
				p.report(s.Stage == "failed")
			case "end":
				end = &all[len(all)-1]
				break wait
			}
		case <-timer.C:
			deadlineHit = true
			break wait
		case <-ctx.Done():
			canceled = true
			break wait
		case <-p.stop:
			stopped = true
			break wait
		}
	}
	say()
	grace := orDefault(w.Grace, DefaultGrace)
	if deadlineHit || canceled || stopped {
		// TERM (the helper forwards it, with a CONT, to every process of
		// the job), the grace for the job's end, then the helper's end,
		// which ends its namespace: a lane never runs another job after
		// one it had to end.
		_ = h.cmd.Process.Signal(unix.SIGTERM)
		t := time.NewTimer(grace)
	ending:
		for {
			select {
			case s, ok := <-h.statuses:
				if !ok {
					break ending
				}
				all = append(all, s)
				if s.Stage == "end" {
					break ending
				}
			case <-t.C:
				break ending
			}
		}
		t.Stop()
	}
	p.closeControl()
	res.Duration = w.now().Sub(res.Started)
	// From outside, nothing of the job may be left: the pids cgroup (or
	// the namespace) holds the helper alone.
	cgroupSurvivors, left := 0, false
	if !gone && end != nil && !deadlineHit && !canceled && !stopped {
		cgroupSurvivors, left = h.others()
	}
	if gone || end == nil || end.Survivors > 0 || left || deadlineHit || canceled || stopped {
		// Counted as Wall.hold counts them: what outlived the helper,
		// or what the check above found, whichever is more.
		cgroupSurvivors = max(cgroupSurvivors, l.retireCounting())
	}
	l.conclude(ctx, p, spec, res, concluding{
		stdout: stdout, stderr: stderr, outR: outR, errR: errR, readers: &readers, watches: watches, det: det,
		statuses: func() []helperStatus { return all }, pidsCgroup: h.cg != nil,
		cgroupSurvivors: cgroupSurvivors, helperState: "the lane's helper ended",
		deadlineHit: deadlineHit, canceled: canceled, stopped: stopped,
	})
}

func (l *Lane) conclude(ctx context.Context, p *Process, spec *helperSpec, res Result, c concluding) {
	l.wall.conclude(ctx, p, spec, res, c)
}

// others counts the processes other than the helper in its pids cgroup,
// else in its pid namespace; left is set when there are any, or when they
// could not be counted.
func (h *laneHelper) others() (int, bool) {
	if h.cg != nil {
		pids, err := h.cg.readPids()
		if err != nil {
			return 0, true
		}
		n := 0
		for _, pid := range pids {
			if pid != h.cmd.Process.Pid {
				n++
			}
		}
		return n, n > 0
	}
	if h.nsIno == 0 {
		return 0, true
	}
	n := max(countInNamespace(h.nsIno)-1, 0)
	return n, n > 0
}

// send sends one request with the descriptors given.
func (h *laneHelper) send(r laneRequest, files ...*os.File) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	fds := make([]int, len(files))
	for i, f := range files {
		fds[i] = int(f.Fd())
	}
	rc, err := h.reqs.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	err = rc.Write(func(fd uintptr) bool {
		serr = unix.Sendmsg(int(fd), b, unix.UnixRights(fds...), nil, 0)
		return serr != unix.EAGAIN
	})
	for _, f := range files {
		runtime.KeepAlive(f)
	}
	if err != nil {
		return err
	}
	return serr
}

// retire ends the lane's helper, if it has one.
func (l *Lane) retire() { l.retireCounting() }

// retireCounting ends the lane's helper (the kernel kills what its
// namespace holds with it) and returns how many processes its pids cgroup
// still held once it was gone, which it then kills.
func (l *Lane) retireCounting() int {
	h := l.h
	if h == nil {
		return 0
	}
	l.h = nil
	h.reqs.Close()
	_ = h.cmd.Process.Kill()
	<-h.exited
	for range h.statuses {
	}
	if h.cg == nil {
		return 0
	}
	n := len(h.cg.pids())
	h.cg.end(orDefault(l.wall.Grace, DefaultGrace))
	return n
}

// startLane starts a lane's helper for jobs like spec's: the init of new
// pid, mount, IPC and (with NoNetwork) network namespaces, in a user
// namespace unless it is root, in a pids cgroup of its own where one can
// be made. Where the kernel refuses the namespaces it returns the error;
// the job then runs with a helper of its own, which takes the fallback.
func (w *Wall) startLane(spec *helperSpec) (*laneHelper, error) {
	type result struct {
		h   *laneHelper
		err error
	}
	ch := make(chan result, 1)
	go func() {
		// The helper's parent-death signal fires when the thread that
		// started it ends: this goroutine keeps it until the helper is
		// reaped.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		h, err := w.startLaneHelper(spec)
		ch <- result{h, err}
		if err != nil {
			return
		}
		_ = h.cmd.Wait()
		close(h.exited)
	}()
	r := <-ch
	return r.h, r.err
}

func (w *Wall) startLaneHelper(spec *helperSpec) (*laneHelper, error) {
	flags, ns := w.cloneFlags(spec.NoNetwork)
	if !ns {
		return nil, errors.New("no namespaces")
	}
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	if err := unix.SetNonblock(pair[0], true); err != nil {
		unix.Close(pair[0])
		unix.Close(pair[1])
		return nil, err
	}
	reqs, theirs := os.NewFile(uintptr(pair[0]), "lane"), os.NewFile(uintptr(pair[1]), "lane")
	defer theirs.Close()
	statusR, statusW, err := os.Pipe()
	if err != nil {
		reqs.Close()
		return nil, err
	}
	defer statusW.Close()
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		reqs.Close()
		statusR.Close()
		return nil, err
	}
	defer null.Close()
	attr := &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL, Cloneflags: flags}
	if os.Geteuid() != 0 {
		attr.Cloneflags |= unix.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}}
	}
	hp := w.helper()
	cmd := &exec.Cmd{
		Path: hp.Path, Args: []string{hp.Argv0, laneVerb}, Dir: "/", Env: helperEnv,
		Stdin: null, Stdout: null, Stderr: null,
		ExtraFiles: []*os.File{theirs, statusW}, SysProcAttr: attr,
	}
	// The pids cgroup is joined before the helper is sent a job, so every
	// job is in it from its first instruction.
	cg, _ := w.newPidsCgroup(spec.Limits.Processes)
	if err := cmd.Start(); err != nil {
		if cg != nil {
			cg.remove()
		}
		reqs.Close()
		statusR.Close()
		return nil, err
	}
	if cg != nil && cg.add(cmd.Process.Pid) != nil {
		cg.remove()
		cg = nil
	}
	h := &laneHelper{cmd: cmd, reqs: reqs, statuses: make(chan helperStatus, 8), exited: make(chan struct{}),
		cg: cg, noNetwork: spec.NoNetwork, limits: spec.Limits}
	// Its root first: the helper makes it before it takes any job. If the
	// request cannot be sent the helper ends, and its first job runs with
	// a helper of its own.
	if root := w.laneRootSpec(); h.send(laneRequest{Root: root}) == nil {
		h.root = root
	}
	if cg == nil {
		h.nsIno = namespaceInode(cmd.Process.Pid)
	}
	go func() {
		defer close(h.statuses)
		defer statusR.Close()
		sc := bufio.NewScanner(statusR)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			var s helperStatus
			if json.Unmarshal(sc.Bytes(), &s) == nil {
				h.statuses <- s
			}
		}
	}()
	return h, nil
}

// laneRootSpec is what a lane helper's own root holds: the wall's roots
// and caches, read-only, its temporary root (every job directory), and
// the device files, each as it exists now.
func (w *Wall) laneRootSpec() *helperSpec {
	exists := func(ps []string) []string {
		var out []string
		for _, p := range ps {
			if _, err := os.Lstat(p); err == nil {
				out = append(out, p)
			}
		}
		return out
	}
	read := w.roots()
	for _, c := range w.Caches {
		if d, err := walkDir("cache", c); err == nil {
			read = append(read, d)
		}
	}
	var write []string
	if d, err := filepath.EvalSymlinks(orDefault(w.TempRoot, DefaultTempRoot)); err == nil {
		write = append(write, d)
	}
	return &helperSpec{Read: exists(read), Write: exists(write), DevRW: exists(devRW), DevRO: exists(devRO)}
}

// holds reports whether the helper's own root holds everything spec's
// view binds: each path of its read set in the root's read or write set,
// of its write set and its caches' layers in the root's write set, its
// caches in the root's read set, and its device files. A path that does
// not exist is bound by no view.
func (h *laneHelper) holds(spec *helperSpec) bool {
	r := h.root
	if r == nil {
		return false
	}
	all := append(append([]string{}, r.Read...), r.Write...)
	in := func(p string, dirs []string) bool {
		if within2(p, dirs) {
			return true
		}
		_, err := os.Lstat(p)
		return err != nil
	}
	for _, p := range spec.Read {
		if p != "/proc" && !in(p, all) {
			return false
		}
	}
	for _, p := range spec.Write {
		if !in(p, r.Write) {
			return false
		}
	}
	for _, c := range spec.Caches {
		if !in(c.Path, r.Read) || !in(c.Upper, r.Write) || !in(c.Work, r.Write) {
			return false
		}
	}
	for _, p := range append(append([]string{}, spec.DevRW...), spec.DevRO...) {
		if !in(p, append(append([]string{}, r.DevRW...), r.DevRO...)) {
			return false
		}
	}
	return true
}

// cpuFor is the CPU time a lane's helper may spend while it holds a job
// that may run for deadline, then grace. The helper runs its Go code on
// one CPU at a time (GOMAXPROCS=1, helperEnv); of its goroutines only the
// reaper makes a system call that can run long (wait4, reaping what the
// job left to it), which may run beside that one; the job's thread ends
// once the program is forked, so no thread of the helper is in the job's
// Landlock domain and the job cannot signal it into work. So it spends at
// most about two CPUs' time (all of them, fewer than two; the runtime's
// monitor thread adds a trickle), whatever the job does. The helper's RLIMIT_CPU, which
// its jobs inherit so that each process of a job is held to it exactly,
// counts the helper's own time across all of its jobs. Bounding by every
// CPU of the machine instead would put every job of a machine with six
// or more CPUs on a helper of its own under the default limits.
func cpuFor(deadline, grace time.Duration) uint64 {
	s := (deadline + grace).Seconds() * float64(min(runtime.NumCPU(), laneHelperCPUs))
	return uint64(math.Ceil(s))
}

// laneHelperCPUs is how many CPUs a lane's helper can use at once (cpuFor).
const laneHelperCPUs = 2

// cpuUsed is the CPU time the helper has spent, in whole seconds rounded
// up; unreadable, it is taken as too much (math.MaxInt32), so that the
// helper is ended.
func (h *laneHelper) cpuUsed() uint64 {
	const too = math.MaxInt32
	b, err := os.ReadFile("/proc/" + strconv.Itoa(h.cmd.Process.Pid) + "/stat")
	if err != nil {
		return too
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return too
	}
	// utime and stime, fields 14 and 15, in USER_HZ (100 on Linux).
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return too
	}
	u, err1 := strconv.ParseUint(f[11], 10, 64)
	s, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return too
	}
	return (u + s + 99) / 100
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
