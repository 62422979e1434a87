package sandbox_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/nwdes/nwdes/sandbox"
)

// mqOpen is a perl line that calls mq_open(2) on "nwdes-q" with flags
// (no C library wrapper is needed, nor any program outside the roots).
func mqOpen(flags string) string {
	return `perl -MPOSIX -e 'my $n = {x86_64 => 240, aarch64 => 180}->{(POSIX::uname())[4]} or die "arch"; my $q = "nwdes-q"; my $r = syscall($n, $q, ` + flags + `, 0600, 0); print $r >= 0 ? "mq found\n" : "mq none\n"'`
}

// helperStart is a shell line printing when the job's pid 1, its helper,
// started (clock ticks since boot): two jobs that print the same ran in
// one helper.
const helperStart = `echo helper $(sed 's/.*) //' /proc/1/stat | cut -d' ' -f20)`

func requireLanes(t *testing.T) {
	t.Helper()
	requireWall(t)
	if abi, err := ll.LandlockGetABIVersion(); err != nil || abi < 6 {
		t.Skip("a lane shares its helper only where Landlock scopes signals (ABI 6)")
	}
}

func laneRun(t *testing.T, l *sandbox.Lane, j *sandbox.Job, c sandbox.Command, line string) sandbox.Result {
	t.Helper()
	c.Args = sandbox.Shell(line)
	res, err := l.Run(context.Background(), j, c)
	if err != nil {
		t.Fatalf("run %q: %v", line, err)
	}
	return res
}

func field(out, name string) string {
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(l, name+" "); ok {
			return v
		}
	}
	return ""
}

func TestAJobOfALaneLeavesNothingToTheNext(t *testing.T) {
	t.Parallel()
	requireLanes(t)
	w := newWall(t)
	lane := w.NewLane()
	defer lane.Close()
	first, err := w.NewJob()
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	// Made ahead: the next job's directory is on disk while the first runs.
	next, err := w.NewJob()
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	mark := sleeperMark()
	c := sandbox.Command{JobAt: sandbox.FixedJobDir, NoNetwork: true}
	res := laneRun(t, lane, first, c, helperStart+`
		setsid sh -c '(sleep `+mark+`.25 &) ; sleep `+mark+`.5 &' ; sleep `+mark+`.75 &
		echo left > $TMPDIR/left; echo left > $HOME/left; echo left > left
		(echo left > /tmp/left; echo left > `+next.Work+`/left; echo left > /proc/1/root`+next.Work+`/left) 2>/dev/null
		ipcmk -Q >/dev/null && ipcmk -M 4096 >/dev/null && ipcmk -S 1 >/dev/null && echo sysv made
		`+mqOpen("0100|02")+` # the wall refuses it (EACCES) with a helper of its own too
		ipcs -q -m -s | grep -c '^0x'`)
	out := string(res.Stdout.Tail)
	if res.End != sandbox.EndExit || res.Survivors != 0 || !strings.Contains(out, "sysv made\n") || !strings.HasSuffix(out, "\n3\n") {
		t.Fatalf("the first job: end %s survivors %d\n%s%s", res.End, res.Survivors, out, res.Stderr.Tail)
	}
	if pids := processesNamed("sleep " + mark); len(pids) > 0 {
		t.Fatalf("sleepers %v outlived the first job", pids)
	}
	if exists(filepath.Join(next.Work, "left")) {
		t.Fatal("the first job wrote into the next job's directory")
	}
	res = laneRun(t, lane, next, c, helperStart+`
		ls -A $TMPDIR $HOME . 2>&1
		for p in /proc/[0-9]*; do tr '\0' ' ' < $p/cmdline; echo; done
		echo sysv $(ipcs -q -m -s | grep -c '^0x')
		`+mqOpen("0"))
	out2 := string(res.Stdout.Tail) + string(res.Stderr.Tail)
	if res.End != sandbox.EndExit || res.Survivors != 0 {
		t.Fatalf("the next job: end %s survivors %d\n%s", res.End, res.Survivors, out2)
	}
	if h := field(out, "helper"); h == "" || field(out2, "helper") != h {
		t.Fatalf("the two jobs ran in helpers started at %q and %q, not in the lane's one", h, field(out2, "helper"))
	}
	if strings.Contains(out2, "left") || strings.Contains(out2, "sleep") || !strings.Contains(out2, "sysv 0\n") || !strings.Contains(out2, "mq none\n") {
		t.Fatalf("the next job found what the first left:\n%s", out2)
	}
}

