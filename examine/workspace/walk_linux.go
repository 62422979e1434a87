//go:build linux

package workspace

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nwdes/nwdes/sandbox"
)

// OpenDeclared walks the declared path under the candidate checkout root,
// one name at a time relative to the directory before it, following no
// symbolic link, and returns the final file when it is a regular file with
// an executable bit on a file system that allows execution. Every other
// outcome is a *WalkError naming its Cause. build is the declaration's
// build text, for the remedies. The root itself is opened as given: it is
// nwdes' own checkout location, which may lie under a link such as macOS'
// /var.
func OpenDeclared(root, path, build string) (*Opened, error) {
	fd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		// The checkout's location stays out of the refusal, which the
		// examiner may see.
		return nil, walkError(CauseUnopenable, path, ".", build, fmt.Errorf("open the candidate's top level: %w", err))
	}
	dir := os.NewFile(uintptr(fd), root)
	defer dir.Close()
	return OpenDeclaredAt(dir, path, build)
}

// OpenDeclaredAt is OpenDeclared from an open descriptor of the
// candidate's top level, which it neither moves nor closes.
func OpenDeclaredAt(root *os.File, path, build string) (*Opened, error) {
	if pathProblem(path, "linux") != "" {
		return nil, walkError(CauseInvalidPath, path, path, build, nil)
	}
	names := strings.Split(path, "/")
	dirfd := int(root.Fd())
	closeDir := func() {}
	defer func() { closeDir() }()
	for i, name := range names {
		at := strings.Join(names[:i+1], "/")
		fd, err := openat(dirfd, name)
		if err != nil {
			return nil, openError(err, path, names, i, build)
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return nil, walkError(CauseUnopenable, path, at, build, err)
		}
		last := i == len(names)-1
		kind := st.Mode & unix.S_IFMT
		var cause Cause
		switch {
		case kind == unix.S_IFLNK && last:
			cause = CauseSymlink
		case kind == unix.S_IFLNK:
			cause = CauseSymlinkedDirectory
		case !last && kind != unix.S_IFDIR:
			cause = CauseNotADirectory
		case last && kind != unix.S_IFREG:
			cause = CauseNotARegularFile
		case last && st.Mode&0o111 == 0:
			cause = CauseNotExecutable
		}
		if cause != "" {
			unix.Close(fd)
			return nil, walkError(cause, path, at, build, nil)
		}
		if !last {
			closeDir()
			dirfd = fd
			closeDir = func() { unix.Close(fd) }
			continue
		}
		var fs unix.Statfs_t
		if err := unix.Fstatfs(fd, &fs); err != nil {
			unix.Close(fd)
			return nil, walkError(CauseUnopenable, path, at, build, err)
		}
		if fs.Flags&unix.ST_NOEXEC != 0 {
			unix.Close(fd)
			return nil, walkError(CauseNoexec, path, at, build, nil)
		}
		return &Opened{
			File: os.NewFile(uintptr(fd), path),
			Path: path,
			Identity: Identity{
				Dev:     st.Dev,
				Ino:     st.Ino,
				Size:    st.Size,
				ModTime: time.Unix(st.Mtim.Unix()),
			},
		}, nil
	}
	return nil, walkError(CauseInvalidPath, path, path, build, nil)
}

// openat opens one name without following it: the wall walks its write
// and read paths with the same call.
func openat(dirfd int, name string) (int, error) { return sandbox.OpenNoFollow(dirfd, name) }

// openError names the cause of a refused open of names[i].
func openError(err error, path string, names []string, i int, build string) error {
	at := strings.Join(names[:i+1], "/")
	switch {
	case errors.Is(err, unix.ENOENT):
		return walkError(CauseMissing, path, at, build, err)
	case errors.Is(err, unix.EACCES):
		dir := "."
		if i > 0 {
			dir = strings.Join(names[:i], "/")
		}
		return walkError(CauseNotSearchable, path, dir, build, err)
	case errors.Is(err, unix.ENAMETOOLONG):
		return walkError(CauseNameTooLong, path, names[i], build, err)
	}
	return walkError(CauseUnopenable, path, at, build, err)
}
