//go:build !linux

package workspace

import (
	"errors"
	"os"
)

// errNoDescriptorWalk is the system error a refusal on this platform wraps.
var errNoDescriptorWalk = errors.New("no descriptor-relative no-follow open on this platform")

// OpenDeclared refuses every declared path on this platform, as
// OpenDeclaredAt does; it opens nothing.
func OpenDeclared(root, path, build string) (*Opened, error) {
	return nil, walkError(CauseNoDescriptorWalk, path, path, build, errNoDescriptorWalk)
}

// OpenDeclaredAt refuses every declared path on this platform: it cannot
// open names relative to a directory descriptor without following links
// (O_PATH), so it never checks a path by name to run it by name.
func OpenDeclaredAt(root *os.File, path, build string) (*Opened, error) {
	return nil, walkError(CauseNoDescriptorWalk, path, path, build, errNoDescriptorWalk)
}
