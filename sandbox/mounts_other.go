//go:build !linux

package sandbox

// MountsUnder cannot list mounts here: nothing is removed on a guess.
func MountsUnder(dir string) []string {
	return []string{dir + " (mounts cannot be listed on this platform)"}
}
