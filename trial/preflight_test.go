//go:build linux

package trial

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/refusal"
)

// The test binary is its own supervisor: run with NWDES_TRIAL_HELPER set
// it writes a heartbeat, idles, or exits, and never runs the tests.
func TestMain(m *testing.M) {
	switch os.Getenv("NWDES_TRIAL_HELPER") {
	case "heartbeat":
		poll(os.Getenv("NWDES_TRIAL_WITNESS"))
	case "idle":
		poll("")
	case "exit":
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// poll writes a counter to witness every 50 ms (nothing when witness is
// empty) until its parent is gone.
func poll(witness string) {
	parent := os.Getppid()
	for n := 0; os.Getppid() == parent; n++ {
		if witness != "" {
			_ = os.WriteFile(witness, []byte(strconv.Itoa(n)+"\n"), 0o644)
		}
		time.Sleep(50 * time.Millisecond)
	}
	os.Exit(0)
}

// helper starts the test binary as a supervisor; with setsid it leads a
// session of its own, as a supervisor that outlives its shell does. It
// is killed and reaped when the test ends.
func helper(t *testing.T, mode, witness string, setsid bool) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Dir = t.TempDir()
	cmd.Env = []string{"NWDES_TRIAL_HELPER=" + mode, "NWDES_TRIAL_WITNESS=" + witness}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: setsid}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

func statOf(t *testing.T, pid int) procStat {
	t.Helper()
	st, err := readProcStat("/proc", pid)
	if err != nil {
		t.Fatalf("read pid %d: %v", pid, err)
	}
	return st
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10s for %s", what)
		}
	}
}

func waitState(t *testing.T, pid int, state byte) {
	t.Helper()
	waitFor(t, "pid "+strconv.Itoa(pid)+" to reach state "+string(state), func() bool {
		st, err := readProcStat("/proc", pid)
		return err == nil && st.state == state
	})
}