func TestALaneRunsAJobAsItsOwnHelperDoes(t *testing.T) {
	t.Parallel()
	requireLanes(t)
	w := newWall(t)
	lane := w.NewLane()
	defer lane.Close()
	// One refusal only (the write to /etc): which of two the wall names
	// first depends on which stream is read first.
	line := `id -u; pwd; echo $HOME $TMPDIR $PATH; ls -A /nwdes/job; ls /proc/1/root >/dev/null 2>&1 || echo denied
		grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs|Seccomp):' /proc/self/status; sort /proc/self/limits
		awk '{print $5, $6}' /proc/self/mountinfo; ipcs -q -m -s | grep -c '^0x'; ` + helperStart + `; echo x > /etc/x; exit 3`
	var results [2][]sandbox.Result
	for i := 0; i < 4; i++ {
		j, err := w.NewJob()
		if err != nil {
			t.Fatal(err)
		}
		c := sandbox.Command{JobAt: sandbox.FixedJobDir, NoNetwork: true}
		if i%2 == 0 {
			results[0] = append(results[0], laneRun(t, lane, j, c, line))
		} else {
			c.Args = sandbox.Shell(line)
			res, err := j.Run(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			results[1] = append(results[1], res)
		}
		j.Close()
	}
	// All the same but the helper's start: one for the lane's jobs,
	// another for each job run alone.
	withoutHelper := func(r sandbox.Result) string {
		h := field(string(r.Stdout.Tail), "helper")
		if h == "" || r.Stdout.Truncated() {
			t.Fatalf("no whole output with the helper's start: %q", r.Stdout.Tail)
		}
		return strings.Replace(string(r.Stdout.Tail), "helper "+h+"\n", "", 1)
	}
	if h0, h1 := field(string(results[0][0].Stdout.Tail), "helper"), field(string(results[0][1].Stdout.Tail), "helper"); h0 != h1 ||
		h0 == field(string(results[1][0].Stdout.Tail), "helper") {
		t.Fatalf("helpers started at %q and %q through the lane, %q alone", h0, h1, field(string(results[1][0].Stdout.Tail), "helper"))
	}
	for k := range 2 {
		l, a := results[0][k], results[1][k]
		if l.End != a.End || l.ExitCode != a.ExitCode || l.Survivors != a.Survivors || withoutHelper(l) != withoutHelper(a) ||
			l.Stderr.SHA256 != a.Stderr.SHA256 || !reflect.DeepEqual(l.Enforced, a.Enforced) || !reflect.DeepEqual(l.Refused, a.Refused) {
			t.Fatalf("through the lane: %s %d, %d survivors, refused %+v, enforced %+v\n%s%s\nwith a helper of its own: %s %d, %d survivors, refused %+v, enforced %+v\n%s%s",
				l.End, l.ExitCode, l.Survivors, l.Refused, l.Enforced, l.Stdout.Tail, l.Stderr.Tail, a.End, a.ExitCode, a.Survivors, a.Refused, a.Enforced, a.Stdout.Tail, a.Stderr.Tail)
		}
	}
	if r := results[0][0]; r.End != sandbox.EndWall || r.ExitCode != 3 || !r.Enforced.View || !r.Enforced.Signals || len(r.Enforced.Missing) != 0 ||
		!strings.Contains(string(r.Stdout.Tail), "\ndenied\n") {
		t.Fatalf("end %s exit %d enforced %+v\n%s", r.End, r.ExitCode, r.Enforced, r.Stdout.Tail)
	}
}

func TestALaneEndsItsHelperAfterAJobItHadToEnd(t *testing.T) {
	t.Parallel()
	requireLanes(t)
	w := newWall(t)
	run, _ := laneJobs(t, w, false)
	a := run(sandbox.Command{}, helperStart)
	b := run(sandbox.Command{}, helperStart)
	d := run(sandbox.Command{Deadline: 2 * time.Second}, helperStart+"; trap '' TERM; sleep 30")
	e := run(sandbox.Command{}, helperStart)
	ha, hb, hd, he := field(string(a.Stdout.Tail), "helper"), field(string(b.Stdout.Tail), "helper"), field(string(d.Stdout.Tail), "helper"), field(string(e.Stdout.Tail), "helper")
	if d.End != sandbox.EndDeadline || d.Survivors != 0 {
		t.Fatalf("the job at its deadline: end %s survivors %d", d.End, d.Survivors)
	}
	if ha == "" || hb != ha || hd != ha || he == "" || he == ha {
		t.Fatalf("helpers started at %q %q %q, then %q: want one for the first three, another after the deadline", ha, hb, hd, he)
	}
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// Not parallel: it counts the lane helpers this test process started (its
// children; other test binaries on the machine may run lanes meanwhile).
func TestAWarmedLaneHasItsHelperBeforeItsFirstJobAndCloseEndsIt(t *testing.T) {
	requireLanes(t)
	w := newWall(t)
	lane := w.NewLane()
	lane.Warm(true)
	if !awaitChildNamed("git-nwdes __nwdes-wall-lane", 10*time.Second) {
		t.Fatal("Warm started no helper")
	}
	j, err := w.NewJob()
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	res := laneRun(t, lane, j, sandbox.Command{NoNetwork: true}, "echo ok")
	if res.End != sandbox.EndExit || string(res.Stdout.Tail) != "ok\n" || !res.Enforced.View {
		t.Fatalf("end %s %q enforced %+v", res.End, res.Stdout.Tail, res.Enforced)
	}
	if err := lane.Close(); err != nil {
		t.Fatal(err)
	}
	if pids := childrenNamed("git-nwdes __nwdes-wall-lane"); len(pids) > 0 {
		t.Fatalf("lane helpers %v outlived Close", pids)
	}
}

func TestAJobOfALaneWritesItsOwnCopyOfASharedCacheAndTheNextSeesNoneOfIt(t *testing.T) {
	t.Parallel()
	requireLanes(t)
	w := newWall(t)
	dir, file := sharedCache(t)
	w.Caches = []string{dir}
	runIn, _ := laneJobs(t, w, true)
	run := func(line string) sandbox.Result { return runIn(sandbox.Command{}, line) }
	first := run("chmod u+w " + file + "; echo planted >> " + file + "; echo planted > " + dir + "/new; cat " + file + " " + dir + "/new")
	next := run("cat " + file + "; ls " + dir)
	if b, _ := os.ReadFile(file); string(b) != "package m\n" || exists(filepath.Join(dir, "new")) {
		t.Fatalf("the host's cache was changed: %q", b)
	}
	if h := field(string(first.Stdout.Tail), "helper"); h == "" || field(string(next.Stdout.Tail), "helper") != h {
		t.Fatalf("not one helper: %q %q", first.Stdout.Tail, next.Stdout.Tail)
	}
	if len(first.Enforced.Caches) != 1 || first.Enforced.Caches[0].Mode != sandbox.CacheOverlay || !strings.Contains(string(first.Stdout.Tail), "package m\nplanted\nplanted\n") {
		t.Fatalf("the first job: %+v\n%s%s", first.Enforced.Caches, first.Stdout.Tail, first.Stderr.Tail)
	}
	if strings.Contains(string(next.Stdout.Tail), "planted") || strings.Contains(string(next.Stdout.Tail), "new") {
		t.Fatalf("the next job saw the first's copy:\n%s", next.Stdout.Tail)
	}
}

// pidNS is a shell line printing the job's pid namespace, whose init is
// its helper.
const pidNS = `echo pidns $(readlink /proc/self/ns/pid)`

// laneHelperPid finds the lane helper (on the host) that is the init of
// the pid namespace a job's pidNS line names.
func laneHelperPid(t *testing.T, out string) int {
	t.Helper()
	ns := field(out, "pidns")
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if !bytes.Contains(b, []byte("__nwdes-wall-lane")) {
			continue
		}
		if l, _ := os.Readlink("/proc/" + e.Name() + "/ns/pid"); ns != "" && l == ns {
			return pid
		}
	}
	t.Fatalf("no lane helper is the init of %q", ns)
	return 0
}

func TestAJobOfALaneCannotChangeTheLimitsOfItsHelper(t *testing.T) {
	t.Parallel()
	requireLanes(t)
	w := newWall(t)
	runIn, _ := laneJobs(t, w, true)
	run := func(line string) sandbox.Result { return runIn(sandbox.Command{}, line) }
	first := run(`prlimit --pid 1 --nofile=20:20 --fsize=2:2 --stack=65536 && echo lowered; ulimit -S -n 100 && echo own $(ulimit -S -n)`)
	next := run(`echo limits $(ulimit -n) $(ulimit -f) $(ulimit -s)`)
	if strings.Contains(string(first.Stdout.Tail), "lowered") || !strings.Contains(string(first.Stdout.Tail), "own 100\n") {
		t.Fatalf("the first job: %s%s", first.Stdout.Tail, first.Stderr.Tail)
	}
	var stack unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_STACK, &stack); err != nil {
		t.Fatal(err)
	}
	d := sandbox.DefaultLimits()
	want := strconv.FormatUint(d.OpenFiles, 10) + " " + strconv.FormatUint(d.FileSize/512, 10) + " " + strconv.FormatUint(stack.Cur/1024, 10)
	if got := field(string(next.Stdout.Tail), "limits"); got != want {
		t.Fatalf("the next job has limits %q, want %q", got, want)
	}
	if h := field(string(first.Stdout.Tail), "helper"); h == "" || field(string(next.Stdout.Tail), "helper") != h {
		t.Fatalf("not one helper: %q %q", first.Stdout.Tail, next.Stdout.Tail)
	}
}

