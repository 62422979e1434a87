package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"
)

// ErrEnded is what Process.Signal returns once the job has ended (or never
// started).
var ErrEnded = errors.New("the job has ended")

// Process is a program started inside the wall by Start, running while
// its caller does other work. The wall holds it as it holds a Run: the
// deadline (TERM and CONT to every process of the job, Grace, KILL), ctx,
// and the reaping of every process of the job, whether or not anyone
// waits. All its methods are safe for concurrent use.
type Process struct {
	name    string
	started time.Time
	pid     int

	done chan struct{}
	res  Result
	err  error
	// cleanup runs once everything is reaped, before done closes (Wall.Start
	// removes its job directory).
	cleanup func()

	reportOnce  sync.Once
	reported    chan struct{} // the helper said ready or failed
	startFailed bool

	stopOnce   sync.Once
	stop       chan struct{}
	stopReason string

	// specSent closes once the spec is written to the helper's control
	// pipe; ctl is that pipe, nil once the helper has ended.
	specSent chan struct{}
	ctlMu    sync.Mutex
	ctl      *os.File
	// seq is the job's number in its lane (0 when its helper is its own).
	seq int
}

func newProcess(name string, started time.Time, cleanup func()) *Process {
	return &Process{
		name: name, started: started, cleanup: cleanup,
		done: make(chan struct{}), reported: make(chan struct{}), stop: make(chan struct{}),
	}
}

// Wait blocks until every process of the job is reaped and returns what
// happened, as Run would have: the Result, and an error when the wall
// itself could not work, when a strict wall found the kernel unable to
// enforce it (a SandboxUnavailable refusal), or when ctx ended. Every call,
// from any goroutine, returns the same Result; its byte slices are shared
// and must not be changed.
func (p *Process) Wait() (Result, error) {
	<-p.done
	return p.res, p.err
}

// Done is closed once every process of the job is reaped and Wait no
// longer blocks.
func (p *Process) Done() <-chan struct{} { return p.done }

// Started is when the wall began starting the program (Result.Started).
func (p *Process) Started() time.Time { return p.started }

// Pid is the host pid of the wall's helper, the job's init (or subreaper):
// every process of the job is its descendant. It is 0 when the program
// failed to start before a helper was needed.
func (p *Process) Pid() int { return p.pid }

// Stop ends the job now, as its deadline would (TERM and CONT to every
// process of the job, Grace, then KILL; everything reaped and survivors
// counted), and returns at once; Wait gives the Result, whose End is
// EndStopped and StopReason reason. Only the first Stop counts, and none
// does once the job has ended, or began ending at its deadline or ctx.
func (p *Process) Stop(reason string) {
	p.stopOnce.Do(func() {
		p.stopReason = reason
		close(p.stop)
	})
}

// Signal sends sig to every process of the job (through the helper, as
// the deadline's TERM is sent), and to nothing else: the job may catch it,
// ignore it or end. It is sent as is, without the CONT that follows the
// deadline's TERM. A job ended by a signal sent this way ends EndSignal.
// Signal returns ErrEnded once the helper has ended.
func (p *Process) Signal(sig syscall.Signal) error {
	if sig <= 0 || sig > 64 {
		return fmt.Errorf("signal %s: %d is not a signal", p.name, int(sig))
	}
	select {
	case <-p.specSent:
	case <-p.done:
		return fmt.Errorf("signal %s: %w", p.name, ErrEnded)
	}
	b, _ := json.Marshal(helperControl{Signal: int(sig), Seq: p.seq})
	p.ctlMu.Lock()
	defer p.ctlMu.Unlock()
	if p.ctl == nil {
		return fmt.Errorf("signal %s: %w", p.name, ErrEnded)
	}
	// A helper that stopped reading its control pipe must not hold the
	// caller (and, through the lock, the close of the pipe) forever.
	_ = p.ctl.SetWriteDeadline(time.Now().Add(signalWait))
	defer p.ctl.SetWriteDeadline(time.Time{})
	if _, err := p.ctl.Write(append(b, '\n')); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return fmt.Errorf("signal %s: the helper did not take the request within %s", p.name, signalWait)
		}
		return fmt.Errorf("signal %s: %w (%v)", p.name, ErrEnded, err)
	}
	return nil
}

// signalWait bounds how long Signal waits for the helper to take a request.
const signalWait = 2 * time.Second

// report records the helper's first word on the start: ready, or failed.
func (p *Process) report(failed bool) {
	p.reportOnce.Do(func() {
		p.startFailed = failed
		close(p.reported)
	})
}

// closeControl closes the helper's control pipe once the helper is gone.
func (p *Process) closeControl() {
	p.ctlMu.Lock()
	defer p.ctlMu.Unlock()
	if p.ctl != nil {
		p.ctl.Close()
		p.ctl = nil
	}
}

// finish sets the Result and wakes every Wait.
func (p *Process) finish(res Result, err error) {
	if p.cleanup != nil {
		p.cleanup()
	}
	p.res, p.err = res, err
	close(p.done)
}
