package gittest

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// BuildTags are the build tags `make build` uses (see the Makefile).
const BuildTags = "urfave_cli_no_docs"

// BuildNwdes builds git-nwdes into out as `make build` does (static, with
// BuildTags), so that benchmarks time the binary users get. It runs the go
// command from the module's root.
func BuildNwdes(out string) error {
	root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		return fmt.Errorf("find the module's root: %v", err)
	}
	build := exec.Command("go", "build", "-trimpath", "-tags", BuildTags, "-o", out, "./cmd/git-nwdes")
	build.Dir = strings.TrimSpace(string(root))
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build git-nwdes: %v\n%s", err, b)
	}
	return nil
}
