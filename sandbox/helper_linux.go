package sandbox

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// The helper's descriptors: the spec arrives on specFD, and after it the
// supervisor's requests (helperControl lines) until the supervisor closes
// it (the second stage only reads its spec there); the status goes out on
// statusFD; 0, 1 and 2 are the program's, and so is
// ExecFD when the program is started through its descriptor (it stays on
// that number from the supervisor's ExtraFiles to the program).
const (
	specFD   = 3
	statusFD = 4
)

// noFD closes a slot of a ForkExec Files list in the child.
const noFD = ^uintptr(0)

// helperSpec is what the supervisor tells the helper: the program and the
// wall around it.
type helperSpec struct {
	// Program is the path executed; with ExecFD the helper sets it to
	// the descriptor's name, /dev/fd/<ExecFD>.
	Program string `json:"program"`
	// ExecFD: the program is the file open on ExecFD.
	ExecFD bool     `json:"exec_fd,omitempty"`
	Args   []string `json:"args"`
	Dir    string   `json:"dir"`
	Env    []string `json:"env"`
	Write  []string `json:"write"`
	Read   []string `json:"read"`
	DevRW  []string `json:"dev_rw"`
	DevRO  []string `json:"dev_ro"`
	// Caches are the wall's shared caches with the layers the job's
	// copy of each is made of; CacheViews how the job saw them.
	Caches     []cacheSpec `json:"caches,omitempty"`
	CacheViews []CacheView `json:"cache_views,omitempty"`
	// JobRoot is the job directory; JobAt, when set, where the view shows
	// it (Command.JobAt).
	JobRoot   string `json:"job_root"`
	JobAt     string `json:"job_at,omitempty"`
	NoNetwork bool   `json:"no_network"`
	NetNS     bool   `json:"netns"`
	PIDNS     bool   `json:"pidns"`
	// Proc is what the helper made of /proc, for the second stage to
	// report: "pid-namespace" or "subreaper"; View whether the job's
	// filesystem view was built.
	Proc    string   `json:"proc,omitempty"`
	View    bool     `json:"view,omitempty"`
	Missing []string `json:"missing,omitempty"`
	Limits  Limits   `json:"limits"`
	Strict  bool     `json:"strict"`

	// execFile is the supervisor's descriptor of the program, passed as
	// the helper's ExecFD.
	execFile *os.File
}

// cacheSpec is one shared cache: the host's directory, and the upper and
// work directories of the job's overlay on it.
type cacheSpec struct {
	Path  string `json:"path"`
	Upper string `json:"upper"`
	Work  string `json:"work"`
}

// helperStatus is one line on the status pipe.
type helperStatus struct {
	// Stage is "ready" (the program is about to be executed, Enforced
	// says how), "failed" (it never ran: Cause and Detail say why) or
	// "end"; a lane's helper says "took" with the job's Seq before it
	// does anything of a job.
	Stage    string    `json:"stage"`
	Seq      int       `json:"seq,omitempty"`
	Enforced *Enforced `json:"enforced,omitempty"`
	// Cause names a failed start: "unavailable" (strict, and the kernel
	// could not enforce something), "setup" (the wall could not be built),
	// "exec" (the program could not be started: Errno says why).
	Cause     string `json:"cause,omitempty"`
	Detail    string `json:"detail,omitempty"`
	Errno     int    `json:"errno,omitempty"`
	Exit      int    `json:"exit"`
	Signal    string `json:"signal,omitempty"`
	Survivors int    `json:"survivors"`
}

func sendStatus(s helperStatus) {
	b, _ := json.Marshal(s)
	_, _ = unix.Write(statusFD, append(b, '\n'))
}

