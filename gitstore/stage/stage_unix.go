//go:build unix

package stage

import (
	"os"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// fillStat copies what git's racy-clean check compares into an entry.
func fillStat(e *index.Entry, fi os.FileInfo) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	e.Dev, e.Inode, e.UID, e.GID = uint32(st.Dev), uint32(st.Ino), st.Uid, st.Gid
	e.CreatedAt = statCtime(st)
}
