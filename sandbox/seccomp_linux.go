package sandbox

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// errNoSeccompArch: the wall has no filter for this architecture.
var errNoSeccompArch = errors.New("no seccomp filter for this architecture")

// Seccomp return values (linux/seccomp.h).
const (
	seccompRetAllow = 0x7fff0000
	seccompRetErrno = 0x00050000
)

// Offsets in struct seccomp_data: nr, arch, then args[0] (little endian:
// its low 32 bits first).
const (
	seccompNr   = 0
	seccompArch = 4
	seccompArg0 = 16
)

// filter is the system-call wall every job gets:
//
//   - every system call of another ABI (i386 through int 0x80, x32) is
//     refused, since the numbers checked below are the native ones;
//   - the kernel keyrings (keyctl, add_key, request_key) are refused: they
//     are shared with the user outside the wall and outlive the job;
//   - new user namespaces are refused (unshare or clone with
//     CLONE_NEWUSER), and clone3, whose flags a filter cannot read, says
//     ENOSYS so that the C library falls back to clone;
//   - io_uring is refused: it reaches files and sockets without the
//     system calls checked here;
//   - prlimit64 on another process than the caller (pid not 0) is
//     refused: the kernel lets a process set the limits of any other of
//     its user, and a lane's job could lower those of the helper it
//     shares with the next (the C library's getrlimit and setrlimit, and
//     so ulimit, pass 0);
//   - with noNetwork, socket(2) is allowed for AF_UNIX only, so no TCP,
//     UDP, MPTCP, raw, netlink or packet socket can be made (refused with
//     EACCES, as Landlock refuses).
func filter(noNetwork bool) ([]bpf.RawInstruction, error) {
	if nativeAudit == 0 {
		return nil, errNoSeccompArch
	}
	var p program
	eperm := seccompRetErrno | uint32(unix.EPERM)
	eacces := seccompRetErrno | uint32(unix.EACCES)
	p.load(seccompArch)
	p.jumpIf(nativeAudit, "native")
	p.ret(eperm)
	p.label("native")
	p.load(seccompNr)
	p.add(bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: x32Bit}, "eperm")
	for _, nr := range []uint32{unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
		unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER} {
		p.jumpIf(nr, "eperm")
	}
	p.jumpIf(unix.SYS_CLONE3, "enosys")
	p.jumpIf(unix.SYS_UNSHARE, "flags")
	p.jumpIf(unix.SYS_CLONE, "flags")
	p.jumpIf(unix.SYS_PRLIMIT64, "prlimit")
	if noNetwork {
		p.jumpIf(unix.SYS_SOCKET, "socket")
	}
	p.ret(seccompRetAllow)
	p.label("flags")
	p.load(seccompArg0)
	p.add(bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: unix.CLONE_NEWUSER}, "eperm")
	p.ret(seccompRetAllow)
	p.label("prlimit")
	// The pid is an int: the kernel reads the low 32 bits only.
	p.load(seccompArg0)
	p.jumpIf(0, "allow")
	p.ret(eperm)
	p.label("socket")
	p.load(seccompArg0)
	p.jumpIf(unix.AF_UNIX, "allow")
	p.ret(eacces)
	p.label("allow")
	p.ret(seccompRetAllow)
	p.label("eperm")
	p.ret(eperm)
	p.label("enosys")
	p.ret(seccompRetErrno | uint32(unix.ENOSYS))
	return p.assemble()
}

// program is a classic BPF program with jumps to labels, resolved at the
// end, so that no offset is counted by hand.
type program struct {
	ins    []bpf.Instruction
	jumps  map[int]string // instruction index -> label jumped to when true
	labels map[string]int
}

func (p *program) add(i bpf.Instruction, to string) {
	if to != "" {
		if p.jumps == nil {
			p.jumps = map[int]string{}
		}
		p.jumps[len(p.ins)] = to
	}
	p.ins = append(p.ins, i)
}

func (p *program) load(off uint32) { p.add(bpf.LoadAbsolute{Off: off, Size: 4}, "") }
func (p *program) ret(v uint32)    { p.add(bpf.RetConstant{Val: v}, "") }
func (p *program) label(l string) {
	if p.labels == nil {
		p.labels = map[string]int{}
	}
	p.labels[l] = len(p.ins)
}
func (p *program) jumpIf(v uint32, to string) {
	p.add(bpf.JumpIf{Cond: bpf.JumpEqual, Val: v}, to)
}

func (p *program) assemble() ([]bpf.RawInstruction, error) {
	for at, l := range p.jumps {
		target, ok := p.labels[l]
		if !ok || target <= at || target-at-1 > 255 {
			return nil, fmt.Errorf("seccomp filter: bad jump to %q", l)
		}
		j := p.ins[at].(bpf.JumpIf)
		j.SkipTrue = uint8(target - at - 1)
		p.ins[at] = j
	}
	return bpf.Assemble(p.ins)
}

// installFilter installs the filter on the calling thread (no TSYNC: the
// program is forked or executed from this thread and inherits it).
// no_new_privs must already be set.
func installFilter(noNetwork bool) error {
	raw, err := filter(noNetwork)
	if err != nil {
		return err
	}
	f := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		f[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	prog := unix.SockFprog{Len: uint16(len(f)), Filter: &f[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&prog)), 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_SECCOMP): %w", err)
	}
	return nil
}