// HelperMain runs the helper or its second stage, as os.Args says, and
// returns the exit code. The helper reads its spec, makes a private /proc
// when it is the init of a new pid namespace, starts the second stage, and
// stays as the job's reaper until everything the job started is gone.
func HelperMain() int {
	if len(os.Args) > 1 && os.Args[1] == execVerb {
		return execMain()
	}
	if len(os.Args) > 1 && os.Args[1] == laneVerb {
		return laneMain()
	}
	// The second stage's parent-death signal is tied to the thread that
	// forks it: that thread is never given back.
	runtime.LockOSThread()
	// Non-blocking, so that os.NewFile gives a file the runtime's poller
	// reads: the reader of the supervisor's requests below then holds no
	// thread of its own while it waits (one clone fewer per run).
	_ = unix.SetNonblock(specFD, true)
	specs := os.NewFile(specFD, "spec")
	dec := json.NewDecoder(specs)
	spec, err := decodeSpec(dec)
	if err != nil {
		sendStatus(helperStatus{Stage: "failed", Cause: "setup", Detail: err.Error()})
		return 3
	}
	// The rest of the spec pipe is the supervisor's requests; nothing the
	// helper starts inherits it.
	unix.CloseOnExec(specFD)
	controls := make(chan helperControl, 16)
	go func() {
		for {
			var c helperControl
			if dec.Decode(&c) != nil {
				return
			}
			controls <- c
		}
	}()
	// Signals first: as a subreaper the default TERM would kill the
	// helper and orphan the job.
	sigs := make(chan os.Signal, 64)
	signal.Notify(sigs, unix.SIGCHLD, unix.SIGTERM, unix.SIGUSR1, unix.SIGINT, unix.SIGHUP)
	// The job's processes come back to this helper when their parents die.
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		sendStatus(helperStatus{Stage: "failed", Cause: "setup", Detail: "prctl(PR_SET_CHILD_SUBREAPER): " + err.Error()})
		return 3
	}
	spec.Proc = "subreaper"
	if spec.PIDNS {
		if err := makeView(spec); err != nil {
			spec.CacheViews = nil
			if spec.Strict {
				sendStatus(helperStatus{Stage: "failed", Cause: "unavailable", Detail: "filesystem view: " + err.Error()})
				return 3
			}
			spec.Missing = append(spec.Missing, "filesystem view: "+err.Error())
		} else {
			spec.Proc, spec.View = "pid-namespace", true
			spec.relocate()
		}
	} else {
		spec.Missing = append(spec.Missing,
			"filesystem view: no mount namespace (the job sees the host's whole tree; chmod, chown and utimes on files its user owns are not walled)",
			"pid namespace (the job sees every process of the host in /proc)")
	}
	spec.placeCaches()
	if spec.ExecFD {
		if err := checkExecFD(spec); err != nil {
			sendStatus(helperStatus{Stage: "failed", Cause: "setup", Detail: err.Error()})
			return 3
		}
	}
	var pid int
	if secondStage(spec.Limits) {
		pid, err = startSecondStage(spec)
	} else {
		pid, err = startProgram(spec)
	}
	if err != nil {
		return 3 // the failure is reported
	}
	sendStatus(reap(pid, 0, sigs, controls))
	return 0
}

// secondStageBelow is the address-space limit under which the program is
// started by a second stage: the helper lives on under the limits it sets,
// and a Go program needs room to grow (it reserves about a gigabyte of
// address space at start).
const secondStageBelow = 8 << 30

func secondStage(l Limits) bool {
	return l.AddressSpace != Unlimited && l.AddressSpace < secondStageBelow
}

