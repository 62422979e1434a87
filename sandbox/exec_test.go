//go:build linux

package sandbox_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/nwdes/nwdes/sandbox"
)

// routes are the two ways the helper starts a program: forked from its
// own walled thread, or by a second stage that becomes the program (taken
// under an address-space limit below 8 GiB).
var routes = []struct {
	name         string
	addressSpace uint64
}{{"fork-exec", sandbox.Unlimited}, {"second-stage", 1 << 30}}

// inEachModeAndRoute runs body, in parallel, once per way the wall holds
// processes and per way the helper starts the program.
func inEachModeAndRoute(t *testing.T, body func(t *testing.T, w *sandbox.Wall)) {
	for _, r := range routes {
		t.Run(r.name, func(t *testing.T) {
			if raceBuilt && r.addressSpace != sandbox.Unlimited {
				// The second stage is this race-built binary, re-executed
				// under the limit: the race detector's own memory does not
				// fit it. make test runs the wall again without -race.
				t.Skip("the second stage under an address-space limit: run without -race (make test does)")
			}
			t.Parallel()
			inEachMode(t, func(t *testing.T, w *sandbox.Wall) {
				w.Limits.AddressSpace = r.addressSpace
				body(t, w)
			})
		})
	}
}

// openPath opens p as examine probe will: O_PATH, not following a last
// symbolic link.
func openPath(t *testing.T, p string) *os.File {
	t.Helper()
	fd, err := unix.Open(p, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("open %s: %v", p, err)
	}
	f := os.NewFile(uintptr(fd), p)
	t.Cleanup(func() { f.Close() })
	return f
}

// install copies the file src to dir/name with mode.
func install(t *testing.T, src, dir, name string, mode os.FileMode) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	return writeProgram(t, dir, name, b, mode)
}

