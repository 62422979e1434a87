package swarm

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nwdes/nwdes/sandbox"
)

var osSymlink = os.Symlink

func writeSpent(t *testing.T, dir, body string) {
	t.Helper()
	tmp := filepath.Join(dir, ".spent.tmp")
	if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, SpentName)); err != nil {
		t.Fatal(err)
	}
}

func sandboxStartFailed() sandbox.Result {
	return sandbox.Result{End: sandbox.EndStartFailed, Err: "no such file"}
}
func sandboxExit(code int) sandbox.Result {
	return sandbox.Result{End: sandbox.EndExit, ExitCode: code}
}
