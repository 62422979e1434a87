package sandbox

import (
	"errors"
	"path/filepath"
	"testing"
)

func TestThePidsCgroupIsKeptOnceFoundAndLookedForAgainAfterAnError(t *testing.T) {
	w := &Wall{}
	looked := 0
	found := []struct {
		dir string
		err error
	}{{"", errors.New("no pids controller yet")}, {t.TempDir(), nil}, {"/elsewhere", nil}}
	find := func() (string, error) {
		f := found[looked]
		looked++
		return f.dir, f.err
	}
	if _, err := w.pidsBase(find); err == nil {
		t.Fatal("the first look's error was not returned")
	}
	if base, err := w.pidsBase(find); err != nil || base != found[1].dir || looked != 2 {
		t.Fatalf("after an error: %q %v, %d looks; want it looked for again", base, err, looked)
	}
	if base, _ := w.pidsBase(find); base != found[1].dir || looked != 2 {
		t.Fatalf("once found: %q, %d looks; want it kept", base, looked)
	}
	// A base where no job's cgroup can be made is forgotten.
	w.cgBase = filepath.Join(found[1].dir, "gone")
	if _, err := w.newPidsCgroup(10); err == nil {
		t.Fatal("a cgroup was made under a missing base")
	}
	if base, _ := w.pidsBase(find); base != "/elsewhere" || looked != 3 {
		t.Fatalf("after a base that failed: %q, %d looks; want it looked for again", base, looked)
	}
}
