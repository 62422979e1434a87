package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// pathName is one name met while a path was resolved: a symbolic link and
// its target, or, with no target, a name that could not be read.
type pathName struct{ path, target string }

// unchanged reports whether the name is still what it was: the same link
// to the same target, or still not readable. One readlink or lstat.
func (n pathName) unchanged() bool {
	if n.target == "" {
		_, err := os.Lstat(n.path)
		return err != nil
	}
	t, err := os.Readlink(n.path)
	return err == nil && t == n.target
}

// maxLinks bounds the links one resolution follows, as the kernel's 40
// and EvalSymlinks's 255 do.
const maxLinks = 255

// resolve is filepath.EvalSymlinks of an absolute, clean path, adding to
// seen each link it follows and the name it could not read, if any: what
// its result depends on, but for a directory on the way that becomes a
// link (seen only when resolved again in full).
func resolve(p string, seen *[]pathName) (string, error) {
	done, rest, links := "/", p, 0
	for {
		rest = strings.TrimLeft(rest, "/")
		if rest == "" {
			return done, nil
		}
		var name string
		name, rest, _ = strings.Cut(rest, "/")
		switch name {
		case ".":
			continue
		case "..":
			done = filepath.Dir(done)
			continue
		}
		next := filepath.Join(done, name)
		fi, err := os.Lstat(next)
		if err != nil {
			*seen = append(*seen, pathName{path: next})
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			if !fi.IsDir() && strings.Trim(rest, "/") != "" {
				// As the kernel and EvalSymlinks: a file is no
				// directory to go on through (file/../a included).
				// "file/" cannot be read while it stays a file.
				*seen = append(*seen, pathName{path: next + "/"})
				return "", &fs.PathError{Op: "resolve", Path: p, Err: unix.ENOTDIR}
			}
			done = next
			continue
		}
		if links++; links > maxLinks {
			return "", &fs.PathError{Op: "resolve", Path: p, Err: unix.ELOOP}
		}
		target, err := os.Readlink(next)
		if err != nil {
			*seen = append(*seen, pathName{path: next})
			return "", err
		}
		*seen = append(*seen, pathName{path: next, target: target})
		if filepath.IsAbs(target) {
			done = "/"
		}
		rest = target + "/" + rest
	}
}
