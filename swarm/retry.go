package swarm

import (
	"math/rand/v2"
	"time"
)

// RetryPolicy says how a job that failed to launch is tried again: one
// that failed to start, or whose harness exited within LaunchGrace of its
// start with no result. Any other recorded failure finishes the card.
type RetryPolicy struct {
	// Attempts bounds the attempts at a card that failed to launch, the
	// first included (DefaultRetry's when 0).
	Attempts int
	// LaunchGrace is how soon after its start a harness that exits with
	// no result counts as a failed launch.
	LaunchGrace time.Duration
	// Backoff is the wait before the second attempt; each later one
	// waits twice the one before, at most MaxBackoff; each wait is
	// jittered to between half and one and a half of itself.
	Backoff, MaxBackoff time.Duration
}

// DefaultRetry is the policy of a supervisor that names none.
func DefaultRetry() RetryPolicy {
	return RetryPolicy{Attempts: 3, LaunchGrace: 10 * time.Second, Backoff: 2 * time.Second, MaxBackoff: time.Minute}
}

// policy is p with DefaultRetry's values where p has none.
func (p RetryPolicy) policy() RetryPolicy {
	d := DefaultRetry()
	if p.Attempts <= 0 {
		p.Attempts = d.Attempts
	}
	if p.LaunchGrace <= 0 {
		p.LaunchGrace = d.LaunchGrace
	}
	if p.Backoff <= 0 {
		p.Backoff = d.Backoff
	}
	if p.MaxBackoff <= 0 {
		p.MaxBackoff = max(d.MaxBackoff, p.Backoff)
	}
	return p
}

// wait is the jittered backoff after attempt n failed to launch; r is in
// [0, 1).
func (p RetryPolicy) wait(n int, r float64) time.Duration {
	d := p.Backoff
	for i := 1; i < n && d < p.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, p.MaxBackoff)
	return time.Duration(float64(d) * (0.5 + r))
}

func (s *Supervisor) jitter() float64 {
	if s.Rand != nil {
		if r := s.Rand(); r >= 0 && r < 1 {
			return r
		}
		return 0.5
	}
	return rand.Float64()
}
