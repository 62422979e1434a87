package gittest

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BuildTags are the build tags `make build` uses (see the Makefile).
const BuildTags = "urfave_cli_no_docs"

// BuildNwdes builds git-nwdes into out as `make build` does (static, with
// BuildTags), so that benchmarks time the binary users get. It runs the go
// command from the module's root.
func BuildNwdes(out string) error {
	root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		return fmt.Errorf("find the module's root: %v", err)
	}
	build := exec.Command("go", "build", "-trimpath", "-tags", BuildTags, "-o", out, "./cmd/git-nwdes")
	build.Dir = strings.TrimSpace(string(root))
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build git-nwdes: %v\n%s", err, b)
	}
	return nil
}

// Alternate runs each command (argv) b.N times in dir with env, rotating
// which goes first in each round so that a shared machine's load falls on
// them alike, and reports each one's wall and CPU time (user and system:
// what the process itself cost, which waiting for a CPU does not inflate)
// per run in milliseconds, named by label, with the first command's ratios
// to the second ("ratio", "cpu-ratio"). Every run must succeed. It returns
// each command's mean wall and CPU time per run, in milliseconds, for
// metrics of the caller's own.
func Alternate(b *testing.B, dir string, env []string, label []string, cmds ...[]string) (wallMS, cpuMS []float64) {
	b.Helper()
	runs := make([]Side, len(cmds))
	for j, argv := range cmds {
		runs[j] = Side{Cmd: func() *exec.Cmd { return exec.Command(argv[0], argv[1:]...) }}
	}
	return AlternateRuns(b, dir, env, label, runs...)
}

// Side is one side of AlternateRuns: Cmd makes the command afresh for each
// run (its stdin included), and a run whose output lacks Want fails.
type Side struct {
	Cmd  func() *exec.Cmd
	Want string
}

// AlternateRuns is Alternate for commands that need more than an argv.
func AlternateRuns(b *testing.B, dir string, env []string, label []string, runs ...Side) (wallMS, cpuMS []float64) {
	b.Helper()
	wall, cpu := make([]time.Duration, len(runs)), make([]time.Duration, len(runs))
	run := func(j int) {
		cmd := runs[j].Cmd()
		cmd.Dir, cmd.Env = dir, env
		start := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), runs[j].Want) {
			b.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
		}
		wall[j] += time.Since(start)
		cpu[j] += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	for k := range runs { // page the binaries in
		run(k)
	}
	clear(wall)
	clear(cpu)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k := range runs {
			run((i + k) % len(runs))
		}
	}
	b.StopTimer()
	ms := func(d time.Duration) float64 { return float64(d) / float64(b.N) / 1e6 }
	wallMS, cpuMS = make([]float64, len(runs)), make([]float64, len(runs))
	for j := range runs {
		wallMS[j], cpuMS[j] = ms(wall[j]), ms(cpu[j])
		b.ReportMetric(wallMS[j], label[j]+"-ms/op")
		b.ReportMetric(cpuMS[j], label[j]+"-cpu-ms/op")
	}
	b.ReportMetric(float64(wall[0])/float64(wall[1]), "ratio")
	b.ReportMetric(float64(cpu[0])/float64(cpu[1]), "cpu-ratio")
	return wallMS, cpuMS
}

// CPUPerOp starts counting this process's processor time (user and
// system) and returns what reports it as cpu-ms/op when b is done: defer
// gittest.CPUPerOp(b)() after b.ResetTimer.
func CPUPerOp(b *testing.B) func() {
	start := processCPU()
	return func() { b.ReportMetric(float64(processCPU()-start)/float64(b.N)/1e6, "cpu-ms/op") }
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
