//go:build linux

package workspace

import (
	"github.com/nwdes/nwdes/sandbox"

	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/nwdes/nwdes/refusal"
)

// childWalk is set in the environment of this test binary re-executed as
// an unprivileged user with the root and the path as its arguments: the
// child prints the walk's cause, entry and remedy ("ok" when the walk
// admits the file) and exits.
const childWalk = "NWDES_WORKSPACE_TEST_CHILD_WALK"

func TestMain(m *testing.M) {
	// The wall re-executes this binary as its helper, as nwdes does.
	if sandbox.IsHelper(os.Args) {
		os.Exit(sandbox.HelperMain())
	}
	if _, ok := os.LookupEnv(childWalk); ok && len(os.Args) == 3 {
		o, err := OpenDeclared(os.Args[1], os.Args[2], "")
		var we *WalkError
		switch {
		case err == nil:
			o.Close()
			fmt.Println("ok")
		case errors.As(err, &we):
			fmt.Printf("%s\t%s\t%s\n", we.Cause, we.At, we.Refusal.Remedy)
		default:
			fmt.Println("error", err)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// tree builds files under dir: a path ending in "/" is a directory, "->"
// makes a symbolic link, "|" a FIFO, and a file is written with the mode
// given after a colon.
func tree(t *testing.T, dir string, entries ...string) {
	t.Helper()
	for _, e := range entries {
		var err error
		switch {
		case strings.Contains(e, " -> "):
			name, target, _ := strings.Cut(e, " -> ")
			err = mkparent(dir, name)
			if err == nil {
				err = os.Symlink(target, filepath.Join(dir, name))
			}
		case strings.HasSuffix(e, "/"):
			err = os.MkdirAll(filepath.Join(dir, e), 0o755)
		case strings.HasSuffix(e, "|"):
			name := strings.TrimSuffix(e, "|")
			err = mkparent(dir, name)
			if err == nil {
				err = unix.Mkfifo(filepath.Join(dir, name), 0o644)
			}
		default:
			i := strings.LastIndex(e, ":")
			name, mode := e[:i], e[i+1:]
			var m uint64
			if _, err = fmt.Sscanf(mode, "%o", &m); err != nil {
				t.Fatalf("entry %q: %v", e, err)
			}
			err = mkparent(dir, name)
			if err == nil {
				err = os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\necho hello\n"), 0o600)
			}
			if err == nil {
				err = os.Chmod(filepath.Join(dir, name), os.FileMode(m))
			}
		}
		if err != nil {
			t.Fatalf("entry %q: %v", e, err)
		}
	}
}

func mkparent(dir, name string) error {
	return os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
}

func TestADeclaredExecutableIsOpenedWithoutFollowingAnything(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		entries []string
		path    string
	}{
		{"a Rust release binary", []string{"target/release/greet:755"}, "target/release/greet"},
		{"a Go binary", []string{"bin/serve:755"}, "bin/serve"},
		{"a file at the top level", []string{"greet:700"}, "greet"},
		{"an execute-only file", []string{"bin/greet:111"}, "bin/greet"},
		{"a file executable by others only", []string{"bin/greet:601"}, "bin/greet"},
		{"a name with a backslash and a colon", []string{`bin/a\b:c:755`}, `bin/a\b:c`},
		{"a file beside a symlink it does not pass", []string{"bin/greet:755", "bin/other -> greet"}, "bin/greet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tree(t, dir, tc.entries...)
			o, err := OpenDeclared(dir, tc.path, "")
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			fi, err := os.Stat(filepath.Join(dir, tc.path))
			if err != nil {
				t.Fatal(err)
			}
			st := fi.Sys().(*syscall.Stat_t)
			if o.Path != tc.path || o.Identity.Ino != st.Ino || o.Identity.Dev != uint64(st.Dev) || o.Identity.Size != fi.Size() || !o.Identity.ModTime.Equal(fi.ModTime()) {
				t.Fatalf("opened %+v, the file is %v", o, fi)
			}
			var flags int
			if flags, err = unix.FcntlInt(o.File.Fd(), unix.F_GETFL, 0); err != nil || flags&unix.O_PATH == 0 {
				t.Fatalf("the descriptor is not O_PATH: flags %#o, %v", flags, err)
			}
		})
	}
}

func TestEveryCauseHasItsOwnRefusalAndRemedy(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("n", 256)
	for _, tc := range []struct {
		name    string
		entries []string
		path    string
		build   string
		cause   Cause
		at      string
		remedy  string
	}{
		{"a symlinked file", []string{"bin/real:755", "bin/greet -> real"}, "bin/greet", "make",
			CauseSymlink, "bin/greet", `remove the symbolic link "bin/greet", then run the build the declaration names ("make")`},
		{"a dangling symlink", []string{"bin/greet -> nowhere"}, "bin/greet", "",
			CauseSymlink, "bin/greet", `remove the symbolic link "bin/greet", then run the candidate's build`},
		{"a symlink to an absolute executable", []string{"bin/greet -> /bin/sh"}, "bin/greet", "",
			CauseSymlink, "bin/greet", `remove the symbolic link "bin/greet"`},
		{"a symlinked directory", []string{"real/greet:755", "bin -> real"}, "bin/greet", "",
			CauseSymlinkedDirectory, "bin", `remove the symbolic link "bin", then run the candidate's build`},
		{"a symlinked directory deeper down", []string{"target/real/greet:755", "target/release -> real"}, "target/release/greet", "cargo build --release",
			CauseSymlinkedDirectory, "target/release", `remove the symbolic link "target/release", then run the build the declaration names ("cargo build --release")`},
		{"a symlinked directory out of the checkout", []string{"target/"}, "target/release/greet", "",
			CauseSymlinkedDirectory, "target/release", `remove the symbolic link "target/release"`},
		{"a regular file on the path", []string{"bin:644"}, "bin/greet", "go build -o bin/serve .",
			CauseNotADirectory, "bin", `remove "bin", then run the build the declaration names ("go build -o bin/serve .")`},
		{"a FIFO on the path", []string{"bin|"}, "bin/greet", "",
			CauseNotADirectory, "bin", `remove "bin", then run the candidate's build`},
		{"a missing file", []string{"bin/"}, "bin/greet", "cargo build --release",
			CauseMissing, "bin/greet", `run the build the declaration names ("cargo build --release") so that "bin/greet" becomes a regular file`},
		{"a missing file without build text", []string{"bin/"}, "bin/greet", "",
			CauseMissing, "bin/greet", `run the candidate's build so that "bin/greet" becomes a regular file`},
		{"a missing directory", nil, "target/release/greet", "",
			CauseMissing, "target", `run the candidate's build so that "target/release/greet" becomes a regular file`},
		{"a directory where the file should be", []string{"bin/greet/"}, "bin/greet", "",
			CauseNotARegularFile, "bin/greet", `replace "bin/greet" with the regular file the build writes`},
		{"a FIFO where the file should be", []string{"bin/greet|"}, "bin/greet", "",
			CauseNotARegularFile, "bin/greet", `replace "bin/greet"`},
		{"a file without its executable bit", []string{"bin/greet:644"}, "bin/greet", "make",
			CauseNotExecutable, "bin/greet", `chmod +x -- 'bin/greet'`},
		{"an awkward name without its executable bit", []string{"bin/it's -x:600"}, "bin/it's -x", "",
			CauseNotExecutable, "bin/it's -x", `chmod +x -- 'bin/it'\''s -x'`},
		{"a name too long for the file system", []string{"bin/"}, "bin/" + long, "",
			CauseNameTooLong, long, `shorten the name "` + long + `"`},
		{"a directory name too long for the file system", nil, long + "/greet", "",
			CauseNameTooLong, long, `shorten the name`},
		{"a path that breaks the rules", nil, "bin/../greet", "",
			CauseInvalidPath, "bin/../greet", DeclarationPath},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tree(t, dir, tc.entries...)
			if tc.name == "a symlinked directory out of the checkout" {
				tree(t, dir, "target/release -> "+t.TempDir())
			}
			o, err := OpenDeclared(dir, tc.path, tc.build)
			if err == nil {
				o.Close()
				t.Fatalf("admitted %s", tc.path)
			}
			var we *WalkError
			if !errors.As(err, &we) {
				t.Fatalf("not a *WalkError: %#v", err)
			}
			r, ok := refusal.As(err)
			if !ok || r.Name != refusal.InputUnreadable || r.Class != refusal.Unreadable {
				t.Fatalf("want InputUnreadable, got %#v", err)
			}
			if we.Cause != tc.cause || we.At != tc.at || we.Path != tc.path {
				t.Fatalf("cause %s at %q of %q, want %s at %q", we.Cause, we.At, we.Path, tc.cause, tc.at)
			}
			if !strings.Contains(r.Detail, fmt.Sprintf("%q", tc.path)) || !strings.HasSuffix(r.Detail, "(cause "+string(tc.cause)+")") {
				t.Fatalf("detail %q does not name the path and its cause", r.Detail)
			}
			if !strings.Contains(r.Remedy, tc.remedy) {
				t.Fatalf("remedy %q, want %q", r.Remedy, tc.remedy)
			}
			if tc.cause == CauseNotExecutable && r.Remedy != ChmodCommand(tc.path) {
				t.Fatalf("remedy %q is not the chmod command", r.Remedy)
			}
		})
	}
}

