package cli

import "runtime/debug"

// A verb that reads every record (fsck, ledger verify) allocates for each
// object it reads and keeps bounded caches of decoded objects. With the
// collector's default pacing (a cycle each time the heap doubles, from a
// few megabytes) collection was a sixth to a quarter of such a run's CPU
// (BenchmarkLedgerVerifyInProcess on an Intel VM: 116 cpu-ms/op at
// GOGC=100, 97 at 200, 87 at 400). A bigger heap costs page faults
// instead, each touched page once: on a VM where a fault is dear (a
// pagetable-virtualised AMD guest, 2026-12-02) `fsck` of a
// 1,000-observation draft took 9,100 faults and 7% more CPU at 400 than
// at 200, fsck of 1,000 examinations 5% more, and ledger verify the same.
// These verbs let the heap grow to three times what is live before
// collecting, under a soft limit that brings collection back as the heap
// nears it, so a large repository's run stays bounded. A user's GOGC or
// GOMEMLIMIT is left to rule, as the Go runtime read it.
const (
	wholeReadGCPercent   = 200
	wholeReadMemoryLimit = 1 << 30
)

// wholeReadGC sets the collector's pacing for a verb that reads every
// record (see wholeReadGCPercent).
func (s *session) wholeReadGC() {
	if s.env.Getenv("GOGC") != "" || s.env.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(wholeReadGCPercent)
	debug.SetMemoryLimit(wholeReadMemoryLimit)
}
