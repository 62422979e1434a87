package sandbox_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nwdes/nwdes/sandbox"
)

func runner(t *testing.T) *sandbox.Exec {
	t.Helper()
	return &sandbox.Exec{Path: "/usr/bin:/bin", TempRoot: t.TempDir(), Grace: 500 * time.Millisecond}
}

func run(t *testing.T, x *sandbox.Exec, line string, timeout time.Duration) sandbox.Result {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	res, err := x.Run(context.Background(), sandbox.Command{Args: sandbox.Shell(line), Dir: dir, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func digest(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// gone waits (briefly) until pid no longer runs: killed processes linger as
// zombies until init reaps them.
func gone(pid int) bool {
	for i := 0; i < 200; i++ {
		if err := unix.Kill(pid, 0); errors.Is(err, unix.ESRCH) {
			return true
		}
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
			if f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:])); len(f) > 0 && f[0] == "Z" {
				return true
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

func TestExitStatusAndBothStreamsAreCaptured(t *testing.T) {
	t.Parallel()
	res := run(t, runner(t), "echo out; echo err >&2; exit 3", 0)
	if res.Cause != sandbox.Exited || res.ExitStatus != 3 {
		t.Fatalf("cause %s status %d, want exit 3", res.Cause, res.ExitStatus)
	}
	if string(res.Stdout.Tail) != "out\n" || string(res.Stderr.Tail) != "err\n" {
		t.Fatalf("stdout %q stderr %q", res.Stdout.Tail, res.Stderr.Tail)
	}
	if res.Stdout.SHA256 != digest([]byte("out\n")) || res.Stdout.Bytes != 4 || res.Stdout.Truncated() {
		t.Fatalf("stdout stream %+v", res.Stdout)
	}
	if res.Timeout != sandbox.DefaultTimeout {
		t.Fatalf("timeout %v, want the default", res.Timeout)
	}
}

func TestTheWorkingDirectoryIsTheOneGiven(t *testing.T) {
	t.Parallel()
	x := runner(t)
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	res, err := x.Run(context.Background(), sandbox.Command{Args: []string{"pwd"}, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(res.Stdout.Tail)); got != dir {
		t.Fatalf("pwd = %q, want %q", got, dir)
	}
}

func TestTheEnvironmentIsOnlyTheAllowList(t *testing.T) {
	t.Setenv("NWDES_SECRET", "leaked")
	x := runner(t)
	res := run(t, x, "env", 0)
	vars := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(res.Stdout.Tail)), "\n") {
		k, v, _ := strings.Cut(line, "=")
		vars[k] = v
	}
	shellOwn := map[string]bool{"PWD": true, "SHLVL": true, "_": true, "OLDPWD": true}
	var names []string
	for k := range vars {
		if !shellOwn[k] {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	if strings.Join(names, " ") != "GIT_CEILING_DIRECTORIES HOME LANG PATH TMPDIR" {
		t.Fatalf("environment names %v, want GIT_CEILING_DIRECTORIES HOME LANG PATH TMPDIR", names)
	}
	if vars["PATH"] != "/usr/bin:/bin" || vars["LANG"] != sandbox.DefaultLang {
		t.Fatalf("PATH %q LANG %q", vars["PATH"], vars["LANG"])
	}
	for _, k := range []string{"HOME", "TMPDIR"} {
		if !strings.HasPrefix(vars[k], x.TempRoot+"/nwdes-run-") {
			t.Fatalf("%s = %q, want a private directory under %s", k, vars[k], x.TempRoot)
		}
		if _, err := os.Stat(vars[k]); !os.IsNotExist(err) {
			t.Fatalf("%s %s survives the run", k, vars[k])
		}
	}
}

func TestATimeoutKillsTheWholeProcessGroup(t *testing.T) {
	t.Parallel()
	start := time.Now()
	res := run(t, runner(t), "sleep 30 & echo $!; sleep 30", 200*time.Millisecond)
	if res.Cause != sandbox.TimedOut || res.ExitStatus != -1 {
		t.Fatalf("cause %s status %d, want timeout", res.Cause, res.ExitStatus)
	}
	if time.Since(start) > 10*time.Second {
		t.Fatalf("run took %v after a 200ms timeout", time.Since(start))
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(res.Stdout.Tail)))
	if err != nil {
		t.Fatalf("stdout %q: %v", res.Stdout.Tail, err)
	}
	if !gone(pid) {
		t.Fatalf("background child %d still runs after the timeout", pid)
	}
}

func TestWhatTheLeaderLeavesRunningIsKilledWhenItExits(t *testing.T) {
	t.Parallel()
	start := time.Now()
	res := run(t, runner(t), "sleep 30 & echo $!", 0)
	if res.Cause != sandbox.Exited || res.ExitStatus != 0 {
		t.Fatalf("cause %s status %d", res.Cause, res.ExitStatus)
	}
	if time.Since(start) > 10*time.Second || res.OutputCut {
		t.Fatalf("run waited on the background child (%v, output cut %v)", time.Since(start), res.OutputCut)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(res.Stdout.Tail)))
	if pid == 0 || !gone(pid) {
		t.Fatalf("background child %d outlived its leader", pid)
	}
}

func TestOutputKeepsABoundedTailButDigestsAndForwardsEverything(t *testing.T) {
	t.Parallel()
	x := runner(t)
	x.TailBytes = 1000
	var sink bytes.Buffer
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	res, err := x.Run(context.Background(), sandbox.Command{
		Args: sandbox.Shell("i=0; while [ $i -lt 5000 ]; do echo line$i; i=$((i+1)); done"), Dir: dir, Stdout: &sink,
	})
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	for i := 0; i < 5000; i++ {
		want.WriteString("line" + strconv.Itoa(i) + "\n")
	}
	if !bytes.Equal(sink.Bytes(), want.Bytes()) {
		t.Fatalf("sink got %d bytes, want %d", sink.Len(), want.Len())
	}
	if res.Stdout.Bytes != int64(want.Len()) || res.Stdout.SHA256 != digest(want.Bytes()) || !res.Stdout.Truncated() {
		t.Fatalf("stream %d bytes %s", res.Stdout.Bytes, res.Stdout.SHA256)
	}
	if !bytes.Equal(res.Stdout.Tail, want.Bytes()[want.Len()-1000:]) {
		t.Fatalf("tail is not the last 1000 bytes: %q", res.Stdout.Tail[:40])
	}
}

func TestAFailedStartIsAResultNotAnError(t *testing.T) {
	t.Parallel()
	x := runner(t)
	cases := []sandbox.Command{
		{Args: []string{"/bin/sh", "-c", "true"}, Dir: filepath.Join(t.TempDir(), "missing")},
		{Args: []string{"no-such-program-nwdes"}, Dir: t.TempDir()},
	}
	for _, c := range cases {
		res, err := x.Run(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		if res.Cause != sandbox.StartFailed || res.ExitStatus != -1 || res.Err == "" {
			t.Fatalf("%v: cause %s status %d err %q", c.Args, res.Cause, res.ExitStatus, res.Err)
		}
	}
}

func TestASignalIsReportedByName(t *testing.T) {
	t.Parallel()
	res := run(t, runner(t), "kill -TERM $$", 0)
	if res.Cause != sandbox.Signaled || res.Signal != "SIGTERM" || res.ExitStatus != -1 {
		t.Fatalf("cause %s signal %q status %d", res.Cause, res.Signal, res.ExitStatus)
	}
}

func TestACanceledContextEndsTheGroupAndIsAnError(t *testing.T) {
	t.Parallel()
	x := runner(t)
	ctx, cancel := context.WithCancel(context.Background())
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	pidFile := filepath.Join(dir, "pid")
	go func() {
		for i := 0; i < 500; i++ {
			if b, _ := os.ReadFile(pidFile); len(b) > 0 {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	_, err := x.Run(ctx, sandbox.Command{Args: sandbox.Shell("sleep 30 & echo $! > pid; wait"), Dir: dir})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	b, _ := os.ReadFile(pidFile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if pid == 0 || !gone(pid) {
		t.Fatalf("child %d survived the cancel", pid)
	}
}

func TestRemoveAllRemovesReadOnlyDirectories(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "tree")
	if err := os.MkdirAll(filepath.Join(dir, "locked", "deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "locked", "deep", "f"), []byte("x"), 0o644)
	os.Chmod(filepath.Join(dir, "locked", "deep"), 0o500)
	os.Chmod(filepath.Join(dir, "locked"), 0o500)
	if err := sandbox.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("%s still exists", dir)
	}
}