// startProgram builds the wall around the helper's own thread, sets the
// limits, and forks the program from that thread, which it inherits all
// of. One Go start fewer than a second stage.
func startProgram(spec *helperSpec) (int, error) {
	enf, err := buildWall(spec)
	if err != nil {
		reportBuildFailure(err, enf)
		return 0, err
	}
	if err := setLimits(spec.Limits, true); err != nil {
		sendStatus(helperStatus{Stage: "failed", Cause: "setup", Detail: err.Error(), Enforced: enf})
		return 0, err
	}
	files := []uintptr{0, 1, 2}
	if spec.ExecFD {
		// Kept on its number, not close-on-exec: a #! script's
		// interpreter opens it by name.
		files = append(files, noFD, noFD, ExecFD)
	}
	pid, err := syscall.ForkExec(spec.Program, spec.Args, &syscall.ProcAttr{
		Dir: spec.Dir, Env: spec.Env, Files: files,
		Sys: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		errno, _ := err.(syscall.Errno)
		sendStatus(helperStatus{Stage: "failed", Cause: "exec", Errno: int(errno),
			Detail: fmt.Sprintf("%s: %v", spec.Program, err), Enforced: enf})
		return 0, err
	}
	sendStatus(helperStatus{Stage: "ready", Enforced: enf})
	return pid, nil
}

// startSecondStage starts this binary again as the second stage, which
// restricts itself and replaces itself with the program.
func startSecondStage(spec *helperSpec) (int, error) {
	specR, specW, err := os.Pipe()
	if err != nil {
		sendStatus(helperStatus{Stage: "failed", Cause: "setup", Detail: err.Error()})
		return 0, err
	}
	go func() {
		_ = json.NewEncoder(specW).Encode(spec)
		specW.Close()
	}()
	files := []uintptr{0, 1, 2, specR.Fd(), statusFD}
	if spec.ExecFD {
		files = append(files, ExecFD)
	}
	pid, err := syscall.ForkExec("/proc/self/exe", []string{os.Args[0], execVerb}, &syscall.ProcAttr{
		Dir: "/", Env: helperEnv, Files: files,
		Sys: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
	})
	specR.Close()
	if err != nil {
		sendStatus(helperStatus{Stage: "failed", Cause: "setup", Detail: "start the second stage: " + err.Error()})
	}
	return pid, err
}

func reportBuildFailure(err error, enf *Enforced) {
	var u *unavailableError
	if errors.As(err, &u) {
		sendStatus(helperStatus{Stage: "failed", Cause: "unavailable", Detail: u.what, Enforced: enf})
	} else {
		sendStatus(helperStatus{Stage: "failed", Cause: "setup", Detail: err.Error(), Enforced: enf})
	}
}

// execMain is the second stage: it builds the wall around its own thread
// (resource limits, descriptor hygiene, an empty capability bounding set,
// no new privileges, Landlock, seccomp) and replaces itself with the
// program, which inherits all of it. Limits are set here, just before the
// exec, because they bind the whole process: a helper that lived on under
// an address-space limit could not grow.
func execMain() int {
	runtime.LockOSThread()
	spec, err := readSpec()
	if err != nil {
		sendStatus(helperStatus{Stage: "failed", Cause: "setup", Detail: err.Error()})
		return 3
	}
	enf, err := buildWall(spec)
	if err != nil {
		reportBuildFailure(err, enf)
		return 3
	}
	// This process is about to become the program; its directory is the
	// program's (the library itself never changes directory).
	if err := os.Chdir(spec.Dir); err != nil {
		errno, _ := errors.Unwrap(err).(syscall.Errno)
		sendStatus(helperStatus{Stage: "failed", Cause: "exec", Errno: int(errno), Detail: err.Error(), Enforced: enf})
		return 127
	}
	if spec.ExecFD {
		// buildWall made it close-on-exec with the rest; a #! script's
		// interpreter opens it by name.
		if _, err := unix.FcntlInt(ExecFD, unix.F_SETFD, 0); err != nil {
			sendStatus(helperStatus{Stage: "failed", Cause: "setup", Detail: "keep the program's descriptor: " + err.Error(), Enforced: enf})
			return 3
		}
	}
	// Under the address-space limit the runtime may be unable to map
	// memory or start a thread (1 GiB holds little more than a cgo
	// binary's thread stacks), and a Go program that cannot do either
	// aborts. So everything the exec and its failure report need is made
	// first, every other limit is set (a refused one is reported here,
	// with room to report it), and the address-space limit is set last by
	// limitAndExec, which runs no code the runtime could stop at.
	ready, _ := json.Marshal(helperStatus{Stage: "ready", Enforced: enf})
	ready = append(ready, '\n')
	ex, err := prepareExec(spec, enf)
	if err != nil {
		sendStatus(helperStatus{Stage: "failed", Cause: "exec", Errno: int(errnoOf(err)), Detail: fmt.Sprintf("%s: %v", spec.Program, err), Enforced: enf})
		return 127
	}
	if err := setLimits(spec.Limits, false); err != nil {
		sendStatus(helperStatus{Stage: "failed", Cause: "setup", Detail: err.Error(), Enforced: enf})
		return 3
	}
	as := rlimit(spec.Limits.AddressSpace)
	errno := limitAndExec(&as, ready, ex)
	// Only a refused limit comes back: nothing was limited.
	sendStatus(helperStatus{Stage: "failed", Cause: "setup", Detail: fmt.Sprintf("setrlimit(%d, %d): %v", unix.RLIMIT_AS, as.Cur, errno), Enforced: enf})
	return 3
}

// limitAndExec sets the address-space limit, says the program is ready,
// and executes it; if the exec fails it reports why and exits 127. It
// returns only when the limit was refused. It is nosplit and makes only
// raw system calls, so it has no point where the runtime could preempt
// it, hand its processor to another thread, or start one, all of which
// may need memory the limit leaves none of (norace: nor a call into the
// race detector's runtime, in a race-built binary).
//
//go:nosplit
//go:norace
func limitAndExec(as *syscall.Rlimit, ready []byte, p *preparedExec) syscall.Errno {
	if _, _, e := syscall.RawSyscall6(unix.SYS_PRLIMIT64, 0, unix.RLIMIT_AS, uintptr(unsafe.Pointer(as)), 0, 0, 0); e != 0 {
		return e
	}
	syscall.RawSyscall(unix.SYS_WRITE, statusFD, uintptr(unsafe.Pointer(&ready[0])), uintptr(len(ready)))
	_, _, e := syscall.RawSyscall(unix.SYS_EXECVE,
		uintptr(unsafe.Pointer(p.path)), uintptr(unsafe.Pointer(&p.argv[0])), uintptr(unsafe.Pointer(&p.envv[0])))
	line := p.failure(e)
	syscall.RawSyscall(unix.SYS_WRITE, statusFD, uintptr(unsafe.Pointer(&line[0])), uintptr(len(line)))
	syscall.RawSyscall(unix.SYS_EXIT_GROUP, 127, 0, 0)
	return 0 // not reached
}

// preparedExec is an execve made ready before the limits: the pointers it
// passes, and room for the line that reports its failure.
type preparedExec struct {
	path       *byte
	argv, envv []*byte
	// fail is the failure line up to the errno's message, inside the
	// detail's quotes; line has room for all of it.
	fail     []byte
	line     []byte
	messages []string
}

func prepareExec(spec *helperSpec, enf *Enforced) (*preparedExec, error) {
	path, err := syscall.BytePtrFromString(spec.Program)
	if err != nil {
		return nil, err
	}
	argv, err := syscall.SlicePtrFromStrings(spec.Args)
	if err != nil {
		return nil, err
	}
	envv, err := syscall.SlicePtrFromStrings(spec.Env)
	if err != nil {
		return nil, err
	}
	enfJSON, _ := json.Marshal(enf)
	prefix, _ := json.Marshal(spec.Program + ": ")
	fail := append([]byte(`{"stage":"failed","cause":"exec","enforced":`), enfJSON...)
	fail = append(fail, `,"detail":`...)
	fail = append(fail, prefix[:len(prefix)-1]...) // open: the message follows
	return &preparedExec{path: path, argv: argv, envv: envv, fail: fail, line: make([]byte, 0, len(fail)+512), messages: errnoMessages()}, nil
}

// failure is the status line of a failed exec, made in the room
// prepareExec left, with no call the runtime could preempt.
//
//go:nosplit
//go:norace
func (p *preparedExec) failure(errno syscall.Errno) []byte {
	b := append(p.line[:0], p.fail...)
	msg := "errno" // the number is in the errno field
	if m := p.messages; int(errno) < len(m) && m[errno] != "" {
		msg = m[errno]
	}
	for i := 0; i < len(msg) && len(b) < cap(b)-64; i++ {
		if c := msg[i]; c >= 0x20 && c < 0x7f && c != '"' && c != '\\' {
			b = append(b, c)
		}
	}
	b = append(b, `","errno":`...)
	var digits [20]byte
	i, n := len(digits), uint64(errno)
	for {
		i--
		digits[i] = byte('0' + n%10)
		if n /= 10; n == 0 {
			break
		}
	}
	b = append(b, digits[i:]...)
	return append(b, `,"exit":0,"survivors":0}`+"\n"...)
}

// errnoMessages is the message of every errno the syscall package names,
// made before the limits (Error allocates for one it does not name).
func errnoMessages() []string {
	m := make([]string, 256)
	for e := range m {
		if msg := syscall.Errno(e).Error(); e > 0 && !strings.HasPrefix(msg, "errno ") {
			m[e] = msg
		}
	}
	return m
}

func errnoOf(err error) syscall.Errno {
	var errno syscall.Errno
	errors.As(err, &errno)
	return errno
}

// readSpec reads the spec on specFD and closes it.
func readSpec() (*helperSpec, error) {
	f := os.NewFile(specFD, "spec")
	defer f.Close()
	return decodeSpec(json.NewDecoder(bufio.NewReader(f)))
}

// decodeSpec reads one spec from dec, and nothing after it.
func decodeSpec(dec *json.Decoder) (*helperSpec, error) {
	var s helperSpec
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("read the wall's spec: %w", err)
	}
	if (s.Program == "" && !s.ExecFD) || len(s.Args) == 0 || s.Dir == "" {
		return nil, errors.New("the wall's spec names no program or directory")
	}
	return &s, nil
}

