package sandbox_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// BenchmarkLaneTrueNoNetwork is BenchmarkWallTrueNoNetwork through a
// lane: one helper for every run, each run still in its own thread,
// namespaces, view and wall (sandbox.Lane). The difference of the two is
// what a lane saves a job.
func BenchmarkLaneTrueNoNetwork(b *testing.B) {
	if err := sandbox.Available(true); err != nil {
		b.Skip(err)
	}
	w := &sandbox.Wall{Path: "/usr/bin:/bin", TempRoot: b.TempDir(), Strict: true, Limits: sandbox.Limits{AddressSpace: sandbox.Unlimited}}
	j, err := w.NewJob()
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	lane := w.NewLane()
	defer lane.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := lane.Run(context.Background(), j, sandbox.Command{Args: []string{"/bin/true"}, NoNetwork: true})
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

// goModule is a tiny module with one test, and a warm GOCACHE and
// GOMODCACHE for it: go test has already run there once.
func goModule(b *testing.B) (dir string, env []string) {
	b.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		b.Skip("no go on PATH")
	}
	root, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	dir = filepath.Join(root, "m")
	for _, d := range []string{dir, filepath.Join(root, "gocache"), filepath.Join(root, "gomodcache"), filepath.Join(root, "home")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	files := map[string]string{
		"go.mod":    "module example.com/m\n\ngo 1.22\n",
		"m.go":      "package m\n\nfunc Add(a, b int) int { return a + b }\n",
		"m_test.go": "package m\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"add\")\n\t}\n}\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	env = []string{"GOCACHE=" + filepath.Join(root, "gocache"), "GOMODCACHE=" + filepath.Join(root, "gomodcache"),
		"GOTOOLCHAIN=local", "GOFLAGS=-mod=mod", "GOPROXY=off", "PATH=" + filepath.Dir(goBin) + ":/usr/bin:/bin"}
	cmd := exec.Command(goBin, "test", "-count=1", ".")
	cmd.Dir, cmd.Env = dir, append(env, "HOME="+filepath.Join(root, "home"))
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("warm the cache: %v\n%s", err, out)
	}
	return dir, env
}

// BenchmarkGoTestWarmDirect runs go test of a tiny module with a warm
// GOCACHE and GOMODCACHE, directly: the baseline of
// BenchmarkGoTestWarmCacheOverlay.
func BenchmarkGoTestWarmDirect(b *testing.B) {
	dir, env := goModule(b)
	home := b.TempDir()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cmd := exec.Command("go", "test", "-count=1", ".")
		cmd.Dir, cmd.Env = dir, append(env, "HOME="+home)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v\n%s", err, out)
		}
	}
}

// BenchmarkGoTestWarmCacheOverlay runs the same go test inside the wall,
// each run in a job of its own, with GOCACHE and GOMODCACHE given as the
// wall's caches: each job sees them through an overlay of its own (docs/
// sandbox.md, Caches), so the warm entries are read and nothing is left.
func BenchmarkGoTestWarmCacheOverlay(b *testing.B) {
	if err := sandbox.Available(true); err != nil {
		b.Skip(err)
	}
	dir, env := goModule(b)
	var caches []string
	for _, kv := range env[:2] {
		caches = append(caches, kv[strings.IndexByte(kv, '=')+1:])
	}
	w := &sandbox.Wall{Path: env[len(env)-1][len("PATH="):], TempRoot: b.TempDir(), Strict: true, Caches: caches,
		Limits: sandbox.Limits{AddressSpace: sandbox.Unlimited}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := w.Run(context.Background(), sandbox.Command{
			Args: []string{"go", "test", "-count=1", "."}, Dir: dir, Read: []string{dir}, Set: env[:5], NoNetwork: true,
		})
		if err != nil || res.End != sandbox.EndExit || res.ExitCode != 0 {
			b.Fatalf("%+v %v\n%s", res, err, res.Stderr.Tail)
		}
		if i == 0 && (len(res.Enforced.Caches) != 2 || res.Enforced.Caches[0].Mode != sandbox.CacheOverlay) {
			b.Fatalf("the caches are not overlays: %+v", res.Enforced.Caches)
		}
	}
}