func TestALaneWhoseHelperLimitsChangedRunsTheNextJobElsewhereUnderItsOwn(t *testing.T) {
	t.Parallel()
	requireLanes(t)
	w := newWall(t)
	lane := w.NewLane()
	defer lane.Close()
	c := sandbox.Command{JobAt: sandbox.FixedJobDir, NoNetwork: true}
	j, err := w.NewJob()
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	first := laneRun(t, lane, j, c, helperStart+"; "+pidNS)
	h := field(string(first.Stdout.Tail), "helper")
	// What another process of the user may do (the kernel allows it):
	// the lane must not run a job under it, nor fail the job for it.
	low := unix.Rlimit{Cur: 1024, Max: 1024}
	if err := unix.Prlimit(laneHelperPid(t, string(first.Stdout.Tail)), unix.RLIMIT_FSIZE, &low, nil); err != nil {
		t.Fatal(err)
	}
	next := laneRun(t, lane, j, c, helperStart+"; echo fsize $(ulimit -f); head -c 4096 /dev/zero > big && wc -c < big")
	d := sandbox.DefaultLimits()
	out := string(next.Stdout.Tail)
	if next.End != sandbox.EndExit || field(out, "fsize") != strconv.FormatUint(d.FileSize/512, 10) || !strings.HasSuffix(out, "\n4096\n") ||
		next.Enforced.Limits.FileSize != d.FileSize {
		t.Fatalf("the next job: end %s enforced %+v\n%s%s", next.End, next.Enforced.Limits, out, next.Stderr.Tail)
	}
	if field(out, "helper") == h {
		t.Fatal("the next job ran in the helper whose limits changed")
	}
	again := laneRun(t, lane, j, c, helperStart)
	if a := field(string(again.Stdout.Tail), "helper"); a == "" || a == h {
		t.Fatalf("the job after runs in %q, want a new lane helper", a)
	}
}

