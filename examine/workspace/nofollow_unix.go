//go:build unix

package workspace

import "syscall"

// syscallNoFollow makes an open refuse a symbolic link at the last name.
const syscallNoFollow = syscall.O_NOFOLLOW
