//go:build unix

package workspace

import (
	"errors"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// linkError says a name on the path is a symbolic link.
type linkError struct{ name string }

func (e *linkError) Error() string { return e.name + " is a symbolic link" }

// openInPublic opens rel (slash-separated, clean, "" for root itself)
// beneath root one name at a time, each relative to the directory before
// it, following no symbolic link (O_NOFOLLOW: a link is ELOOP, reported as
// a linkError; a regular file on the way is ENOTDIR).
func openInPublic(root, rel string) (*os.File, error) {
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	if rel != "" {
		for _, name := range strings.Split(rel, "/") {
			next, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
			unix.Close(fd)
			if errors.Is(err, unix.ELOOP) {
				return nil, &linkError{name}
			}
			if err != nil {
				return nil, err
			}
			fd = next
		}
	}
	return os.NewFile(uintptr(fd), root+"/"+rel), nil
}
