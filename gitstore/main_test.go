package gitstore_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/nwdes/nwdes/internal/gittest"
)

// childModeEnv, when set, turns the test binary into a helper process
// instead of running tests: the stress tests start several copies of it so
// that separate OS processes (not goroutines) contend for one ref, and the
// cold-process benchmark uses it as a fresh reader.
const childModeEnv = "NWDES_STRESS_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childModeEnv); mode != "" {
		var code int
		switch mode {
		case "writer":
			code = stressWriterChild()
		default:
			fmt.Fprintf(os.Stderr, "unknown %s=%q\n", childModeEnv, mode)
			code = 2
		}
		os.Exit(code)
	}
	code := m.Run()
	gittest.RemoveFixtures()
	os.Exit(code)
}