func writeProgram(t *testing.T, dir, name string, b []byte, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func runExec(t *testing.T, w *sandbox.Wall, c sandbox.Command) sandbox.Result {
	t.Helper()
	res, err := w.Run(context.Background(), c)
	if err != nil {
		t.Fatalf("run %v through its descriptor: %v", c.Args, err)
	}
	return res
}

func TestAnELFProgramRunsThroughItsDescriptor(t *testing.T) {
	t.Parallel()
	inEachModeAndRoute(t, func(t *testing.T, w *sandbox.Wall) {
		prog := install(t, "/bin/echo", t.TempDir(), "prog", 0o755)
		res := runExec(t, w, sandbox.Command{Args: []string{"named-anything", "hello", "world"}, Exec: openPath(t, prog)})
		if res.End != sandbox.EndExit || res.ExitCode != 0 || string(res.Stdout.Tail) != "hello world\n" {
			t.Fatalf("end %s code %d stdout %q stderr %q err %q", res.End, res.ExitCode, res.Stdout.Tail, res.Stderr.Tail, res.Err)
		}
		if res.Enforced.Launch != "descriptor" || res.Enforced.Filesystem != "landlock" || !strings.Contains(res.Enforced.Summary(), "descriptor") {
			t.Fatalf("enforced %+v", res.Enforced)
		}
	})
}

func TestArgv0IsNeverLookedUpWhenTheProgramIsADescriptor(t *testing.T) {
	t.Parallel()
	w := newWall(t)
	prog := install(t, "/bin/echo", t.TempDir(), "prog", 0o755)
	res := runExec(t, w, sandbox.Command{Args: []string{"no-such-program-nwdes", "ran"}, Exec: openPath(t, prog)})
	if res.End != sandbox.EndExit || string(res.Stdout.Tail) != "ran\n" {
		t.Fatalf("end %s stdout %q err %q", res.End, res.Stdout.Tail, res.Err)
	}
}

func TestAScriptRunsThroughItsDescriptorNamedDevFd(t *testing.T) {
	t.Parallel()
	inEachModeAndRoute(t, func(t *testing.T, w *sandbox.Wall) {
		script := writeProgram(t, t.TempDir(), "script", []byte("#!/bin/sh\necho \"$0 $1\"\n"), 0o755)
		res := runExec(t, w, sandbox.Command{Args: []string{"script", "arg"}, Exec: openPath(t, script)})
		want := fmt.Sprintf("/dev/fd/%d arg\n", sandbox.ExecFD)
		if res.End != sandbox.EndExit || res.ExitCode != 0 || string(res.Stdout.Tail) != want {
			t.Fatalf("end %s code %d stdout %q (want %q) stderr %q err %q", res.End, res.ExitCode, res.Stdout.Tail, want, res.Stderr.Tail, res.Err)
		}
	})
}

func TestWhatRunsIsTheFileOpenedNotWhatLaterReplacedItsPath(t *testing.T) {
	t.Parallel()
	inEachModeAndRoute(t, func(t *testing.T, w *sandbox.Wall) {
		dir := t.TempDir()
		prog := writeProgram(t, dir, "prog", []byte("#!/bin/sh\necho original\n"), 0o755)
		f := openPath(t, prog)
		other := writeProgram(t, dir, "other", []byte("#!/bin/sh\necho replaced\n"), 0o755)
		if err := os.Rename(other, prog); err != nil {
			t.Fatal(err)
		}
		res := runExec(t, w, sandbox.Command{Args: []string{"prog"}, Exec: f})
		if res.End != sandbox.EndExit || string(res.Stdout.Tail) != "original\n" {
			t.Fatalf("end %s stdout %q stderr %q err %q", res.End, res.Stdout.Tail, res.Stderr.Tail, res.Err)
		}
		res = runExec(t, w, sandbox.Command{Args: []string{"prog"}, Exec: openPath(t, prog)})
		if string(res.Stdout.Tail) != "replaced\n" {
			t.Fatalf("the path opened again ran %q", res.Stdout.Tail)
		}
	})
}

func TestAnExecuteOnlyBinaryRunsThroughItsDescriptor(t *testing.T) {
	t.Parallel()
	inEachModeAndRoute(t, func(t *testing.T, w *sandbox.Wall) {
		prog := install(t, "/bin/echo", t.TempDir(), "prog", 0o111)
		res := runExec(t, w, sandbox.Command{Args: []string{"echo", "ran"}, Exec: openPath(t, prog)})
		if res.End != sandbox.EndExit || string(res.Stdout.Tail) != "ran\n" {
			t.Fatalf("end %s stdout %q stderr %q err %q", res.End, res.Stdout.Tail, res.Stderr.Tail, res.Err)
		}
	})
}

// TestAnExecuteOnlyBinaryRunsThroughItsDescriptorForAnUnprivilegedUser
// runs the wall as uid 65534, which cannot read the binary it starts.
func TestAnExecuteOnlyBinaryRunsThroughItsDescriptorForAnUnprivilegedUser(t *testing.T) {
	t.Parallel()
	requireWall(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root to start a child as uid 65534")
	}
	dir, err := os.MkdirTemp("", "nwdes-exec-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	self, _ := os.Executable()
	bin := install(t, self, dir, "sandbox.test", 0o755)
	prog := install(t, "/bin/echo", dir, "prog", 0o111)
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(tmp, 0o777)
	for _, r := range routes {
		cmd := exec.Command(bin, "execfd", tmp, fmt.Sprint(r.addressSpace), prog, "ran")
		cmd.Dir = dir
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v: %s", r.name, err, out)
		}
		if bytes.HasPrefix(out, []byte("skip: ")) {
			t.Skipf("as uid 65534 the wall cannot run: %s", out)
		}
		if want := "read: permission denied\nexit 0 errno 0 uid 65534 ran\n"; string(out) != want {
			t.Fatalf("%s: as uid 65534: %q, want %q", r.name, out, want)
		}
	}
}

// execFD is the test binary's "execfd" verb: as whoever runs it, it runs
// the file prog through its descriptor in a wall whose job directories
// are under tmp, and prints whether it could read prog itself, then how
// the run ended and its output.
func execFD(tmp, addressSpace, prog string, args []string) int {
	if _, err := os.ReadFile(prog); err != nil {
		fmt.Println("read:", strings.TrimPrefix(err.Error(), "open "+prog+": "))
	} else {
		fmt.Println("read: allowed")
	}
	fd, err := unix.Open(prog, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		fmt.Println("open:", err)
		return 1
	}
	f := os.NewFile(uintptr(fd), prog)
	defer f.Close()
	var as uint64
	fmt.Sscan(addressSpace, &as)
	w := &sandbox.Wall{Path: "/usr/bin:/bin", TempRoot: tmp, Home: tmp, Strict: true, Limits: sandbox.Limits{AddressSpace: as}}
	res, err := w.Run(context.Background(), sandbox.Command{Args: append([]string{"prog"}, args...), Exec: f})
	if err != nil {
		fmt.Println("skip:", err)
		return 0
	}
	fmt.Printf("%s %d errno %d uid %d %s", res.End, res.ExitCode, int(res.Errno), os.Getuid(), res.Stdout.Tail)
	return 0
}

// skipAFailedSecondStageUnderRace skips where a second stage cannot live
// under the job's address-space limit: a race-built one, where
// ThreadSanitizer maps memory as it runs and, unable to, aborts. A second
// stage built without -race maps nothing under the limit (make test runs
// the wall again without -race).
func skipAFailedSecondStageUnderRace(t *testing.T, w *sandbox.Wall) {
	t.Helper()
	if raceBuilt && w.Limits.AddressSpace != sandbox.Unlimited {
		t.Skip("a race-built second stage cannot report a failed exec under an address-space limit")
	}
}

func TestAFileThatIsNotAProgramFailsToStartWithENOEXEC(t *testing.T) {
	t.Parallel()
	inEachModeAndRoute(t, func(t *testing.T, w *sandbox.Wall) {
		skipAFailedSecondStageUnderRace(t, w)
		junk := writeProgram(t, t.TempDir(), "junk", []byte("\x00\x01\x02\x03 not a program\xff\xfe"), 0o755)
		res := runExec(t, w, sandbox.Command{Args: []string{"junk"}, Exec: openPath(t, junk)})
		if res.End != sandbox.EndStartFailed || res.Errno != syscall.ENOEXEC || res.ExitCode != -1 || res.Err == "" {
			t.Fatalf("end %s errno %v code %d err %q stderr %s", res.End, res.Errno, res.ExitCode, res.Err, res.Stderr.Tail)
		}
	})
}

// TestAProgramOnANoexecMountFailsToStartWithEACCES is how a caller tests
// its fallback when the start through the descriptor is refused for
// permission: a real refusal by the kernel.
func TestAProgramOnANoexecMountFailsToStartWithEACCES(t *testing.T) {
	t.Parallel()
	requireWall(t)
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOEXEC|unix.MS_NOSUID|unix.MS_NODEV, "size=16m"); err != nil {
		t.Skipf("cannot mount a noexec tmpfs here (needs root or CAP_SYS_ADMIN): %v", err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	prog := install(t, "/bin/echo", dir, "prog", 0o755)
	inEachModeAndRoute(t, func(t *testing.T, w *sandbox.Wall) {
		skipAFailedSecondStageUnderRace(t, w)
		res := runExec(t, w, sandbox.Command{Args: []string{"prog", "ran"}, Exec: openPath(t, prog)})
		if res.End != sandbox.EndStartFailed || res.Errno != syscall.EACCES || len(res.Stdout.Tail) != 0 {
			t.Fatalf("end %s errno %v stdout %q err %q", res.End, res.Errno, res.Stdout.Tail, res.Err)
		}
	})
}

func TestTheProgramCannotReadASiblingOfItsFile(t *testing.T) {
	t.Parallel()
	inEachModeAndRoute(t, func(t *testing.T, w *sandbox.Wall) {
		dir := t.TempDir()
		secret := writeProgram(t, dir, "secret", []byte("SIBLING-SECRET\n"), 0o644)
		prog := install(t, "/bin/cat", dir, "prog", 0o755)
		res := runExec(t, w, sandbox.Command{Args: []string{"cat", secret}, Exec: openPath(t, prog)})
		if bytes.Contains(res.Stdout.Tail, []byte("SECRET")) || res.ExitCode == 0 {
			t.Fatalf("the sibling was read: end %s stdout %q", res.End, res.Stdout.Tail)
		}
		if w.NoNamespaces && (res.End != sandbox.EndWall || res.Refused == nil || res.Refused.Path != secret) {
			// No view: the sibling exists, and only Landlock refuses it.
			t.Fatalf("end %s refused %+v stderr %q, want Landlock to refuse %s", res.End, res.Refused, res.Stderr.Tail, secret)
		}
		res = runExec(t, w, sandbox.Command{Args: []string{"cat", secret}, Exec: openPath(t, prog), Read: []string{dir}})
		if string(res.Stdout.Tail) != "SIBLING-SECRET\n" {
			t.Fatalf("with its directory in the read set the sibling could not be read: end %s stderr %q", res.End, res.Stderr.Tail)
		}
	})
}

func TestTheProgramFindsOnlyItsOwnDescriptorBesidesTheStandardOnes(t *testing.T) {
	t.Parallel()
	inEachModeAndRoute(t, func(t *testing.T, w *sandbox.Wall) {
		prog := install(t, "/bin/ls", t.TempDir(), "prog", 0o755)
		res := runExec(t, w, sandbox.Command{Args: []string{"ls", "/proc/self/fd"}, Exec: openPath(t, prog)})
		if got := strings.Join(strings.Fields(string(res.Stdout.Tail)), " "); got != fmt.Sprintf("0 1 2 3 %d", sandbox.ExecFD) {
			t.Fatalf("descriptors %q, want 0 1 2, ls's own 3 and %d; stderr %q", got, sandbox.ExecFD, res.Stderr.Tail)
		}
	})
}

func TestADescriptorThatIsNotARegularFileIsRefused(t *testing.T) {
	t.Parallel()
	w := newWall(t)
	res := runExec(t, w, sandbox.Command{Args: []string{"dir"}, Exec: openPath(t, t.TempDir())})
	if res.End != sandbox.EndStartFailed || res.Errno != syscall.EACCES || res.Err == "" {
		t.Fatalf("end %s errno %v err %q", res.End, res.Errno, res.Err)
	}
}

// TestManyStartsUnderASmallAddressSpaceAllReport starts programs, and files
// that are not programs, side by side under a 1 GiB address space: the
// second stage lives a moment under that limit, where its runtime can map
// nothing and start no thread, and must neither abort nor lose its report.
func TestManyStartsUnderASmallAddressSpaceAllReport(t *testing.T) {
	t.Parallel()
	w := newWall(t)
	w.Limits.AddressSpace = 1 << 30
	skipAFailedSecondStageUnderRace(t, w)
	dir := t.TempDir()
	junk := writeProgram(t, dir, "junk", []byte("\x00\x01 not a program"), 0o755)
	prog := install(t, "/bin/echo", dir, "prog", 0o755)
	var wg sync.WaitGroup
	for i := range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				res, err := w.Run(context.Background(), sandbox.Command{Args: []string{"prog", "ran"}, Exec: openPath(t, prog)})
				if err != nil || res.End != sandbox.EndExit || string(res.Stdout.Tail) != "ran\n" {
					t.Errorf("start %d: err %v end %s stdout %q stderr %.300q", i, err, res.End, res.Stdout.Tail, res.Stderr.Tail)
				}
				return
			}
			res, err := w.Run(context.Background(), sandbox.Command{Args: []string{"junk"}, Exec: openPath(t, junk)})
			if err != nil || res.End != sandbox.EndStartFailed || res.Errno != syscall.ENOEXEC || !strings.Contains(res.Err, "exec format error") {
				t.Errorf("start %d: err %v end %s errno %v report %q stderr %.300q", i, err, res.End, res.Errno, res.Err, res.Stderr.Tail)
			}
		}()
	}
	wg.Wait()
}
