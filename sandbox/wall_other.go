//go:build !linux

package sandbox

import (
	"context"
	"runtime"
)

// The wall is built from Linux's Landlock, seccomp and namespaces. Elsewhere
// nwdes builds and runs every verb that runs nothing of the candidate's, and
// refuses every one that would (SandboxUnavailable): nothing the candidate
// wrote runs unwalled, and no gate is met without its oracle.
func (j *Job) start(ctx context.Context, c Command, cleanup func(), _ *Lane) (*Process, error) {
	return nil, Available(c.NoNetwork) // the caller removes the job, as after any refused start
}

// Available reports that this platform cannot enforce the wall.
func Available(noNetwork bool) error {
	return unavailable("the wall is built on Linux only (Landlock, seccomp, namespaces); this is " + runtime.GOOS)
}
