package sandbox_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nwdes/nwdes/sandbox"
)

// marker is a Command.Stdout that closes seen once a line holding mark has
// been written: the job is past its set-up (a trap is armed).
type marker struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	mark string
	once sync.Once
	seen chan struct{}
}

func newMarker(mark string) *marker { return &marker{mark: mark, seen: make(chan struct{})} }

func (m *marker) Write(p []byte) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.buf.Write(p)
	if strings.Contains(m.buf.String(), m.mark) {
		m.once.Do(func() { close(m.seen) })
	}
	return len(p), nil
}

func startLine(t *testing.T, ctx context.Context, w *sandbox.Wall, c sandbox.Command, line string) *sandbox.Process {
	t.Helper()
	c.Args = sandbox.Shell(line)
	p, err := w.Start(ctx, c)
	if err != nil {
		t.Fatalf("start %q: %v", line, err)
	}
	return p
}

func awaitMark(t *testing.T, p *sandbox.Process, m *marker) {
	t.Helper()
	select {
	case <-m.seen:
	case <-p.Done():
		res, err := p.Wait()
		t.Fatalf("the job ended before %q: end %s err %v stdout %q stderr %q", m.mark, res.End, err, res.Stdout.Tail, res.Stderr.Tail)
	case <-time.After(10 * time.Second):
		p.Stop("test timed out")
		t.Fatalf("no %q in 10s", m.mark)
	}
}

func TestASignalReachesAStartedJobWhichTrapsIt(t *testing.T) {
	t.Parallel()
	inEachMode(t, func(t *testing.T, w *sandbox.Wall) {
		m := newMarker("armed")
		p := startLine(t, context.Background(), w, sandbox.Command{Stdout: m},
			"trap 'echo trapped; exit 5' TERM; echo armed; sleep 300 & wait")
		if p.Pid() <= 0 || p.Started().IsZero() {
			t.Fatalf("pid %d started %v", p.Pid(), p.Started())
		}
		awaitMark(t, p, m)
		if err := p.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		res, err := p.Wait()
		if err != nil {
			t.Fatal(err)
		}
		if res.End != sandbox.EndExit || res.ExitCode != 5 || !strings.Contains(string(res.Stdout.Tail), "trapped") {
			t.Fatalf("end %s code %d stdout %q, want the trap's exit 5", res.End, res.ExitCode, res.Stdout.Tail)
		}
		if res.Survivors != 0 || res.Duration > 10*time.Second {
			t.Fatalf("survivors %d after %v", res.Survivors, res.Duration)
		}
		if err := p.Signal(syscall.SIGTERM); !errors.Is(err, sandbox.ErrEnded) {
			t.Fatalf("signal after the end: %v, want ErrEnded", err)
		}
	})
}

func TestStopEndsAJobIgnoringTermWithKillAfterTheGrace(t *testing.T) {
	t.Parallel()
	inEachMode(t, func(t *testing.T, w *sandbox.Wall) {
		m := newMarker("armed")
		p := startLine(t, context.Background(), w, sandbox.Command{Stdout: m},
			"trap '' TERM; echo armed; while :; do sleep 0.05; done")
		awaitMark(t, p, m)
		stop := time.Now()
		p.Stop("lease lost")
		p.Stop("a second reason is ignored")
		res, err := p.Wait()
		took := time.Since(stop)
		if err != nil {
			t.Fatal(err)
		}
		if res.End != sandbox.EndStopped || res.StopReason != "lease lost" || res.Survivors != 0 {
			t.Fatalf("end %s reason %q survivors %d", res.End, res.StopReason, res.Survivors)
		}
		margin := 2 * time.Second
		if took < w.Grace || took > w.Grace+margin {
			t.Fatalf("a job ignoring TERM ended %v after Stop, want grace %v (+ %v)", took, w.Grace, margin)
		}
	})
}

func TestWaitGivesEveryCallerTheSameResult(t *testing.T) {
	t.Parallel()
	w := newWall(t)
	p := startLine(t, context.Background(), w, sandbox.Command{}, "echo out; echo err >&2; exit 4")
	results := make([]sandbox.Result, 3)
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Add(1)
		go func() { defer wg.Done(); results[i], errs[i] = p.Wait() }()
	}
	wg.Wait()
	results[2], errs[2] = p.Wait()
	for i, r := range results {
		if errs[i] != nil || !reflect.DeepEqual(r, results[0]) {
			t.Fatalf("wait %d: %+v, %v; want %+v", i, r, errs[i], results[0])
		}
	}
	if results[0].End != sandbox.EndExit || results[0].ExitCode != 4 || string(results[0].Stdout.Tail) != "out\n" {
		t.Fatalf("end %s code %d stdout %q", results[0].End, results[0].ExitCode, results[0].Stdout.Tail)
	}
}

