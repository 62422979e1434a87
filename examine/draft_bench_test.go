package examine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/internal/gittest"
)

// BenchmarkDraftAdd times one observation add on a draft of 1,500
// observations against its twin, an add on a draft of 10, in one
// repository, the two alternating. The goal (issue 26) is a ratio of at
// most 1.2: the cost of an add should not grow with the draft. Each
// iteration grows both drafts by one, which b.N small beside 1,500 does not
// change.
func BenchmarkDraftAdd(b *testing.B) {
	dir := gittest.Init(b, false)
	const contract = "# REQUEST\nr\n# ACCEPTANCE CRITERIA\nE1. one\n"
	gittest.WriteFile(b, dir, ".nwave/features/small.md", contract)
	gittest.WriteFile(b, dir, ".nwave/features/big.md", contract)
	gittest.Git(b, dir, "add", "-A")
	gittest.Git(b, dir, "commit", "-q", "-m", "contracts")
	loc, err := gitrepo.Discover(dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	st, err := gitstore.Open(loc, gitstore.Options{Registry: gitstore.MustRegistry(examine.Register)})
	if err != nil {
		b.Fatal(err)
	}
	clock := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	x := &examine.Examiner{Store: st, Now: func() time.Time { clock = clock.Add(time.Second); return clock }}
	ctx := context.Background()
	add := func(feature string, i int) time.Duration {
		start := time.Now()
		if _, err := x.AddObservation(ctx, examine.Target{Feature: feature}, examine.SourceExaminer, fmt.Appendf(nil, "greet Ada printed Hello, Ada. (run %d)\n", i)); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	for f, n := range map[string]int{"small": 10, "big": 1500} {
		if _, err := x.Open(ctx, examine.Target{Feature: f}, false); err != nil {
			b.Fatal(err)
		}
		for i := range n {
			add(f, i)
		}
	}
	var took [2]time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k := 0; k < 2; k++ {
			j := (i + k) % 2
			took[j] += add([]string{"small", "big"}[j], i)
		}
	}
	b.StopTimer()
	ms := func(d time.Duration) float64 { return float64(d) / float64(b.N) / 1e6 }
	b.ReportMetric(ms(took[0]), "add-at-10-ms/op")
	b.ReportMetric(ms(took[1]), "add-at-1500-ms/op")
	b.ReportMetric(float64(took[1])/float64(took[0]), "ratio")
}
