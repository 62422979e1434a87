package gittest

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
)

// Looping is git run over and over in a repository, as another client of
// it would (git pack-refs --all --prune, git gc), started by Loop.
type Looping struct {
	t            testing.TB
	args         []string
	cmd          *exec.Cmd
	flag         string
	errOut       *tailWriter
	read         chan struct{} // closed when the loop's stdout is drained
	runs, failed atomic.Int64
	stopped      bool
}

// Loop starts running git with args in dir over and over until Stop. The
// loop is one shell in a process group of its own: if the test ends
// without Stop (a t.Fatal), the whole group is killed and waited for.
func Loop(t testing.TB, dir string, args ...string) *Looping {
	t.Helper()
	l := &Looping{t: t, args: args, flag: filepath.Join(t.TempDir(), "stop"), errOut: &tailWriter{max: 4096}, read: make(chan struct{})}
	// Each run ends with one byte on stdout ("." or "x"), read as it
	// comes so that Runs counts while the loop goes on.
	l.cmd = exec.Command("sh", "-c", `f=$1; shift; while [ ! -e "$f" ]; do if git "$@" 2>"$f.err"; then printf .; else printf x; cat "$f.err" >&2; fi; done`, "sh", l.flag)
	l.cmd.Args = append(l.cmd.Args, args...)
	l.cmd.Dir = dir
	l.cmd.Env = Env(filepath.Dir(dir))
	l.cmd.Stderr = l.errOut
	l.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := l.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := l.cmd.Start(); err != nil {
		t.Fatalf("start the git %v loop: %v", args, err)
	}
	go func() {
		defer close(l.read)
		r := bufio.NewReader(out)
		for {
			c, err := r.ReadByte()
			if err != nil {
				return
			}
			l.runs.Add(1)
			if c == 'x' {
				l.failed.Add(1)
			}
		}
	}()
	t.Cleanup(func() {
		if !l.stopped {
			syscall.Kill(-l.cmd.Process.Pid, syscall.SIGKILL)
			<-l.read
			l.cmd.Wait()
		}
	})
	return l
}

// Runs is how many runs of git have ended so far.
func (l *Looping) Runs() int { return int(l.runs.Load()) }

// Stop lets the run in progress end (so that git leaves no lock behind),
// waits for the loop, and returns how many runs ended and how many of
// those failed (their last complaint is logged); the test fails if the
// loop itself did not run.
func (l *Looping) Stop() (runs, failed int) {
	l.t.Helper()
	if l.stopped {
		l.t.Fatal("the git loop was stopped twice")
	}
	l.stopped = true
	if err := os.WriteFile(l.flag, nil, 0o644); err != nil {
		syscall.Kill(-l.cmd.Process.Pid, syscall.SIGKILL)
		<-l.read
		l.cmd.Wait()
		l.t.Fatal(err)
	}
	<-l.read
	if err := l.cmd.Wait(); err != nil {
		l.t.Fatalf("the git %v loop: %v\n%s", l.args, err, l.errOut.b.String())
	}
	runs, failed = l.Runs(), int(l.failed.Load())
	if failed > 0 {
		l.t.Logf("git %v failed %d times of %d; the last said:\n%s", l.args, failed, runs, l.errOut.b.String())
	}
	return runs, failed
}

// tailWriter keeps about the last max bytes written to it.
type tailWriter struct {
	b   bytes.Buffer
	max int
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.b.Write(p)
	if over := w.b.Len() - w.max; over > 0 {
		w.b.Next(over)
	}
	return len(p), nil
}

// Rounds bounds a race against a Looping: at least Min rounds, and on
// until git has ended Runs runs that succeeded (so that the rounds
// overlapped many of them), but never more than Max rounds.
type Rounds struct{ Min, Runs, Max int }

// Race calls round(0), round(1), … while the loop runs, as r bounds them.
// Then it stops the loop, logs the counts, and fails the test if git
// succeeded fewer than r.Runs times: a git that failed every run raced
// nothing, and the race was not run.
func (l *Looping) Race(r Rounds, round func(i int)) {
	l.t.Helper()
	ok := func() int { return l.Runs() - int(l.failed.Load()) }
	i := 0
	for ; i < r.Max && (i < r.Min || ok() < r.Runs); i++ {
		round(i)
	}
	n, failed := l.Stop()
	l.t.Logf("%d rounds beside %d runs of git %v (%d failed)", i, n, l.args, failed)
	if n-failed < r.Runs {
		l.t.Errorf("git %v succeeded %d times of %d in %d rounds, want at least %d: the race was not run", l.args, n-failed, n, i, r.Runs)
	}
}