func TestADeadlineEndsAStartedJobWhoseCallerOnlyWatchesDone(t *testing.T) {
	t.Parallel()
	w := newWall(t)
	// Two seconds of deadline give a loaded machine time to run this
	// goroutine's ticker at least once while the job runs.
	p := startLine(t, context.Background(), w, sandbox.Command{Deadline: 2 * time.Second}, "sleep 300")
	heartbeats := 0
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	timeout := time.After(10 * time.Second)
wait:
	for {
		select {
		case <-p.Done():
			break wait
		case <-tick.C:
			heartbeats++
		case <-timeout:
			p.Stop("test timed out")
			t.Fatal("the deadline did not end the job")
		}
	}
	res, err := p.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if res.End != sandbox.EndDeadline || res.Survivors != 0 || res.StopReason != "" {
		t.Fatalf("end %s survivors %d reason %q", res.End, res.Survivors, res.StopReason)
	}
	if heartbeats == 0 {
		t.Fatal("the caller was blocked while the job ran")
	}
}

var sleeperMarks atomic.Int64

// sleeperMark is a number of seconds for a test's sleepers that no other
// test of this process uses, so that another test's sleepers, running
// beside it, are never taken for its own.
func sleeperMark() string {
	return strconv.Itoa(4000 + (os.Getpid()*16+int(sleeperMarks.Add(1)))%5000)
}

func TestStopReapsAForkedBackgroundChild(t *testing.T) {
	t.Parallel()
	inEachMode(t, func(t *testing.T, w *sandbox.Wall) {
		mark := sleeperMark()
		m := newMarker("armed")
		p := startLine(t, context.Background(), w, sandbox.Command{Stdout: m},
			"setsid sh -c 'trap \"\" TERM; (sleep "+mark+".25 &); sleep "+mark+".5 & echo armed; wait' & wait")
		awaitMark(t, p, m)
		// armed follows both forks; each sleep's exec may still be on
		// its way.
		if !awaitProcessNamed("sleep "+mark, 10*time.Second) {
			p.Stop("test")
			t.Fatal("the background sleepers never started")
		}
		p.Stop("swarm shutdown")
		res, err := p.Wait()
		if err != nil {
			t.Fatal(err)
		}
		if res.End != sandbox.EndStopped || res.Survivors != 0 {
			t.Fatalf("end %s survivors %d", res.End, res.Survivors)
		}
		if pids := processesNamed("sleep " + mark); len(pids) > 0 {
			t.Fatalf("sleepers %v outlived the stopped job", pids)
		}
	})
}

func TestACanceledContextEndsAStartedJobAndWaitIsAnError(t *testing.T) {
	t.Parallel()
	w := newWall(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := startLine(t, ctx, w, sandbox.Command{}, "sleep 300 & wait")
	cancel()
	res, err := p.Wait()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if res.End != sandbox.EndDeadline || res.Survivors != 0 || res.Duration > 5*time.Second {
		t.Fatalf("end %s survivors %d after %v", res.End, res.Survivors, res.Duration)
	}
}

func TestAStartThatFailsIsADoneProcessAndItsJobIsRemoved(t *testing.T) {
	t.Parallel()
	w := newWall(t)
	p, err := w.Start(context.Background(), sandbox.Command{Args: []string{"no-such-program-nwdes"}})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
	default:
		t.Fatal("a start refused before the program ran is not done at Start's return")
	}
	if res, err := p.Wait(); err != nil || res.End != sandbox.EndStartFailed {
		t.Fatalf("end %s err %v", res.End, err)
	}
	if err := p.Signal(syscall.SIGTERM); !errors.Is(err, sandbox.ErrEnded) {
		t.Fatalf("signal to a failed start: %v, want ErrEnded", err)
	}
	if ents, _ := os.ReadDir(w.TempRoot); len(ents) != 0 {
		t.Fatalf("job directories left: %v", ents)
	}
}

func TestAWallsStartedJobDirectoryIsRemovedOnceWaited(t *testing.T) {
	t.Parallel()
	w := newWall(t)
	p := startLine(t, context.Background(), w, sandbox.Command{}, "pwd")
	res, err := p.Wait()
	if err != nil {
		t.Fatal(err)
	}
	work := strings.TrimSpace(string(res.Stdout.Tail))
	if res.End != sandbox.EndExit || !strings.HasPrefix(work, w.TempRoot) {
		t.Fatalf("end %s, ran in %q", res.End, work)
	}
	if _, err := os.Stat(work); !os.IsNotExist(err) {
		t.Fatalf("job directory %s survives Wait", work)
	}
}