// checkExecFD makes sure ExecFD is open on a regular file (a rule on a
// directory would grant read and execute beneath it) and names the
// program by it: /dev/fd/<ExecFD>, which a #! script's interpreter is
// handed as the script's path, where /dev/fd exists (the view has it),
// else /proc/self/fd/<ExecFD>.
func checkExecFD(s *helperSpec) error {
	var st unix.Stat_t
	if err := unix.Fstat(ExecFD, &st); err != nil {
		return fmt.Errorf("the program's descriptor: %w", err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return fmt.Errorf("the program's descriptor is not open on a regular file (mode %o)", st.Mode)
	}
	s.Program = execFDName("/dev/fd/")
	if _, err := os.Stat(s.Program); err != nil {
		s.Program = execFDName("/proc/self/fd/")
	}
	return nil
}

// execFDName names ExecFD in dir, /dev/fd/ or /proc/self/fd/.
func execFDName(dir string) string { return dir + strconv.Itoa(ExecFD) }

type unavailableError struct{ what string }

func (u *unavailableError) Error() string { return u.what }

// buildWall restricts the calling thread. What it could not enforce is
// listed in Enforced.Missing; under Strict anything missing is an error
// and the program is not started.
func buildWall(s *helperSpec) (*Enforced, error) {
	enf := &Enforced{Filesystem: "none", Processes: s.Proc, View: s.View, Network: []string{"open"}}
	missing := append([]string{}, s.Missing...)
	// Nothing open here reaches the program but 0, 1 and 2 (the status
	// pipe closes at the exec), and ExecFD, which the start keeps open.
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		return enf, fmt.Errorf("close_range: %w", err)
	}
	enf.Capabilities = dropCapabilities()
	if !enf.Capabilities && os.Geteuid() == 0 {
		missing = append(missing, "capabilities: the bounding, ambient and inheritable sets could not all be emptied")
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return enf, fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	enf.NoNewPrivs = true

	abi, _ := ll.LandlockGetABIVersion()
	if abi >= minLandlockABI {
		fd, flags, eff, err := landlockRuleset(s, abi)
		if err != nil {
			return enf, fmt.Errorf("landlock ruleset: %w", err)
		}
		if fd >= 0 {
			err := ll.LandlockRestrictSelf(fd, flags)
			unix.Close(fd)
			if err != nil {
				return enf, fmt.Errorf("landlock_restrict_self: %w", err)
			}
			enf.Filesystem, enf.ABI = "landlock", eff
			enf.Write, enf.Read = s.Write, s.Read
			enf.Signals = eff >= 6
		}
	}
	if enf.Filesystem != "landlock" {
		missing = append(missing, fmt.Sprintf("filesystem: Landlock ABI %d or newer (this kernel: %d)", minLandlockABI, max(abi, 0)))
	}
	if s.NoNetwork {
		enf.Network = nil
		if s.NetNS {
			enf.Network = append(enf.Network, "netns")
		}
	}
	switch err := installFilter(s.NoNetwork); {
	case err == nil:
		enf.Seccomp = true
		if s.NoNetwork {
			enf.Network = append(enf.Network, "seccomp")
		}
	case errors.Is(err, errNoSeccompArch):
		missing = append(missing, "system calls: no seccomp filter for this architecture (keyrings, user namespaces and io_uring stay open)")
	default:
		return enf, fmt.Errorf("seccomp: %w", err)
	}
	if s.NoNetwork {
		if enf.Filesystem == "landlock" && enf.ABI >= 4 {
			enf.Network = append(enf.Network, "landlock-tcp")
		}
		if !enf.Seccomp && !s.NetNS {
			missing = append(missing, "network: neither a network namespace nor seccomp (Landlock alone lets UDP and MPTCP through)")
		}
	}
	if s.ExecFD {
		enf.Launch = "descriptor"
	}
	enf.Caches = s.CacheViews
	enf.Limits = s.Limits
	enf.Missing = missing
	if s.Strict {
		for _, m := range missing {
			// A private /proc and the process view are defence in depth
			// where the kernel allows them; strict asks for the walls.
			if strings.HasPrefix(m, "filesystem") || strings.HasPrefix(m, "network") {
				return enf, &unavailableError{m}
			}
		}
	}
	return enf, nil
}

// minLandlockABI is the oldest Landlock the wall counts as a filesystem
// wall: before ABI 3, truncate(2) is not handled, so a job could empty any
// file its user may write.
const minLandlockABI = 3

// landlockRuleset builds the job's ruleset with go-landlock, for the
// kernel's ABI (capped at what the library knows). It returns -1 when
// nothing would be restricted.
func landlockRuleset(s *helperSpec, abi int) (int, uint32, int, error) {
	cfg := landlock.V11
	eff := min(abi, 11)
	if !s.NoNetwork {
		cfg.HandledAccessNet = 0
	}
	rules := []landlock.Rule{
		landlock.RODirs(s.Read...).IgnoreIfMissing(),
		landlock.RWDirs(s.Write...).WithRefer(),
		landlock.RWFiles(s.DevRW...).IgnoreIfMissing(),
		landlock.ROFiles(s.DevRO...).IgnoreIfMissing(),
	}
	if s.ExecFD {
		// That one file, named through its descriptor: nothing else of
		// its directory.
		rules = append(rules, landlock.ROFiles(execFDName("/proc/self/fd/")))
	}
	fd, flags, err := cfg.BestEffort().NewRulesetFD(rules...)
	return fd, flags, eff, err
}

// dropCapabilities empties the calling thread's capability bounding set,
// ambient and inheritable sets, and locks SECBIT_NOROOT, so that the
// program, even as root, holds no capability after exec (and cannot, for
// one, read /proc/<other>/environ). It reports whether a read-back shows
// all three sets empty.
func dropCapabilities() bool {
	last := 63
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			last = n
		}
	}
	for c := 0; c <= last; c++ {
		_ = unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
	}
	_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	data[0].Inheritable, data[1].Inheritable = 0, 0
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return false
	}
	if unix.Prctl(unix.PR_SET_SECUREBITS, secbitNoRoot|secbitNoRootLocked, 0, 0, 0) != nil && os.Geteuid() == 0 {
		return false
	}
	if err := unix.Capget(&hdr, &data[0]); err != nil || data[0].Inheritable != 0 || data[1].Inheritable != 0 {
		return false
	}
	for c := 0; c <= last; c++ {
		if in, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0); err != nil || in != 0 {
			return false
		}
		if in, err := unix.PrctlRetInt(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_IS_SET, uintptr(c), 0, 0); err == nil && in != 0 {
			return false
		}
	}
	return true
}