// helperTicks is the CPU time a process has spent, in clock ticks.
func helperTicks(t *testing.T, pid int) uint64 {
	t.Helper()
	st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(st[bytes.LastIndexByte(st, ')')+1:]))
	u, _ := strconv.ParseUint(f[11], 10, 64)
	s, _ := strconv.ParseUint(f[12], 10, 64)
	return u + s
}

// laneJobs returns a lane of w, closed when the test ends, and a function
// that runs line in a new job of w through it; fixed puts the job in a
// fixed directory without network, with helperStart in front of line.
func laneJobs(t *testing.T, w *sandbox.Wall, fixed bool) (func(c sandbox.Command, line string) sandbox.Result, *sandbox.Lane) {
	lane := w.NewLane()
	t.Cleanup(func() { lane.Close() })
	return func(c sandbox.Command, line string) sandbox.Result {
		j, err := w.NewJob()
		if err != nil {
			t.Fatal(err)
		}
		defer j.Close()
		if fixed {
			c.JobAt, c.NoNetwork = sandbox.FixedJobDir, true
			line = helperStart + "; " + line
		}
		return laneRun(t, lane, j, c, line)
	}, lane
}

// tgkill is a perl line that sends each signal of sigs to every thread
// of pid 1 (the lane's helper) and says how many it could signal.
func tgkill(sigs string) string {
	return `perl -MPOSIX -e 'my $n = {x86_64 => 234, aarch64 => 131}->{(POSIX::uname())[4]} or die "arch"; my $k = 0; opendir D, "/proc/1/task"; for my $t (readdir D) { next unless $t =~ /^\d+$/; for my $s (` + sigs + `) { $k++ if syscall($n, 1, $t+0, $s) == 0 } } print "signalled $k\n"'`
}

