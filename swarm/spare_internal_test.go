package swarm

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// A spare made in the background becomes a job directory by one rename;
// what a run did not use is removed when it ends, and what a supervisor
// that is gone left is removed by the next one.
func TestSparesAreTakenOnceAndLeaveNothingBehind(t *testing.T) {
	jobs := filepath.Join(t.TempDir(), "jobs")
	me, err := Self("test")
	if err != nil {
		t.Fatal(err)
	}
	// A spare of a process that is gone (a finished child), one of another
	// pid namespace, and a name that is no spare's.
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	left := filepath.Join(jobs+".spare", fmt.Sprintf("%d-%d-1-0123456789abcdef", me.NS, gone.Process.Pid))
	other := filepath.Join(jobs+".spare", fmt.Sprintf("%d-%d-1-0123456789abcdef", me.NS+1, gone.Process.Pid))
	stranger := filepath.Join(jobs+".spare", "notes")
	for _, d := range []string{left, other, stranger} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}

	p := newSpares(jobs, me)
	p.make(1)
	p.wg.Wait()
	p.make(1) // one is ready: no second
	p.wg.Wait()
	if len(p.ready) != 1 {
		t.Fatalf("%d spares ready, want 1", len(p.ready))
	}
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("the spare of a supervisor that is gone is still there: %v", err)
	}
	for _, d := range []string{other, stranger} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s, not this namespace's spare, was removed: %v", d, err)
		}
	}

	root := filepath.Join(jobs, "card", "1-0123456789abcdef")
	if err := os.MkdirAll(filepath.Dir(root), 0o755); err != nil {
		t.Fatal(err)
	}
	m, ok := p.take(root)
	if !ok {
		t.Fatal("a ready spare was not taken")
	}
	for _, d := range spareDirs {
		if fi, err := os.Lstat(filepath.Join(root, d)); err != nil || !fi.IsDir() {
			t.Errorf("the job directory lacks %s: %v", d, err)
		}
	}
	for _, f := range spareFiles {
		if fi, err := os.Lstat(filepath.Join(root, f)); err != nil || !fi.Mode().IsRegular() || fi.Size() != 0 {
			t.Errorf("the job directory lacks the empty file %s: %v", f, err)
		}
	}
	for _, f := range machineFiles {
		if fi, err := os.Lstat(m.premade(f)); err != nil || !fi.Mode().IsRegular() || fi.Size() != 0 {
			t.Errorf("the spare lacks the empty machine file %s: %v", f, err)
		}
		if _, err := os.Lstat(filepath.Join(root, f)); !os.IsNotExist(err) {
			t.Errorf("the machine file %s is in the job directory before the job ran: %v", f, err)
		}
	}
	m.drop()
	if _, ok := p.take(filepath.Join(jobs, "card", "2-0123456789abcdef")); ok {
		t.Error("a spare was taken twice")
	}

	// Never over a directory already there.
	p.make(1)
	p.wg.Wait()
	if _, ok := p.take(root); ok {
		t.Error("a spare replaced a job directory that was there")
	}
	p.make(1)
	p.wg.Wait()
	p.close()
	entries, _ := os.ReadDir(jobs + ".spare")
	if len(entries) != 2 {
		t.Errorf("after the run %d entries are left beside the jobs, want the 2 not its own", len(entries))
	}
	if newSpares("", me) != nil {
		t.Error("a supervisor with no jobs directory makes spares (in the working directory)")
	}
}
