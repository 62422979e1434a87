package swarm

import "golang.org/x/sys/unix"

// renameNoReplace renames from to to, refusing when to exists, in one
// step (renameat2 RENAME_NOREPLACE).
func renameNoReplace(from, to string) error {
	return unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE)
}
