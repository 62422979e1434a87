//go:build !linux

package sandbox

import "time"

// CPU is the processor time the job's processes have used so far; where
// it cannot be read (here: no /proc to walk), ok is false.
func (p *Process) CPU() (time.Duration, bool) { return 0, false }