// TestAJobOfALaneCanSignalNoThreadOfItsHelper: the thread that built a
// job's wall ends once the program is forked, so no thread of the helper
// is in the job's Landlock domain, and the job can signal none (nor the
// whole helper through one: a signal to a thread of a process is the
// process's). A job that could would crash the helper (QUIT, ILL, SEGV),
// make it forward a TERM, or make it spend the CPU time its limit counts
// across jobs. A program that cannot start is reported so, and the next
// job still runs in the same helper.
func TestAJobOfALaneCanSignalNoThreadOfItsHelper(t *testing.T) {
	t.Parallel()
	requireLanes(t)
	w := newWall(t)
	run, lane := laneJobs(t, w, true)
	// QUIT, ILL, TRAP, ABRT, SEGV, SYS, USR2, TERM, CHLD.
	first := run(sandbox.Command{}, tgkill("3, 4, 5, 6, 11, 31, 12, 15, 17")+"; kill -TERM 1 2>/dev/null || echo refused; echo done")
	if first.End != sandbox.EndExit || !strings.Contains(string(first.Stdout.Tail), "signalled 0\nrefused\ndone\n") {
		t.Fatalf("the first job: end %s signal %q %s%s", first.End, first.Signal, first.Stdout.Tail, first.Stderr.Tail)
	}
	j, err := w.NewJob()
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	missing, err := lane.Run(t.Context(), j, sandbox.Command{Args: []string{"/nonexistent/program"}, JobAt: sandbox.FixedJobDir, NoNetwork: true})
	if err != nil || missing.End != sandbox.EndStartFailed {
		t.Fatalf("a program that is not there: end %s, %s", missing.End, missing.Err)
	}
	next := run(sandbox.Command{}, "echo ok")
	if h := field(string(first.Stdout.Tail), "helper"); h == "" || field(string(next.Stdout.Tail), "helper") != h || next.End != sandbox.EndExit {
		t.Fatalf("the next job: end %s\n%s", next.End, next.Stdout.Tail)
	}
}

func TestALaneEndsItsHelperBeforeItsCPUTimeCouldReachItsLimit(t *testing.T) {
	t.Parallel()
	requireLanes(t)
	w := newWall(t)
	// Long enough that a job of a few forks ends well inside it on a
	// loaded CI machine where a fork costs milliseconds: a job ended at
	// its deadline ends its helper, and the test would look for it in vain.
	deadline := 3 * time.Second
	// What a helper may spend while it holds one job, and a second.
	need := sandbox.LaneCPUFor(deadline, w.Grace)
	w.Limits.CPUSeconds = need + 1
	run, _ := laneJobs(t, w, true)
	// Orphans, each reaped by the helper: jobs of a few run until it has
	// spent a tick, so no one job needs to be long.
	orphans := "for i in $(seq 10); do (true &); done"
	first := run(sandbox.Command{Deadline: deadline}, pidNS+"; "+orphans)
	if first.End != sandbox.EndExit {
		t.Fatalf("the first job: end %s\n%s%s", first.End, first.Stdout.Tail, first.Stderr.Tail)
	}
	h := field(string(first.Stdout.Tail), "helper")
	for pid := laneHelperPid(t, string(first.Stdout.Tail)); helperTicks(t, pid) == 0; {
		if r := run(sandbox.Command{Deadline: deadline}, orphans); field(string(r.Stdout.Tail), "helper") != h {
			t.Fatalf("a job ran in another helper before the first had spent any CPU time")
		}
	}
	next := run(sandbox.Command{Deadline: deadline}, "echo ok")
	if n := field(string(next.Stdout.Tail), "helper"); n == "" || n == h || next.End != sandbox.EndExit {
		t.Fatalf("the job after the helper spent CPU time ran in %q (the first in %q), end %s", n, h, next.End)
	}
	// One whose deadline alone could reach the limit runs with a helper
	// of its own (/proc/1 is then not a lane helper).
	long := run(sandbox.Command{Deadline: 10 * deadline}, `tr '\0' ' ' < /proc/1/cmdline`)
	if long.End != sandbox.EndExit || strings.Contains(string(long.Stdout.Tail), "__nwdes-wall-lane") ||
		long.Enforced.Limits.CPUSeconds != need+1 {
		t.Fatalf("the long job: end %s limits %+v\n%s%s", long.End, long.Enforced.Limits, long.Stdout.Tail, long.Stderr.Tail)
	}
}