// Securebits (linux/securebits.h): exec by uid 0 grants no capability,
// and that cannot be undone.
const (
	secbitNoRoot       = 1 << 0
	secbitNoRootLocked = 1 << 1
)

// setLimits sets the job's resource limits on the helper, which the
// program inherits. syscall.Setrlimit, not unix's, so that Go's runtime
// forgets the RLIMIT_NOFILE it raised at start-up instead of restoring it
// in the child.
func setLimits(l Limits, addressSpace bool) error {
	limits := []struct {
		res int
		v   uint64
	}{
		{unix.RLIMIT_CPU, l.CPUSeconds}, {unix.RLIMIT_NOFILE, l.OpenFiles},
		{unix.RLIMIT_FSIZE, l.FileSize}, {unix.RLIMIT_NPROC, l.Processes},
		// No core dumps: a core_pattern that pipes to a helper would hand
		// it a file the job made.
		{unix.RLIMIT_CORE, 0},
	}
	if addressSpace {
		// Last: under it the runtime may have no room to report a
		// refusal of the others.
		limits = append(limits, struct {
			res int
			v   uint64
		}{unix.RLIMIT_AS, l.AddressSpace})
	}
	for _, r := range limits {
		lim := rlimit(r.v)
		if r.res == unix.RLIMIT_CORE {
			lim = syscall.Rlimit{}
		}
		if err := syscall.Setrlimit(r.res, &lim); err != nil {
			return fmt.Errorf("setrlimit(%d, %d): %w", r.res, lim.Cur, err)
		}
	}
	return nil
}

