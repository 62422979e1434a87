package sandbox

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// errNoSeccompArch: the wall has no socket filter for this architecture.
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

// socketFilter is the network wall that Landlock alone is not: socket(2)
// is allowed for AF_UNIX only (so no TCP, UDP, MPTCP, raw, netlink or
// packet socket can be made), io_uring (which makes sockets without
// socket(2)) is refused, and so is every system call of another ABI (the
// i386 socketcall through int 0x80, x32), which would bypass the numbers
// checked here. Refusals are EACCES, as Landlock's are.
func socketFilter() ([]bpf.RawInstruction, error) {
	if nativeAudit == 0 {
		return nil, errNoSeccompArch
	}
	deny := bpf.RetConstant{Val: seccompRetErrno | uint32(unix.EACCES)}
	allow := bpf.RetConstant{Val: seccompRetAllow}
	prog := []bpf.Instruction{
		/* 0 */ bpf.LoadAbsolute{Off: seccompArch, Size: 4},
		/* 1 */ bpf.JumpIf{Cond: bpf.JumpEqual, Val: nativeAudit, SkipTrue: 1},
		/* 2 */ deny,
		/* 3 */ bpf.LoadAbsolute{Off: seccompNr, Size: 4},
		/* 4 */ bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: x32Bit, SkipTrue: 5},
		/* 5 */ bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.SYS_SOCKET, SkipTrue: 5},
		/* 6 */ bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.SYS_IO_URING_SETUP, SkipTrue: 3},
		/* 7 */ bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.SYS_IO_URING_ENTER, SkipTrue: 2},
		/* 8 */ bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.SYS_IO_URING_REGISTER, SkipTrue: 1},
		/* 9 */ allow,
		/* 10 */ deny,
		/* 11 */ bpf.LoadAbsolute{Off: seccompArg0, Size: 4},
		/* 12 */ bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.AF_UNIX, SkipFalse: 1},
		/* 13 */ allow,
		/* 14 */ deny,
	}
	return bpf.Assemble(prog)
}

// denySockets installs socketFilter on the calling thread (no TSYNC: the
// helper forks the program from this thread, and the filter is
// inherited). no_new_privs must already be set.
func denySockets() error {
	raw, err := socketFilter()
	if err != nil {
		return err
	}
	filter := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		filter[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&prog)), 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_SECCOMP): %w", err)
	}
	return nil
}
