package sandbox

import (
	"context"
	"errors"
	"sync"
)

// Lane runs jobs of one wall one after another through one helper, where
// Job.Run starts a helper (this binary again, in new namespaces) for each:
// a gate run's oracles, one lane for each that runs at once. The jobs of
// a lane are walled as Job.Run walls them, and kept apart:
//
//   - each job's program is forked from a thread of the helper made for
//     it, which takes a mount, filesystem and IPC namespace of its own
//     (so its view, with its own job directory only, and its SysV and
//     POSIX IPC objects are its own), builds its Landlock ruleset,
//     seccomp filter, capability drop and no_new_privs on itself alone,
//     and is never given back to run anything else;
//   - the helper is the init of the lane's pid namespace: when a job's
//     program ends, every process of the job is killed and reaped before
//     the next job starts (none can outlive it there: with no child left,
//     nothing of it is alive in the namespace), and the supervisor checks
//     from outside (the pids cgroup, else the namespace) that only the
//     helper is left;
//   - the helper's own root holds the wall's roots, caches and temporary
//     root (where job directories are made) and nothing else of the host,
//     so what a job reads of it (/proc/1/mountinfo) shows no more;
//   - a job cannot change the helper's resource limits (the seccomp
//     filter refuses prlimit64 on another process), and the helper ends
//     before taking a job when it finds them changed all the same;
//   - the thread of the helper that forked a job, the one thread of the
//     helper in the job's Landlock domain, ends once the job is forked
//     (it says ready before the fork), so the job can signal no thread of
//     the helper (ABI 6 scoping), nor trace one or read its memory: it
//     can neither end the helper nor make it forward a TERM or spend its
//     CPU time; and the helper drops every signal it does not act on;
//   - a job that left survivors, was ended at its deadline, stopped or
//     canceled, whose output was cut, or whose helper failed, ends the
//     lane's helper (the kernel then kills its namespace), and the next job
//     gets a new one; so does a job the helper's RLIMIT_CPU, which counts
//     the helper's own time across its jobs, might not hold to its end.
//
// The jobs of a lane share its helper's pid and network namespaces (an
// empty one when NoNetwork) and its resource limits. A job the lane
// cannot run so runs with a helper of its own, as Job.Run runs it: one
// whose limits need a second stage (an address-space limit under 8 GiB),
// one started through a descriptor (Command.Exec), one whose view needs a
// path the helper's root does not hold, one whose deadline (with the
// grace, times the two CPUs the helper can use at once) reaches the CPU limit, one whose view the lane
// could not build or whose helper ended before it took the job (nothing
// ran; the helper of its own then reports or tolerates a view it cannot
// build as Job.Run does), and every job where the kernel gives no
// namespaces or no Landlock signal scoping (ABI 6: without it a job could
// signal the helper's other threads, which serve the next job). A job
// that asks for other namespaces or limits than the lane's helper has
// gets a new helper.
//
// A Lane runs one job at a time (Run waits for the one before); Close
// ends its helper, and a job run after it runs with a helper of its own.
type Lane struct {
	wall   *Wall
	mu     sync.Mutex
	h      *laneHelper // nil until a job needs it, and once it is ended
	closed bool
	// rootless: a helper of the lane could not make its own root, so
	// every job runs with a helper of its own.
	rootless bool
}

// Lanes makes lanes: a Wall does. A caller that runs many jobs of one
// wall in turn (gate run) asks for one where Jobs is all it was given.
type Lanes interface {
	NewLane() *Lane
}

var _ Lanes = (*Wall)(nil)

// NewLane returns a lane of w; it starts no helper until its first job.
func (w *Wall) NewLane() *Lane { return &Lane{wall: w} }

// Run runs c in j as j.Run does, through the lane's helper where it can
// (see Lane). j must be a job of the lane's wall.
func (l *Lane) Run(ctx context.Context, j *Job, c Command) (Result, error) {
	if j.wall != l.wall {
		return Result{}, errors.New("run: the job is not of the lane's wall")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		// A closed lane starts no helper nobody would end: the job runs
		// with a helper of its own.
		return j.Run(ctx, c)
	}
	p, err := j.start(ctx, c, nil, l)
	if err != nil {
		return Result{}, err
	}
	res, err := p.Wait()
	if err != nil || res.OutputCut || res.Survivors > 0 || res.End == EndDeadline || res.End == EndStopped {
		// Whatever it was, the next job does not share a helper with it.
		l.retire()
	}
	return res, err
}

// Warm starts the lane's helper now, in the background, for jobs with
// NoNetwork as given and the wall's limits, so that the first job does not
// wait for its start: a caller warms the lane while it prepares that job
// (a gate run exports the candidate). It starts nothing where the lane
// could run no such job, nor once the lane is closed; a job the helper
// does not fit gets another, as always.
func (l *Lane) Warm(noNetwork bool) {
	go func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if !l.closed && l.h == nil {
			l.warm(noNetwork)
		}
	}()
}

// Close ends the lane's helper, if it has one; a Warm after it starts
// nothing.
func (l *Lane) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	l.retire()
	return nil
}