func openStore(t *testing.T, dir string) *gitstore.Store {
	t.Helper()
	loc, err := gitrepo.Discover(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := gitstore.Open(loc, gitstore.Options{Registry: gitstore.MustRegistry(gitstore.OpenRegistry(), Register)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// supervised starts a heartbeat supervisor and returns a request naming
// it and its witness, with a window opening a minute from now.
func supervised(t *testing.T, setsid bool) (Request, *exec.Cmd) {
	t.Helper()
	witness := filepath.Join(t.TempDir(), "heartbeat")
	cmd := helper(t, "heartbeat", witness, setsid)
	waitFor(t, "the first heartbeat", func() bool { _, err := os.Stat(witness); return err == nil })
	return request(cmd.Process.Pid, statOf(t, cmd.Process.Pid).start, witness), cmd
}

func request(pid int, start uint64, witness string) Request {
	now := time.Now().UTC()
	return Request{
		Window:     WindowRequest{Open: now.Add(time.Minute).Format(time.RFC3339), Close: now.Add(time.Hour).Format(time.RFC3339)},
		Supervisor: SupervisorRequest{PID: pid, Start: start},
		Witness:    WitnessRequest{File: witness, IntervalMS: 300},
	}
}

func run(t *testing.T, in Request, st *gitstore.Store, pr probes) *Readings {
	t.Helper()
	if st == nil {
		st = openStore(t, gittest.Init(t, false))
	}
	if pr.proc == "" {
		pr.proc = "/proc"
	}
	r, err := preflight(context.Background(), in, st, nil, pr)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func expect(t *testing.T, r *Readings, name ReadingName, want Answer, detail string) {
	t.Helper()
	got, ok := r.Reading(name)
	if !ok {
		t.Fatalf("no %s reading in %s", name, r.JSON())
	}
	if got.Answer != want || !strings.Contains(got.Detail, detail) {
		t.Errorf("%s: %s (%s), want %s (%q)", name, got.Answer, got.Detail, want, detail)
	}
}

func TestASupervisorOutsideTheSessionThatAdvancesItsWitnessIsReady(t *testing.T) {
	t.Parallel()
	in, _ := supervised(t, true)
	r := run(t, in, nil, probes{})
	for _, name := range []ReadingName{ReadingWindow, ReadingSupervisor, ReadingSession, ReadingWitness, ReadingStore} {
		expect(t, r, name, AnswerTrue, "")
	}
	if !r.Ready() || r.Overall() != AnswerTrue {
		t.Fatalf("ready %v, overall %s: %s", r.Ready(), r.Overall(), r.JSON())
	}
	if r.Span.Last.Before(r.Span.First) || r.Span.Last.Sub(r.Span.First) < 300*time.Millisecond {
		t.Errorf("span %v..%v does not cover the witness interval", r.Span.First, r.Span.Last)
	}
	if w, _ := r.Reading(ReadingWindow); !w.At.Equal(r.Span.Last) {
		t.Errorf("the window was judged at %v, not at the last clock reading %v", w.At, r.Span.Last)
	}
}

func TestASupervisorStoppedBySignalIsNotRunning(t *testing.T) {
	t.Parallel()
	in, cmd := supervised(t, true)
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitState(t, cmd.Process.Pid, 'T')
	r := run(t, in, nil, probes{})
	expect(t, r, ReadingSupervisor, AnswerFalse, "stopped by a signal")
	expect(t, r, ReadingSession, AnswerTrue, "")
	if r.Overall() != AnswerFalse {
		t.Errorf("overall %s, want false", r.Overall())
	}
}

func TestAZombieSupervisorIsNotRunningThoughItStillShowsADetachedSession(t *testing.T) {
	t.Parallel()
	cmd := helper(t, "exit", "", true) // never waited for until cleanup: a zombie
	pid := cmd.Process.Pid
	waitState(t, pid, 'Z')
	in := request(pid, statOf(t, pid).start, filepath.Join(t.TempDir(), "none"))
	r := run(t, in, nil, probes{})
	expect(t, r, ReadingSupervisor, AnswerFalse, "zombie")
	expect(t, r, ReadingSession, AnswerTrue, "")
}

func TestASupervisorThatExitedAndWasReapedIsGone(t *testing.T) {
	t.Parallel()
	in, cmd := supervised(t, true)
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	r := run(t, in, nil, probes{})
	expect(t, r, ReadingSupervisor, AnswerFalse, "is gone")
	expect(t, r, ReadingSession, AnswerUnknown, "cannot be read")
}

func TestAPidWithAnotherStartTimeIsAnotherProcess(t *testing.T) {
	t.Parallel()
	in, _ := supervised(t, true)
	in.Supervisor.Start++
	r := run(t, in, nil, probes{})
	expect(t, r, ReadingSupervisor, AnswerFalse, "names another process")
	expect(t, r, ReadingSession, AnswerUnknown, "names another process")
}

func TestASupervisorInTheCallersSessionEndsWithItsShell(t *testing.T) {
	t.Parallel()
	in, _ := supervised(t, false)
	r := run(t, in, nil, probes{})
	expect(t, r, ReadingSupervisor, AnswerTrue, "")
	expect(t, r, ReadingSession, AnswerFalse, "the caller's session")
}

func TestAWitnessNobodyWritesDidNotAdvance(t *testing.T) {
	t.Parallel()
	cmd := helper(t, "idle", "", true)
	witness := filepath.Join(t.TempDir(), "heartbeat")
	gittest.WriteFile(t, filepath.Dir(witness), "heartbeat", "0\n")
	r := run(t, request(cmd.Process.Pid, statOf(t, cmd.Process.Pid).start, witness), nil, probes{})
	expect(t, r, ReadingSupervisor, AnswerTrue, "")
	expect(t, r, ReadingWitness, AnswerFalse, "did not advance")

	in := request(cmd.Process.Pid, statOf(t, cmd.Process.Pid).start, filepath.Join(t.TempDir(), "absent"))
	expect(t, run(t, in, nil, probes{}), ReadingWitness, AnswerFalse, "absent at both")
}

func TestAWitnessRefThatMovesAdvancedAndOneThatStaysDidNot(t *testing.T) {
	t.Parallel()
	cmd := helper(t, "idle", "", true)
	dir := gittest.Init(t, false)
	st := openStore(t, dir)
	in := request(cmd.Process.Pid, statOf(t, cmd.Process.Pid).start, "")
	in.Witness = WitnessRequest{Ref: "refs/nwdes-local/witness", IntervalMS: 300}
	var moved error
	r := run(t, in, st, probes{afterWitnessSeen: func() {
		_, moved = gittest.Run(dir, "update-ref", "refs/nwdes-local/witness", "HEAD")
	}})
	if moved != nil {
		t.Fatal(moved)
	}
	expect(t, r, ReadingWitness, AnswerTrue, "appeared")
	expect(t, run(t, in, st, probes{}), ReadingWitness, AnswerFalse, "did not advance")
}

func TestARepositoryReplacedBetweenTheStoreReadingsIsNotTheStore(t *testing.T) {
	t.Parallel()
	in, _ := supervised(t, true)
	dir := gittest.Init(t, false)
	st := openStore(t, dir)
	replace := func() {
		if err := os.Rename(dir, dir+".moved"); err != nil {
			t.Error(err)
		}
		gittest.Git(t, filepath.Dir(dir), "init", "-q", dir)
	}
	r := run(t, in, st, probes{beforeStoreEnd: replace})
	expect(t, r, ReadingStore, AnswerFalse, "another repository took its place")
	expect(t, r, ReadingSupervisor, AnswerTrue, "")

	moved := func() {
		if err := os.Rename(dir, dir+".gone"); err != nil {
			t.Error(err)
		}
	}
	expect(t, run(t, in, st, probes{beforeStoreEnd: moved}), ReadingStore, AnswerFalse, "is gone")
}

func TestTheWindowMustBeAheadAndTheOneThisDispatchOpens(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	p := func(open time.Duration) plan {
		return plan{open: now.Add(open), close: now.Add(open + time.Hour), maxLead: DefaultMaxLead}
	}
	for name, c := range map[string]struct {
		open   time.Duration
		want   Answer
		detail string
	}{
		"a window that opened a second ago is already running":  {-time.Second, AnswerFalse, "already running"},
		"a window opening at this very reading is already open": {0, AnswerFalse, "already running"},
		"a window opening in a minute is this dispatch's":       {time.Minute, AnswerTrue, "1m0s after"},
		"a window opening at the bound is this dispatch's":      {DefaultMaxLead, AnswerTrue, ""},
		"a window opening just past the bound is another":       {DefaultMaxLead + time.Nanosecond, AnswerFalse, "not the window this dispatch opens"},
		"a window opening hours ahead is another":               {3 * time.Hour, AnswerFalse, "not the window this dispatch opens"},
	} {
		r := judgeWindow(p(c.open), now)
		if r.Answer != c.want || !strings.Contains(r.Detail, c.detail) {
			t.Errorf("%s: %s (%s)", name, r.Answer, r.Detail)
		}
	}
}

func TestTheWindowIsJudgedAtTheLastClockReadingOfTheRun(t *testing.T) {
	t.Parallel()
	in, _ := supervised(t, true)
	opens := time.Now().Add(time.Hour)
	in.Window = WindowRequest{Open: opens.UTC().Format(time.RFC3339Nano), Close: opens.Add(time.Hour).UTC().Format(time.RFC3339Nano)}
	var ticks []time.Time
	clock := func() time.Time {
		// Every reading before the last sits inside the bound; the last,
		// after all of them, is past the open.
		tick := opens.Add(-time.Minute + time.Duration(len(ticks))*time.Second*20)
		ticks = append(ticks, tick)
		return tick
	}
	r, err := preflight(context.Background(), in, openStore(t, gittest.Init(t, false)), clock, probes{proc: "/proc"})
	if err != nil {
		t.Fatal(err)
	}
	expect(t, r, ReadingWindow, AnswerFalse, "already running")
	if w, _ := r.Reading(ReadingWindow); !w.At.Equal(ticks[len(ticks)-1]) || !r.Span.Last.Equal(w.At) || !r.Span.First.Equal(ticks[0]) {
		t.Errorf("window at %v, span %v..%v, clock read %v", w.At, r.Span.First, r.Span.Last, ticks)
	}
}

// fakeProc is a procfs showing this process as it is and the supervisor
// with the given stat.
func fakeProc(t *testing.T, pid int, stat string) string {
	t.Helper()
	root := t.TempDir()
	self, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Fatal(err)
	}
	gittest.WriteFile(t, root, strconv.Itoa(os.Getpid())+"/stat", string(self))
	if stat != "" {
		gittest.WriteFile(t, root, strconv.Itoa(pid)+"/stat", stat)
	}
	return root
}

func TestAReadingThatCannotBeTakenIsUnknownNeverFalse(t *testing.T) {
	t.Parallel()
	const pid = 4242
	stat := func(state string) string {
		return "4242 (super (visor)) " + state + " 1 4242 4242 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 777 1 1 1"
	}
	quick := func(in Request) Request { in.Witness.IntervalMS = 20; return in }
	absent := filepath.Join(t.TempDir(), "absent")
	t.Run("a stat that does not parse", func(t *testing.T) {
		t.Parallel()
		r := run(t, quick(request(pid, 777, absent)), nil, probes{proc: fakeProc(t, pid, "4242 (supervisor) S 1")})
		expect(t, r, ReadingSupervisor, AnswerUnknown, "cannot be read")
		expect(t, r, ReadingSession, AnswerUnknown, "cannot be read")
		if r.Overall() != AnswerFalse { // the absent witness is false
			t.Errorf("overall %s", r.Overall())
		}
	})
	t.Run("a state letter no kernel reader knows", func(t *testing.T) {
		t.Parallel()
		r := run(t, quick(request(pid, 777, absent)), nil, probes{proc: fakeProc(t, pid, stat("Q"))})
		expect(t, r, ReadingSupervisor, AnswerUnknown, "does not know")
	})
	t.Run("a name in parentheses is not taken for the fields", func(t *testing.T) {
		t.Parallel()
		r := run(t, quick(request(pid, 777, absent)), nil, probes{proc: fakeProc(t, pid, stat("S"))})
		expect(t, r, ReadingSupervisor, AnswerTrue, "sleeping")
		expect(t, r, ReadingSession, AnswerTrue, "session 4242")
	})
	t.Run("a /proc that does not show this process", func(t *testing.T) {
		t.Parallel()
		r := run(t, quick(request(pid, 777, absent)), nil, probes{proc: t.TempDir()})
		expect(t, r, ReadingSupervisor, AnswerUnknown, "does not show this process")
	})
	t.Run("a supervisor on another host", func(t *testing.T) {
		t.Parallel()
		in := quick(request(os.Getpid(), statOf(t, os.Getpid()).start, absent))
		in.Supervisor.Host = "elsewhere.invalid"
		r := run(t, in, nil, probes{})
		expect(t, r, ReadingSupervisor, AnswerUnknown, "on host elsewhere.invalid")
		expect(t, r, ReadingSession, AnswerUnknown, "")
	})
	t.Run("a supervisor of another boot", func(t *testing.T) {
		t.Parallel()
		in := quick(request(os.Getpid(), statOf(t, os.Getpid()).start, absent))
		in.Supervisor.Boot = "00000000-0000-0000-0000-000000000000"
		expect(t, run(t, in, nil, probes{}), ReadingSupervisor, AnswerUnknown, "of boot")
	})
	t.Run("a witness file that is a directory", func(t *testing.T) {
		t.Parallel()
		r := run(t, quick(request(os.Getpid(), statOf(t, os.Getpid()).start, t.TempDir())), nil, probes{})
		expect(t, r, ReadingWitness, AnswerUnknown, "not a regular file")
	})
	t.Run("a witness ref that does not hold an object id", func(t *testing.T) {
		t.Parallel()
		dir := gittest.Init(t, false)
		gittest.WriteFile(t, dir, ".git/refs/nwdes-local/witness", "garbage\n")
		in := quick(request(os.Getpid(), statOf(t, os.Getpid()).start, ""))
		in.Witness.File, in.Witness.Ref = "", "refs/nwdes-local/witness"
		expect(t, run(t, in, openStore(t, dir), probes{}), ReadingWitness, AnswerUnknown, "not a sha1 object id")
	})
	t.Run("a nonce ref that cannot be read back", func(t *testing.T) {
		t.Parallel()
		dir := gittest.Init(t, false)
		spoil := func() { gittest.WriteFile(t, dir, ".git/"+string(NonceRef), "garbage\n") }
		r := run(t, quick(request(os.Getpid(), statOf(t, os.Getpid()).start, absent)), openStore(t, dir), probes{beforeStoreEnd: spoil})
		expect(t, r, ReadingStore, AnswerUnknown, "cannot be read back")
	})
	t.Run("a nonce another preflight wrote in between", func(t *testing.T) {
		t.Parallel()
		dir := gittest.Init(t, false)
		st := openStore(t, dir)
		other := func() {
			if _, err := storeStart(context.Background(), st); err != nil {
				t.Error(err)
			}
		}
		r := run(t, quick(request(os.Getpid(), statOf(t, os.Getpid()).start, absent)), st, probes{beforeStoreEnd: other})
		expect(t, r, ReadingStore, AnswerUnknown, "moved by another writer")
	})
}

func TestAPreflightEndsWhenItsContextIsCancelled(t *testing.T) {
	t.Parallel()
	in := request(os.Getpid(), statOf(t, os.Getpid()).start, filepath.Join(t.TempDir(), "absent"))
	in.Witness.IntervalMS = MaxWitnessInterval.Milliseconds()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := Preflight(ctx, in, openStore(t, gittest.Init(t, false)), nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
}

func TestAStoreOpenedWithoutTheTrialKindIsRefused(t *testing.T) {
	t.Parallel()
	loc, err := gitrepo.Discover(gittest.Init(t, false), nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := gitstore.Open(loc, gitstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	in := request(os.Getpid(), 1, "/witness")
	if _, err := Preflight(context.Background(), in, st, nil); !refusal.Named(err, refusal.KindNotDeclared) {
		t.Fatalf("err %v, want KindNotDeclared", err)
	}
}

const validRequest = `{"window":{"open":"2026-05-01T10:00:00Z","close":"2026-05-01T11:00:00Z","max_lead_ms":600000},
"supervisor":{"owner":"ops","host":"box","boot":"b","pid":4242,"start":777},
"witness":{"file":"/trial/heartbeat","interval_ms":5000}}`

func TestParseRequestReadsTheDeclaredShapeAndRefusesAnythingElse(t *testing.T) {
	t.Parallel()
	r, err := ParseRequest(json.RawMessage(validRequest))
	if err != nil {
		t.Fatal(err)
	}
	want := Request{
		Window:     WindowRequest{Open: "2026-05-01T10:00:00Z", Close: "2026-05-01T11:00:00Z", MaxLeadMS: 600000},
		Supervisor: SupervisorRequest{Owner: "ops", Host: "box", Boot: "b", PID: 4242, Start: 777},
		Witness:    WitnessRequest{File: "/trial/heartbeat", IntervalMS: 5000},
	}
	if *r != want {
		t.Fatalf("parsed %+v", *r)
	}
	if _, err := ParseRequest(json.RawMessage(`{"window":{"open":"2026-05-01T10:00:00Z","close":"2026-05-01T11:00:00Z"},
		"supervisor":{"pid":1,"start":2},"witness":{"ref":"refs/nwdes-local/beat","interval_ms":1}}`)); err != nil {
		t.Errorf("a ref witness and the default lead: %v", err)
	}
	edit := func(old, new string) string { return strings.Replace(validRequest, old, new, 1) }
	for name, raw := range map[string]string{
		"an unknown key":                  edit(`"owner"`, `"ownr"`),
		"a key in another case":           edit(`"pid"`, `"PID"`),
		"a key given twice":               edit(`"pid":4242`, `"pid":4242,"pid":1`),
		"data after the object":           validRequest + ` {}`,
		"not an object":                   `[]`,
		"null":                            `null`,
		"empty":                           ``,
		"an open that is not RFC 3339":    edit(`2026-05-01T10:00:00Z`, `2026-05-01 10:00`),
		"a close before the open":         edit(`"close":"2026-05-01T11:00:00Z"`, `"close":"2026-05-01T09:00:00Z"`),
		"a lead of hours":                 edit(`600000`, `36000000`),
		"a negative lead":                 edit(`600000`, `-1`),
		"no pid":                          edit(`"pid":4242,`, ``),
		"no start time":                   edit(`,"start":777`, ``),
		"a negative start time":           edit(`777`, `-777`),
		"both a file and a ref":           edit(`"file"`, `"ref":"refs/x","file"`),
		"neither a file nor a ref":        edit(`"file":"/trial/heartbeat",`, ``),
		"a relative witness file":         edit(`/trial/heartbeat`, `trial/heartbeat`),
		"an unclean witness file":         edit(`/trial/heartbeat`, `/trial/../heartbeat`),
		"a witness ref outside refs/":     edit(`"file":"/trial/heartbeat"`, `"ref":"HEAD"`),
		"no interval":                     edit(`,"interval_ms":5000`, ``),
		"an interval past the limit":      edit(`5000`, `6000000`),
		"no window":                       `{"supervisor":{"pid":1,"start":2},"witness":{"file":"/w","interval_ms":1}}`,
		"a field of another object":       edit(`"max_lead_ms"`, `"pid":1,"max_lead_ms"`),
		"a number where a string belongs": edit(`"owner":"ops"`, `"owner":1`),
		"a fractional pid":                edit(`4242`, `4242.5`),
	} {
		_, err := ParseRequest(json.RawMessage(raw))
		r, ok := refusal.As(err)
		if !ok || r.Name != refusal.TrialInvalid || r.Class != refusal.Refused {
			t.Errorf("%s: %v, want TrialInvalid", name, err)
		}
	}
}

func FuzzParseRequest(f *testing.F) {
	f.Add([]byte(validRequest))
	f.Add([]byte(`{"window":{},"supervisor":{},"witness":{}}`))
	f.Add([]byte(`{"window":{"open":"2026-05-01T10:00:00Z","close":"2026-05-01T11:00:00Z"},"supervisor":{"pid":1,"start":2},"witness":{"ref":"refs/a","interval_ms":1}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseRequest(b)
		if err != nil {
			if !refusal.Named(err, refusal.TrialInvalid) {
				t.Fatalf("refused with %v", err)
			}
			return
		}
		again, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		r2, err := ParseRequest(again)
		if err != nil || *r2 != *r {
			t.Fatalf("%s reads back as %+v, %v", again, r2, err)
		}
	})
}

func TestReadingsRenderByteStableAndAddUpToOneAnswer(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 5, 1, 10, 0, 0, 500, time.FixedZone("x", 3600))
	r := &Readings{List: []Reading{
		{Name: ReadingWindow, Answer: AnswerTrue, Detail: "ahead", At: at},
		{Name: ReadingSupervisor, Answer: AnswerFalse, Detail: "gone <&>", At: at},
		{Name: ReadingStore, Answer: AnswerUnknown, Detail: "unread", At: at},
	}, Span: Span{First: at.Add(-1500 * time.Millisecond), Last: at}}
	const want = `{"ready":false,"readings":[` +
		`{"name":"window","answer":"true","detail":"ahead","at":"2026-05-01T09:00:00.0000005Z"},` +
		`{"name":"supervisor","answer":"false","detail":"gone <&>","at":"2026-05-01T09:00:00.0000005Z"},` +
		`{"name":"store","answer":"unknown","detail":"unread","at":"2026-05-01T09:00:00.0000005Z"}],` +
		`"span":{"first":"2026-05-01T08:59:58.5000005Z","last":"2026-05-01T09:00:00.0000005Z","duration_ms":1500}}`
	if got := string(r.JSON()); got != want || string(r.JSON()) != got {
		t.Fatalf("JSON\n%s\nwant\n%s", got, want)
	}
	for name, c := range map[string]struct {
		answers []Answer
		overall Answer
	}{
		"all true":             {[]Answer{AnswerTrue, AnswerTrue}, AnswerTrue},
		"one false":            {[]Answer{AnswerTrue, AnswerFalse}, AnswerFalse},
		"one unknown":          {[]Answer{AnswerUnknown, AnswerTrue}, AnswerUnknown},
		"false beside unknown": {[]Answer{AnswerUnknown, AnswerFalse}, AnswerFalse},
		"none":                 {nil, AnswerUnknown},
		"an answer of no kind": {[]Answer{""}, AnswerUnknown},
	} {
		var rs Readings
		for _, a := range c.answers {
			rs.List = append(rs.List, Reading{Answer: a})
		}
		if rs.Overall() != c.overall || rs.Ready() != (c.overall == AnswerTrue) {
			t.Errorf("%s: overall %s ready %v", name, rs.Overall(), rs.Ready())
		}
	}
}

func TestEveryStateLetterIsDecidedInOnePlace(t *testing.T) {
	t.Parallel()
	for letters, want := range map[string]Answer{
		"RSDIW":      AnswerTrue,
		"ZTtXx":      AnswerFalse,
		"KPQAz?\x00": AnswerUnknown,
	} {
		for _, l := range []byte(letters) {
			if got, _ := runState(l); got != want {
				t.Errorf("state %q: %s, want %s", l, got, want)
			}
		}
	}
}
