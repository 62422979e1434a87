//go:build unix

package trace

import "syscall"

// noFollow keeps WriteOut from opening a file through a symbolic link.
const noFollow = syscall.O_NOFOLLOW
