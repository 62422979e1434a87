//go:build unix

package boundedio

import (
	"os"
	"syscall"
)

// openNonblock opens path read-only with O_NONBLOCK: opening a FIFO with
// no writer returns at once instead of waiting for one (the descriptor is
// then refused as not a regular file). For a regular file the flag changes
// nothing.
func openNonblock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
}
