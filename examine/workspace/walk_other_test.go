//go:build !linux

package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/nwdes/nwdes/refusal"
)

func TestEveryDeclaredPathIsRefusedWithoutADescriptorWalk(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bin", "greet"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"bin/greet", "bin/missing"} {
		_, err := OpenDeclared(dir, p, "make")
		var we *WalkError
		if !errors.As(err, &we) || we.Cause != CauseNoDescriptorWalk || !refusal.Named(err, refusal.InputUnreadable) {
			t.Fatalf("%s: %v", p, err)
		}
		if we.Refusal.Remedy != "examine the candidate on a platform that has descriptor-relative no-follow opens" {
			t.Fatalf("remedy %q", we.Refusal.Remedy)
		}
	}
}