func TestTheRefusalsCarryTheSystemErrorBehindThem(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, err := OpenDeclared(dir, "bin/greet", "")
	if !errors.Is(err, unix.ENOENT) {
		t.Fatalf("%v does not carry ENOENT", err)
	}
	_, err = OpenDeclared(dir, strings.Repeat("x", 300), "")
	if !errors.Is(err, unix.ENAMETOOLONG) {
		t.Fatalf("%v does not carry ENAMETOOLONG", err)
	}
	_, err = OpenDeclared(filepath.Join(dir, "absent"), "bin/greet", "")
	var we *WalkError
	if !errors.As(err, &we) || we.Cause != CauseUnopenable || !errors.Is(err, unix.ENOENT) {
		t.Fatalf("a missing checkout: %v", err)
	}
	if strings.Contains(err.Error()+we.Refusal.Remedy, dir) {
		t.Fatalf("the refusal names the checkout's location: %v", err)
	}
}

func TestAFileOnANoexecMountIsRefused(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("mounting a noexec tmpfs needs root")
	}
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOEXEC|unix.MS_NOSUID|unix.MS_NODEV, "size=64k"); err != nil {
		t.Skipf("cannot mount a noexec tmpfs here: %v", err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	tree(t, dir, "bin/greet:755")
	_, err := OpenDeclared(dir, "bin/greet", "")
	var we *WalkError
	if !errors.As(err, &we) || we.Cause != CauseNoexec || we.At != "bin/greet" {
		t.Fatalf("want cause noexec, got %v", err)
	}
	if r, _ := refusal.As(err); r.Name != refusal.InputUnreadable || !strings.Contains(r.Remedy, "noexec") {
		t.Fatalf("refusal %+v", r)
	}
}

func TestADirectoryTheUserCannotSearchIsRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		entries []string
		mode    map[string]os.FileMode
		path    string
		want    string
	}{
		{"a directory on the path", []string{"bin/sub/greet:755"}, map[string]os.FileMode{"bin": 0o644}, "bin/sub/greet", "not_searchable\tbin\tgive search permission on the directory \"bin\""},
		{"the directory holding the file", []string{"bin/greet:755"}, map[string]os.FileMode{"bin": 0o600}, "bin/greet", "not_searchable\tbin\t"},
		{"the checkout's top level", []string{"bin/greet:755"}, map[string]os.FileMode{".": 0o644}, "bin/greet", "not_searchable\t.\t"},
		{"a readable and searchable path", []string{"bin/greet:755"}, nil, "bin/greet", "ok"},
		{"an execute-only path and file", []string{"bin/greet:111"}, map[string]os.FileMode{"bin": 0o111}, "bin/greet", "ok"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := unprivilegedDir(t)
			tree(t, dir, tc.entries...)
			for name, mode := range tc.mode {
				if err := os.Chmod(filepath.Join(dir, name), mode); err != nil {
					t.Fatal(err)
				}
			}
			if got := walkAsNobody(t, dir, tc.path); !strings.HasPrefix(got, tc.want) {
				t.Fatalf("as uid 65534: %q, want %q", got, tc.want)
			}
		})
	}
}

