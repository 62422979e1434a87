package swarm

import (
	"os"

	"golang.org/x/sys/unix"
)

// renameNoReplace renames from to to, refusing when to exists, in one
// step (renameat2 RENAME_NOREPLACE).
func renameNoReplace(from, to string) error {
	return unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE)
}

// renameNoReplaceAt renames from to name in the directory dir, refusing
// when name exists there.
func renameNoReplaceAt(from string, dir *os.File, name string) error {
	return unix.Renameat2(unix.AT_FDCWD, from, int(dir.Fd()), name, unix.RENAME_NOREPLACE)
}
