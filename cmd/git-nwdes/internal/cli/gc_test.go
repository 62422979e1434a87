package cli

import (
	"math"
	"runtime/debug"
	"testing"
)

func TestAVerbThatReadsEveryRecordPacesTheCollectorUnlessTheUserDid(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	tests := []struct {
		name    string
		env     map[string]string
		percent int
		limit   int64
	}{
		{"no GOGC nor GOMEMLIMIT: the verb's pacing", nil, wholeReadGCPercent, wholeReadMemoryLimit},
		{"GOGC set: left to it", map[string]string{"GOGC": "50"}, 100, math.MaxInt64},
		{"GOMEMLIMIT set: left to it", map[string]string{"GOMEMLIMIT": "2GiB"}, 100, math.MaxInt64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			debug.SetGCPercent(100)
			debug.SetMemoryLimit(math.MaxInt64)
			s := &session{env: Env{Getenv: func(k string) string { return tt.env[k] }}}
			s.wholeReadGC()
			if p := debug.SetGCPercent(100); p != tt.percent {
				t.Errorf("GC percent %d, want %d", p, tt.percent)
			}
			if l := debug.SetMemoryLimit(-1); l != tt.limit {
				t.Errorf("memory limit %d, want %d", l, tt.limit)
			}
		})
	}
}
