package examine_test

import (
	"os"
	"testing"

	"github.com/nwdes/nwdes/sandbox"
)

// TestMain lets the test binary act as the wall's helper, which gate run
// starts by re-executing /proc/self/exe.
func TestMain(m *testing.M) {
	if sandbox.IsHelper(os.Args) {
		os.Exit(sandbox.HelperMain())
	}
	os.Exit(m.Run())
}
