package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/nwdes/nwdes/internal/gittest"
)

// BenchmarkStart times a fresh process answering `version`: git-nwdes built
// as `make build` builds it, against its twin `git version`, and an empty
// static Go program as the floor a Go binary cannot go under. Each
// iteration runs all three, the order rotating, so that the machine's load
// falls on them alike. The goal (issue 26) is a ratio of at most 1.3.
func BenchmarkStart(b *testing.B) {
	dir := b.TempDir()
	nwdes := filepath.Join(dir, "git-nwdes")
	if err := gittest.BuildNwdes(nwdes); err != nil {
		b.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(filepath.Join(dir, "empty.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", empty, filepath.Join(dir, "empty.go"))
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build the empty program: %v\n%s", err, out)
	}
	env := gittest.Env(dir)
	// run returns the wall time and the CPU time (user and system) of one
	// run: on a shared machine the wall time includes waiting for a CPU,
	// while the CPU time is what the process itself cost.
	run := func(name string, args ...string) (wall, cpu time.Duration) {
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = dir, env
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%s: %v\n%s", name, err, out)
		}
		return time.Since(start), cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	runs := []func() (time.Duration, time.Duration){
		func() (time.Duration, time.Duration) { return run(nwdes, "version") },
		func() (time.Duration, time.Duration) { return run("git", "version") },
		func() (time.Duration, time.Duration) { return run(empty) },
	}
	for _, r := range runs {
		r() // page the binaries in
	}
	var wall, cpu [3]time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k := range runs {
			j := (i + k) % len(runs)
			w, c := runs[j]()
			wall[j] += w
			cpu[j] += c
		}
	}
	b.StopTimer()
	ms := func(d time.Duration) float64 { return float64(d) / float64(b.N) / 1e6 }
	b.ReportMetric(ms(wall[0]), "nwdes-ms/op")
	b.ReportMetric(ms(wall[1]), "git-ms/op")
	b.ReportMetric(ms(wall[2]), "empty-go-ms/op")
	b.ReportMetric(float64(wall[0])/float64(wall[1]), "ratio")
	b.ReportMetric(ms(cpu[0]), "nwdes-cpu-ms/op")
	b.ReportMetric(ms(cpu[1]), "git-cpu-ms/op")
	b.ReportMetric(float64(cpu[0])/float64(cpu[1]), "cpu-ratio")
}
