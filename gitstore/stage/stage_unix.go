//go:build unix

package stage

import (
	"os"
	"syscall"
)

// fillStat copies what git's racy-clean check compares into an entry.
func fillStat(e *entry, fi os.FileInfo) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	e.dev, e.ino, e.uid, e.gid = uint32(st.Dev), uint32(st.Ino), st.Uid, st.Gid
	e.ctime = statCtime(st)
}