// unprivilegedDir returns a temporary directory that uid 65534 can reach
// (as root, t.TempDir's directories are 0700).
func unprivilegedDir(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the search permission case needs a user the system holds to it; run as root to test it through uid 65534")
	}
	dir := t.TempDir()
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// walkAsNobody runs OpenDeclared in a copy of this test binary as uid and
// gid 65534 and returns what it printed: root bypasses search permission,
// so only another user can meet a directory it may not search.
func walkAsNobody(t *testing.T, root, path string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Skipf("cannot find the test binary: %v", err)
	}
	bin := filepath.Join(unprivilegedDir(t), "workspace.test")
	// A hard link is never open for writing; a copy may be, in a child
	// another test forks meanwhile, so its start is retried on ETXTBSY.
	if err := os.Link(self, bin); err != nil {
		if err := copyFile(self, bin); err != nil {
			t.Fatal(err)
		}
	}
	for attempt := 0; ; attempt++ {
		cmd := exec.Command(bin, root, path)
		cmd.Dir = "/"
		cmd.Env = []string{childWalk + "=1"}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		switch {
		case err == nil:
			return strings.TrimSuffix(string(out), "\n")
		case errors.Is(err, unix.ETXTBSY) && attempt < 50:
			continue
		case errors.Is(err, unix.EPERM):
			t.Skipf("cannot start a process as uid 65534: %v", err)
		}
		t.Fatalf("child: %v\n%s", err, out)
	}
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func TestASecondVerificationAcceptsOnlyTheSameFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tree(t, dir, "bin/greet:755", "bin/other:755")
	first, err := OpenDeclared(dir, "bin/greet", "")
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()

	again, err := Reverify(dir, "bin/greet", "", first)
	if err != nil {
		t.Fatalf("the unchanged file: %v", err)
	}
	again.Close()

	if err := os.Rename(filepath.Join(dir, "bin/other"), filepath.Join(dir, "bin/greet")); err != nil {
		t.Fatal(err)
	}
	_, err = Reverify(dir, "bin/greet", "", first)
	var we *WalkError
	if !errors.As(err, &we) || we.Cause != CauseChanged || !refusal.Named(err, refusal.InputUnreadable) {
		t.Fatalf("a replaced file: %v", err)
	}
	if !strings.Contains(err.Error(), "changed after its descriptor launch was refused") {
		t.Fatalf("detail %q", err)
	}

	if err := os.Remove(filepath.Join(dir, "bin/greet")); err != nil {
		t.Fatal(err)
	}
	tree(t, dir, "bin/greet -> /bin/sh")
	if _, err = Reverify(dir, "bin/greet", "", first); !errors.As(err, &we) || we.Cause != CauseSymlink {
		t.Fatalf("a link at the path: %v", err)
	}
}

func TestSameComparesDeviceInodeSizeAndModificationTime(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tree(t, dir, "greet:755")
	a, err := OpenDeclared(dir, "greet", "")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b := *a
	if !a.Same(&b) {
		t.Fatal("a file is not the same as itself")
	}
	for _, change := range []func(*Identity){
		func(i *Identity) { i.Dev++ },
		func(i *Identity) { i.Ino++ },
		func(i *Identity) { i.Size++ },
		func(i *Identity) { i.ModTime = i.ModTime.Add(1) },
	} {
		c := *a
		change(&c.Identity)
		if a.Same(&c) {
			t.Errorf("%+v is the same as %+v", c.Identity, a.Identity)
		}
	}
	if a.Same(nil) {
		t.Error("a file is the same as nothing")
	}
}

func TestADescriptorRootIsNeitherMovedNorClosed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tree(t, dir, "bin/greet:755")
	root, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for range 2 {
		o, err := OpenDeclaredAt(root, "bin/greet", "")
		if err != nil {
			t.Fatal(err)
		}
		o.Close()
	}
	if _, err := root.Stat(); err != nil {
		t.Fatalf("the root was closed: %v", err)
	}
}