func TestALaneRunAfterCloseStartsNoLaneHelper(t *testing.T) {
	t.Parallel()
	requireLanes(t)
	w := newWall(t)
	lane := w.NewLane()
	lane.Close()
	j, err := w.NewJob()
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	res, err := lane.Run(context.Background(), j, sandbox.Command{Args: sandbox.Shell(`tr '\0' ' ' < /proc/1/cmdline`), NoNetwork: true})
	if err != nil || res.End != sandbox.EndExit || strings.Contains(string(res.Stdout.Tail), "__nwdes-wall-lane") {
		t.Fatalf("err %v end %s: %s%s", err, res.End, res.Stdout.Tail, res.Stderr.Tail)
	}
}

func TestTheHelperOfALaneShowsItsJobsNothingOfTheHostButTheWallsRoots(t *testing.T) {
	t.Parallel()
	requireLanes(t)
	w := newWall(t)
	lane := w.NewLane()
	defer lane.Close()
	j, err := w.NewJob()
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	res := laneRun(t, lane, j, sandbox.Command{JobAt: sandbox.FixedJobDir, NoNetwork: true},
		helperStart+`; awk '{print "mount", $5}' /proc/1/mountinfo; ls /proc/1/root/ >/dev/null 2>&1 || echo root denied`)
	out := string(res.Stdout.Tail)
	if res.End != sandbox.EndExit || res.Stdout.Truncated() || !strings.Contains(out, "\nroot denied\n") {
		t.Fatalf("end %s\n%s%s", res.End, out, res.Stderr.Tail)
	}
	temp, err := filepath.EvalSymlinks(w.TempRoot)
	if err != nil {
		t.Fatal(err)
	}
	devices := map[string]bool{"/dev/null": true, "/dev/zero": true, "/dev/full": true, "/dev/random": true, "/dev/urandom": true}
	n := 0
	for _, l := range strings.Split(out, "\n") {
		mp, ok := strings.CutPrefix(l, "mount ")
		if !ok {
			continue
		}
		n++
		if mp != "/" && !devices[mp] && !w.Holds(mp, []string{temp, "/proc"}) {
			t.Errorf("the lane's helper shows %s, outside the wall's roots", mp)
		}
	}
	if n == 0 {
		t.Fatalf("no mount of the helper read:\n%s", out)
	}
}

func TestAJobOfALaneThatWritesOutsideTheWallsTemporaryRootRunsWithAHelperOfItsOwn(t *testing.T) {
	t.Parallel()
	requireLanes(t)
	w := newWall(t)
	lane := w.NewLane()
	defer lane.Close()
	j, err := w.NewJob()
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	c := sandbox.Command{JobAt: sandbox.FixedJobDir, NoNetwork: true}
	first := laneRun(t, lane, j, c, helperStart)
	out := t.TempDir()
	c.Write = []string{out}
	res := laneRun(t, lane, j, c, helperStart+"; echo made > "+out+"/made; tr '\\0' ' ' < /proc/1/cmdline")
	if res.End != sandbox.EndExit || strings.Contains(string(res.Stdout.Tail), "__nwdes-wall-lane") || !exists(filepath.Join(out, "made")) {
		t.Fatalf("end %s\n%s%s", res.End, res.Stdout.Tail, res.Stderr.Tail)
	}
	c.Write = nil
	again := laneRun(t, lane, j, c, helperStart)
	if h := field(string(first.Stdout.Tail), "helper"); h == "" || field(string(again.Stdout.Tail), "helper") != h {
		t.Fatalf("the lane's helper did not serve the job after: %q %q", first.Stdout.Tail, again.Stdout.Tail)
	}
}
