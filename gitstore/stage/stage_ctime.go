//go:build unix && !(darwin || freebsd || netbsd)

package stage

import (
	"syscall"
	"time"
)

// statCtime is the inode's change time, which git's index keeps as ctime.
func statCtime(st *syscall.Stat_t) time.Time {
	return time.Unix(int64(st.Ctim.Sec), int64(st.Ctim.Nsec))
}
