//go:build linux

package trial

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// readProcStat reads /proc/<pid>/stat under proc; errGone when no process
// has the pid (a process that exits while its file is read is gone too).
func readProcStat(proc string, pid int) (procStat, error) {
	b, err := os.ReadFile(filepath.Join(proc, strconv.Itoa(pid), "stat"))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ESRCH) {
		return procStat{}, errGone
	}
	if err != nil {
		return procStat{}, err
	}
	return parseStat(b)
}

// callerSession is the session of the process taking the readings.
func callerSession() (int, error) {
	sid, err := unix.Getsid(0)
	if err != nil {
		return 0, fmt.Errorf("getsid: %w", err)
	}
	return sid, nil
}

// bootID is this boot's id, as procfs under proc has it.
func bootID(proc string) (string, error) {
	b, err := os.ReadFile(filepath.Join(proc, "sys", "kernel", "random", "boot_id"))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// fileIdentity is path's device and inode, following symbolic links: the
// directory a store opened at path reads.
func fileIdentity(path string) (fileID, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return fileID{}, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	return fileID{dev: uint64(st.Dev), ino: st.Ino}, nil
}
