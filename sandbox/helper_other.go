//go:build !linux

package sandbox

import (
	"fmt"
	"os"
)

// HelperMain is the wall's helper, which exists on Linux only: no wall
// here starts one, so a binary asked to be it says so and fails.
func HelperMain() int {
	fmt.Fprintln(os.Stderr, "nwdes: the wall's helper runs on Linux only")
	return 3
}