// rlimit is the soft and hard limit v (Unlimited: none).
func rlimit(v uint64) syscall.Rlimit {
	if v == Unlimited {
		v = unix.RLIM_INFINITY
	}
	return syscall.Rlimit{Cur: v, Max: v}
}

// reap waits for the program, forwards the supervisor's TERM (with a CONT,
// for a stopped job) and the signals it asks for on the control pipe for
// job seq to every process of the job, kills them all on USR1, and once
// the program has ended kills and reaps whatever it left. It returns the
// end to report.
func reap(pid, seq int, sigs <-chan os.Signal, controls <-chan helperControl) helperStatus {
	end := helperStatus{Stage: "end", Exit: -1}
	for {
		var sig os.Signal
		select {
		case c := <-controls:
			if c.Signal > 0 && c.Seq == seq {
				signalJob(unix.Signal(c.Signal))
			}
			continue
		case sig = <-sigs:
		}
		switch sig {
		case unix.SIGTERM, unix.SIGINT, unix.SIGHUP:
			signalJob(unix.SIGTERM)
			signalJob(unix.SIGCONT)
			continue
		case unix.SIGUSR1:
			// The program's status, if it is reaped now: the KILL, or
			// its own end just before.
			seen := false
			end.Survivors = finish(func(p int, ws unix.WaitStatus) {
				if p == pid && !seen {
					// Once: a later process may be given the pid again.
					seen = true
					end.setStatus(ws)
				}
			})
			return end
		}
		for {
			var ws unix.WaitStatus
			p, err := unix.Wait4(-1, &ws, unix.WNOHANG|unix.WALL, nil)
			if p <= 0 || err != nil {
				break
			}
			if p == pid {
				end.setStatus(ws)
				end.Survivors = finish(nil)
				return end
			}
		}
	}
}

