//go:build darwin || freebsd || netbsd

package stage

import (
	"syscall"
	"time"
)

func statCtime(st *syscall.Stat_t) time.Time {
	return time.Unix(int64(st.Ctimespec.Sec), int64(st.Ctimespec.Nsec))
}
