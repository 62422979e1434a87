//go:build unix

package odb

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps the size bytes of f read-only and private.
func mapFile(f *os.File, size int64) ([]byte, error) {
	if size <= 0 || int64(int(size)) != size {
		return nil, errors.New("size cannot be mapped")
	}
	return unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_PRIVATE)
}

func unmapFile(b []byte) error { return unix.Munmap(b) }
