package workspace_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nwdes/nwdes/examine/workspace"
)

// REVIEW 4: scratch "may hold anything", and the close removes the whole
// workspace with os.RemoveAll, which crosses mount points: a directory
// mounted into scratch (a bind mount, an sshfs/FUSE fixture) loses its
// contents on the close.
func TestReviewSweepDoesNotDeleteThroughAMountInScratch(t *testing.T) {
	checkout, st := candidate(t, nil)
	b := prompt(t, st)
	precious := t.TempDir()
	if err := os.WriteFile(filepath.Join(precious, "keep"), []byte("data\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := filepath.Join(b.Workspace, "scratch", "fixture")
	os.Mkdir(m, 0o755)
	if err := unix.Mount(precious, m, "", unix.MS_BIND, ""); err != nil {
		t.Skipf("cannot bind mount here: %v", err)
	}
	defer unix.Unmount(m, unix.MNT_DETACH)
	swept, err := workspace.Sweep(context.Background(), st, "greeting", checkout, time.Now())
	t.Logf("swept %+v err %v", swept, err)
	if _, err := os.Stat(filepath.Join(precious, "keep")); err != nil {
		t.Fatalf("the close deleted a file outside the workspace, through a mount in scratch: %v", err)
	}
}
