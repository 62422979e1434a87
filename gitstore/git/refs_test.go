package git_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nwdes/nwdes/gitstore/oid"

	"github.com/nwdes/nwdes/gitstore/git"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/refusal"
)

var zero = oid.Zero

// TestCompareAndSwapConformance pins the compare-and-swap contract: create
// only if absent, update only if old, delete only if old, and a refused
// swap changes nothing. Each case runs on a loose ref and on a packed one,
// and each in durable mode too (whose deletes sync packed-refs and the
// directories).
func TestCompareAndSwapConformance(t *testing.T) {
	const ref = git.RefName("refs/nwdes/test")
	for _, mode := range []struct{ packed, durable bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		packed := mode.packed
		dir := gittest.Init(t, false)
		a := oid.MustParse(gittest.Git(t, dir, "rev-parse", "HEAD"))
		b := oid.MustParse(gittest.Git(t, dir, "rev-parse", "HEAD^{tree}"))
		refs := git.NewRefs(filepath.Join(dir, ".git"))
		refs.Durable = mode.durable
		read := func() oid.ID {
			t.Helper()
			h, err := refs.Read(ref)
			if err != nil {
				t.Fatal(err)
			}
			return h
		}
		pack := func() {
			if packed {
				gittest.Git(t, dir, "pack-refs", "--all")
			}
		}
		steps := []struct {
			name     string
			old, new oid.ID
			conflict bool
			want     oid.ID
		}{
			{"delete of an absent ref is a conflict", a, zero, true, zero},
			{"update of an absent ref is a conflict", a, b, true, zero},
			{"create when absent succeeds", zero, a, false, a},
			{"create when present is a conflict", zero, b, true, a},
			{"update with the wrong old value is a conflict", b, b, true, a},
			{"update with the right old value succeeds", a, b, false, b},
			{"delete with the wrong old value is a conflict", a, zero, true, b},
			{"delete with the right old value succeeds", b, zero, false, zero},
			{"create again after delete succeeds", zero, a, false, a},
		}
		for _, st := range steps {
			pack()
			err := refs.CompareAndSwap(ref, st.old, st.new)
			if st.conflict != errors.Is(err, git.ErrConflict) || (!st.conflict && err != nil) {
				t.Fatalf("%+v %s: err = %v", mode, st.name, err)
			}
			if got := read(); got != st.want {
				t.Fatalf("%+v %s: ref = %s, want %s", mode, st.name, got, st.want)
			}
			gitView := gittest.Git(t, dir, "for-each-ref", "--format=%(objectname)", string(ref))
			if (gitView == "") != st.want.IsZero() || (gitView != "" && gitView != st.want.String()) {
				t.Fatalf("%+v %s: git sees %q, want %s", mode, st.name, gitView, st.want)
			}
		}
		for _, lock := range []string{"refs/nwdes/test.lock", "packed-refs.lock"} {
			if _, err := os.Stat(filepath.Join(dir, ".git", lock)); !os.IsNotExist(err) {
				t.Fatalf("%+v: %s was left behind: %v", mode, lock, err)
			}
		}
	}
}

func TestAHeldLockIsReportedNotBroken(t *testing.T) {
	dir := gittest.Init(t, false)
	a := oid.MustParse(gittest.Git(t, dir, "rev-parse", "HEAD"))
	refs := git.NewRefs(filepath.Join(dir, ".git"))
	refs.LockTimeout = 20 * time.Millisecond
	lock := filepath.Join(dir, ".git", "refs", "nwdes", "x.lock")
	gittest.WriteFile(t, filepath.Join(dir, ".git"), "refs/nwdes/x.lock", "")

	err := refs.CompareAndSwap("refs/nwdes/x", zero, a)
	if !errors.Is(err, git.ErrLocked) || !refusal.Named(err, "LockHeld") {
		t.Fatalf("err = %v, want LockHeld", err)
	}

	old := time.Now().Add(-time.Hour)
	os.Chtimes(lock, old, old)
	err = refs.CompareAndSwap("refs/nwdes/x", zero, a)
	r, ok := refusal.As(err)
	if !ok || r.Name != "StaleLock" || r.Remedy == "" {
		t.Fatalf("err = %v, want StaleLock with a remedy", err)
	}
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("the stale lock must be left for the user to remove: %v", err)
	}
	if h, _ := refs.Read("refs/nwdes/x"); !h.IsZero() {
		t.Fatalf("ref moved despite the lock")
	}
}

func TestRefNamesAreValidated(t *testing.T) {
	for _, bad := range []git.RefName{"nwdes/x", "refs/nwdes/", "refs//x", "refs/x.lock/y", "refs/a..b", "refs/a b", "refs/.hidden"} {
		if err := bad.Validate(); !refusal.Named(err, "RefNameInvalid") {
			t.Errorf("%q: err = %v, want RefNameInvalid", bad, err)
		}
	}
	if err := git.RefName("refs/nwdes/examine").Validate(); err != nil {
		t.Fatal(err)
	}
}

// A packed ref on a last line with no newline (git reads such a file) is
// deleted like any other: the delete once looked for "name\n" only,
// reported success and left the ref in place.
func TestDeleteAPackedRefOnAnUnterminatedLastLine(t *testing.T) {
	const ref = git.RefName("refs/nwdes/last")
	dir := gittest.Init(t, false)
	a := gittest.Git(t, dir, "rev-parse", "HEAD")
	packed := filepath.Join(dir, ".git", "packed-refs")
	if err := os.WriteFile(packed, []byte("# pack-refs with: peeled fully-peeled sorted \n"+a+" "+string(ref)), 0o644); err != nil {
		t.Fatal(err)
	}
	refs := git.NewRefs(filepath.Join(dir, ".git"))
	if h, err := refs.Read(ref); err != nil || h.String() != a {
		t.Fatalf("before: %v, %v", h, err)
	}
	if err := refs.CompareAndSwap(ref, oid.MustParse(a), zero); err != nil {
		t.Fatal(err)
	}
	if h, err := refs.Read(ref); err != nil || !h.IsZero() {
		t.Fatalf("after the delete: %v, %v; want gone", h, err)
	}
}
