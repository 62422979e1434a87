package cli_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/nwdes/nwdes/cmd/git-nwdes/internal/cli"
	"github.com/nwdes/nwdes/sandbox"
)

// TestMain registers git-nwdes so that scripts run it through git's own
// dispatch: `exec git nwdes …` finds git-nwdes on PATH, exactly as a user's
// git does, and an installed hook reaches the code under test.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"git-nwdes": func() { os.Exit(cli.Main(context.Background(), os.Args, cli.OSEnv())) },
	})
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		// [wall]: this kernel can wall a program in (Landlock ABI 3+,
		// seccomp); scripts that run oracles or sandbox run need it.
		Condition: func(cond string) (bool, error) {
			if cond == "wall" {
				return sandbox.Available(true) == nil, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"ghjob":     ghJob,
			"gljob":     glJob,
			"gitdaemon": gitDaemon,
			"setfrom":   setFrom,
			"mkfifo":    mkfifo,
			"bounded":   bounded,
			"exits":     exits,
		},
		Setup: func(e *testscript.Env) error {
			home := filepath.Join(e.WorkDir, ".home")
			if err := os.MkdirAll(home, 0o755); err != nil {
				return err
			}
			for k, v := range map[string]string{
				"HOME":                home,
				"GIT_CONFIG_NOSYSTEM": "1",
				"GIT_AUTHOR_NAME":     "Tester",
				"GIT_AUTHOR_EMAIL":    "tester@example.com",
				"GIT_COMMITTER_NAME":  "Tester",
				"GIT_COMMITTER_EMAIL": "tester@example.com",
				"GIT_AUTHOR_DATE":     "2026-01-01T00:00:00Z",
				"GIT_COMMITTER_DATE":  "2026-01-01T00:00:00Z",
				"NO_COLOR":            "1",
			} {
				e.Setenv(k, v)
			}
			return os.WriteFile(filepath.Join(home, ".gitconfig"),
				[]byte("[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n"), 0o644)
		},
	})
}

// gitDaemon serves $WORK with git daemon on a free loopback port, receive-pack
// enabled, until the script ends; the URL's base is in $DAEMON_URL
// (git://127.0.0.1:<port>). Pushes then go over git's own network protocol,
// to a receive-pack that runs the repository's pre-receive hook.
func gitDaemon(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: gitdaemon")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		ts.Fatalf("free port: %v", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	work := ts.Getenv("WORK")
	// git-daemon itself, not `git daemon`: the git wrapper would start it
	// as a child of its own, which outlives a test process killed before
	// its deferred kill runs. The daemon dies with this process
	// (Pdeathsig), and at the script's end with its group.
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		ts.Fatalf("git --exec-path: %v", err)
	}
	cmd := exec.Command(filepath.Join(strings.TrimSpace(string(execPath)), "git-daemon"), "--reuseaddr", "--export-all", "--enable=receive-pack",
		"--listen=127.0.0.1", fmt.Sprintf("--port=%d", port), "--base-path="+work, work)
	cmd.Env = os.Environ()
	for _, k := range []string{"PATH", "HOME", "GIT_CONFIG_NOSYSTEM"} {
		cmd.Env = append(cmd.Env, k+"="+ts.Getenv(k))
	}
	// Its own process group: the daemon serves each connection from a child
	// process, and the script's end kills them all, not only the daemon.
	cmd.SysProcAttr = daemonAttr()
	if err := cmd.Start(); err != nil {
		ts.Fatalf("git daemon: %v", err)
	}
	ts.Defer(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	for i := 0; ; i++ {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 100*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		if i == 100 {
			ts.Fatalf("git daemon did not listen on %d", port)
		}
		time.Sleep(50 * time.Millisecond)
	}
	ts.Setenv("DAEMON_URL", fmt.Sprintf("git://127.0.0.1:%d", port))
}

// setFrom sets an environment variable of the script from the last
// command's stdout: setfrom NAME REGEXP takes the regexp's first group
// (the line WORKSPACE: <W> of a prompt, say).
func setFrom(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: setfrom NAME REGEXP")
	}
	m := regexp.MustCompile(args[1]).FindStringSubmatch(ts.ReadFile("stdout"))
	if len(m) < 2 {
		ts.Fatalf("setfrom: %q matches nothing in stdout", args[1])
	}
	ts.Setenv(args[0], m[1])
}

// mkfifo makes a named pipe at each path (relative to the script's
// directory), with syscall.Mkfifo.
func mkfifo(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: mkfifo PATH…")
	}
	for _, p := range args {
		ts.Check(syscall.Mkfifo(ts.MkAbs(p), 0o600))
	}
}

// boundedAS is the address space a bounded command runs in: enough for
// the Go runtime and git, far less than reading /dev/zero whole takes.
const boundedAS = 2 << 20 // KiB, for ulimit -v: 2 GiB

// bounded runs a command as exec does, but in an address space of
// boundedAS (not under the race detector, whose shadow memory needs far
// more) and killed after 30 s (timeout(1)), and asserts its exit status:
// `bounded 1 git nwdes …`. A verb that would read an endless input whole
// fails the script with Go's "out of memory" (exit 2) instead of taking
// the machine, and one that blocks on a FIFO fails it with 124 instead of
// hanging the suite.
func bounded(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: bounded STATUS CMD [ARGS…]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	limit := fmt.Sprintf("ulimit -v %d && ", boundedAS)
	if raceEnabled {
		limit = ""
	}
	assertExit(ts, want, ts.Exec("sh", append([]string{"-c", limit + `exec timeout -k 5 30 "$@"`, "sh"}, args[1:]...)...))
}

// exits runs a command as exec does and asserts its exact exit status,
// a row of the exit table: `exits 3 git nwdes verify …`.
func exits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits STATUS CMD [ARGS…]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	assertExit(ts, want, ts.Exec(args[1], args[2:]...))
}

func assertExit(ts *testscript.TestScript, want int, err error) {
	got := 0
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		got = ee.ExitCode()
	} else if err != nil {
		ts.Fatalf("%v", err)
	}
	if got != want {
		ts.Fatalf("exit status %d, want %d", got, want)
	}
}
