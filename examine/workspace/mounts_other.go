//go:build !linux

package workspace

// mountsUnder cannot list mounts here: nothing is removed on a guess.
func mountsUnder(dir string) []string {
	return []string{dir + " (mounts cannot be listed on this platform)"}
}
