//go:build !linux

package cli_test

import "syscall"

// daemonAttr puts the test's git daemon in a process group of its own
// (no parent-death signal outside Linux).
func daemonAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
