//go:build !linux

package swarm

import (
	"errors"
	"os"
)

// renameNoReplace has no one-step form here that this package relies on,
// so no spare is taken: staging makes the job's directories itself, as it
// does when no spare is ready. (The wall, and so the swarm, runs jobs on
// Linux only; elsewhere the package builds and refuses to run them.)
func renameNoReplace(from, to string) error {
	return errors.New("no rename without replace on this platform")
}

// renameNoReplaceAt: none here either (see renameNoReplace).
func renameNoReplaceAt(from string, dir *os.File, name string) error {
	return errors.New("no rename without replace on this platform")
}