// setStatus records how the program ended.
func (s *helperStatus) setStatus(ws unix.WaitStatus) {
	switch {
	case ws.Exited():
		s.Exit = ws.ExitStatus()
	case ws.Signaled():
		s.Signal = signalName(ws.Signal())
	}
}

// finish kills every process of the job and reaps them. The helper is
// the job's init or its subreaper, so every process of the job is its
// descendant and comes back to it when its parent dies: once wait4 says
// there are no children left (ECHILD), nothing of the job is alive.
// __WALL, because without it wait4 neither reaps nor counts a child made
// by clone with an exit signal other than SIGCHLD, and says ECHILD while
// one is alive. It
// returns how many are still alive after a bounded effort (expected 0),
// and tells reaped, when not nil, of each process it reaps.
func finish(reaped func(pid int, ws unix.WaitStatus)) int {
	deadline := time.Now().Add(finishBound)
	for {
		signalJob(unix.SIGKILL)
		for {
			var ws unix.WaitStatus
			p, err := unix.Wait4(-1, &ws, unix.WNOHANG|unix.WALL, nil)
			if errors.Is(err, unix.ECHILD) {
				return 0
			}
			if p <= 0 || err != nil {
				break
			}
			if reaped != nil {
				reaped(p, ws)
			}
		}
		if time.Now().After(deadline) {
			return max(1, len(descendants(procSelf())))
		}
		time.Sleep(time.Millisecond)
	}
}

// signalJob sends sig to every process of the job: all of the namespace
// when the helper is its init, else every descendant it can find.
func signalJob(sig unix.Signal) {
	if os.Getpid() == 1 {
		_ = unix.Kill(-1, sig)
		return
	}
	for _, p := range descendants(procSelf()) {
		_ = unix.Kill(p, sig)
	}
}

// procSelf is the helper's pid as /proc names it (which differs from
// getpid when /proc belongs to another pid namespace).
func procSelf() int {
	s, err := os.Readlink("/proc/self")
	if err != nil {
		return os.Getpid()
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return os.Getpid()
	}
	return n
}

// descendants lists the processes below root, read from /proc (zombies
// not yet reaped included, as they are still to be reaped).
func descendants(root int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, ok := parentOf(pid); ok {
			children[ppid] = append(children[ppid], pid)
		}
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

func parentOf(pid int) (int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}

func signalName(s syscall.Signal) string {
	if n := unix.SignalName(s); n != "" {
		return n
	}
	return s.String()
}
