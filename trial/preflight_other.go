//go:build !linux

package trial

import (
	"errors"
	"runtime"
)

// Without Linux's procfs nothing here reads a process or a directory's
// identity: the readings that need them answer unknown.
var errUnsupported = errors.New("not read on " + runtime.GOOS + ": this reading needs the /proc of Linux")

func readProcStat(string, int) (procStat, error) { return procStat{}, errUnsupported }

func callerSession() (int, error) { return 0, errUnsupported }

func bootID(string) (string, error) { return "", errUnsupported }

func fileIdentity(string) (fileID, error) { return fileID{}, errUnsupported }
