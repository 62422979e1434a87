package cli_test

import "syscall"

// daemonAttr puts the test's git daemon in a process group of its own and
// kills it when the test process dies, even by SIGKILL.
func daemonAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
