package sandbox_test

import (
	"context"
	"os/exec"
	"testing"

	"github.com/nwdes/nwdes/sandbox"
)

// BenchmarkExecTrue is the baseline: a plain fork and exec of /bin/true.
func BenchmarkExecTrue(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWallTrue runs /bin/true inside the wall (helper re-exec, pid
// namespace, private /proc, Landlock, limits) in a job directory made for
// it: the wall's start-up overhead is this minus BenchmarkExecTrue (the
// goal was at most 5 ms; docs/sandbox.md has the measured figures).
func BenchmarkWallTrue(b *testing.B) { benchWall(b, false) }

// BenchmarkWallTrueNoNetwork adds an empty network namespace and the
// seccomp filter.
func BenchmarkWallTrueNoNetwork(b *testing.B) { benchWall(b, true) }

func benchWall(b *testing.B, noNetwork bool) {
	if err := sandbox.Available(true); err != nil {
		b.Skip(err)
	}
	w := &sandbox.Wall{Path: "/usr/bin:/bin", TempRoot: b.TempDir(), Strict: true, Limits: sandbox.Limits{AddressSpace: sandbox.Unlimited}}
	j, err := w.NewJob()
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := j.Run(context.Background(), sandbox.Command{Args: []string{"/bin/true"}, NoNetwork: noNetwork})
		if err != nil || res.End != sandbox.EndExit || res.ExitCode != 0 {
			b.Fatalf("%+v %v", res, err)
		}
	}
}

// BenchmarkWallJob is the cost of the job directory the wall makes and
// removes around a run (Wall.Run does both; gate run makes one per oracle).
func BenchmarkWallJob(b *testing.B) {
	w := &sandbox.Wall{TempRoot: b.TempDir()}
	for i := 0; i < b.N; i++ {
		j, err := w.NewJob()
		if err != nil {
			b.Fatal(err)
		}
		if err := j.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
