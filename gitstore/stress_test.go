package gitstore_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nwdes/nwdes/gitstore/oid"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/refusal"
)

// The stress tests run the test binary itself as several writer processes
// (see TestMain) that append to one ref at once, with the real git CLI as
// a second client: git pack-refs, git gc, git repack and git update-ref run
// beside them, and git alone judges the result (rev-list, cat-file, fsck).
//
// Every append reads the record "counter", writes counter+1 back and adds
// the blob log/<writer>/<i> holding the new value. If appends were lost or
// interleaved, the first-parent chain would show a counter that does not
// step by one, a log entry would be missing, or two acknowledged appends
// would claim the same counter value.

const (
	stressRef     gitstore.RefName = "refs/nwdes/stress"
	stCounterKind gitstore.Kind    = "stress.counter"
)

// stressKinds declares the kinds the stress tests and benchmarks write.
var stressKinds = gitstore.MustRegistry(gitstore.OpenRegistry(
	gitstore.KindSpec{Kind: stCounterKind, Version: 1},
	gitstore.KindSpec{Kind: benchKind, Version: 1}))

type stCounterBody struct {
	N int `json:"n"`
}

func stReadCounter(tx gitstore.View) (int, error) {
	rec, err := tx.Get("counter")
	if errors.Is(err, gitstore.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var c stCounterBody
	if err := rec.Decode(&c); err != nil {
		return 0, err
	}
	return c.N, nil
}

// stAppend is the update every writer performs.
func stAppend(ctx context.Context, s *gitstore.Store, ref gitstore.RefName, writer string, i int) (oid.ID, int, error) {
	var n int
	h, err := s.Change(ctx, ref, fmt.Sprintf("stress %s %d", writer, i), func(tx gitstore.Edit) error {
		c, err := stReadCounter(tx)
		if err != nil {
			return err
		}
		n = c + 1
		rec, err := gitstore.NewRecord(stCounterKind, 1, stCounterBody{N: n})
		if err != nil {
			return err
		}
		if err := tx.Put("counter", rec); err != nil {
			return err
		}
		return tx.WriteBlob(fmt.Sprintf("log/%s/%d", writer, i), []byte(strconv.Itoa(n)+"\n"))
	})
	return h, n, err
}

func stErrorClass(err error) string {
	switch {
	case refusal.Named(err, "Conflict"):
		return "giveup"
	case errors.Is(err, gitstore.ErrLocked):
		return "locked"
	default:
		return "other"
	}
}

// stressWriterChild is the writer process: NWDES_N appends (0: until
// killed) to NWDES_REF in the repository at NWDES_DIR, one line on stdout
// per outcome: "ok <i> <counter> <commit>" or "err <i> <class> <message>",
// and "stats <retries>" at the end: how many compare-and-swap conflicts
// Update met and retried internally. A failed append is retried with the
// same i; the process exits 3 after 50 failures in a row.
func stressWriterChild() int {
	dir := os.Getenv("NWDES_DIR")
	ref := gitstore.RefName(os.Getenv("NWDES_REF"))
	writer := os.Getenv("NWDES_WRITER")
	n, _ := strconv.Atoi(os.Getenv("NWDES_N"))
	loc, err := gitrepo.Discover(dir, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "discover:", err)
		return 2
	}
	retries := 0 // compare-and-swap conflicts Update retried internally
	s, err := gitstore.Open(loc, gitstore.Options{
		Durable:  os.Getenv("NWDES_DURABLE") == "1",
		Registry: stressKinds,
		Sleep: func(d time.Duration) {
			retries++
			time.Sleep(d)
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		return 2
	}
	out := bufio.NewWriter(os.Stdout)
	emit := func(format string, args ...any) {
		fmt.Fprintf(out, format+"\n", args...)
		out.Flush()
	}
	emit("ready")
	ctx := context.Background()
	failures := 0
	for i := 0; n == 0 || i < n; {
		h, c, err := stAppend(ctx, s, ref, writer, i)
		if err != nil {
			emit("err %d %s %s", i, stErrorClass(err), strings.ReplaceAll(err.Error(), "\n", " "))
			if failures++; failures >= 50 {
				return 3
			}
			continue
		}
		failures = 0
		emit("ok %d %d %s", i, c, h)
		i++
	}
	emit("stats %d", retries)
	return 0
}

// stAck is an append a writer process reported as done.
type stAck struct {
	writer  string
	i, n    int
	commit  string
	lineRaw string
}

type stChildErr struct {
	writer, class, msg string
}

// stWriterProc is a running writer child and what it has reported so far.
type stWriterProc struct {
	name    string
	cmd     *exec.Cmd
	stderr  bytes.Buffer
	mu      sync.Mutex
	acks    []stAck
	errs    []stChildErr
	retries int
	ready   chan struct{}
	firstOK chan struct{}
	done    chan struct{}
}

func stStartWriter(t *testing.T, dir string, ref gitstore.RefName, name string, n int, durable bool) *stWriterProc {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(),
		childModeEnv+"=writer",
		"NWDES_DIR="+dir,
		"NWDES_REF="+string(ref),
		"NWDES_WRITER="+name,
		"NWDES_N="+strconv.Itoa(n),
	)
	if durable {
		cmd.Env = append(cmd.Env, "NWDES_DURABLE=1")
	}
	p := &stWriterProc{name: name, cmd: cmd, ready: make(chan struct{}), firstOK: make(chan struct{}), done: make(chan struct{})}
	cmd.Stderr = &p.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		var readyOnce, okOnce sync.Once
		for sc.Scan() {
			line := sc.Text()
			f := strings.SplitN(line, " ", 4)
			switch {
			case f[0] == "ready":
				readyOnce.Do(func() { close(p.ready) })
			case f[0] == "ok" && len(f) == 4:
				i, _ := strconv.Atoi(f[1])
				c, _ := strconv.Atoi(f[2])
				p.mu.Lock()
				p.acks = append(p.acks, stAck{writer: name, i: i, n: c, commit: f[3], lineRaw: line})
				p.mu.Unlock()
				okOnce.Do(func() { close(p.firstOK) })
			case f[0] == "stats" && len(f) == 2:
				n, _ := strconv.Atoi(f[1])
				p.mu.Lock()
				p.retries = n
				p.mu.Unlock()
			case f[0] == "err" && len(f) == 4:
				p.mu.Lock()
				p.errs = append(p.errs, stChildErr{writer: name, class: f[2], msg: f[3]})
				p.mu.Unlock()
			}
		}
	}()
	return p
}

// wait waits for the child to exit and for its output to be read.
func (p *stWriterProc) wait() error {
	<-p.done
	return p.cmd.Wait()
}

// stressCounts are the sizes of a run: writers × appends each. Under the
// race detector the writer processes are race-instrumented too and run
// several times slower, so the count is halved to keep the stress tests
// within about 40 s on two cores; four processes still contend on every
// append.
func stressCounts() (writers, each int) {
	switch {
	case testing.Short():
		return 4, 40
	case stRaceEnabled():
		return 4, 75
	}
	return 4, 150
}

// stRaceEnabled reports whether the test binary was built with -race.
func stRaceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// stRunWriters starts the writer processes, waits for them, and returns
// every acknowledged append, the number of failed attempts by class, and a
// description of each failure that should fail the test: an append that
// failed for any reason but giving up under contention (a store must not
// fail because other processes write), or a writer that did not exit 0. It
// does not stop the test itself, so that callers can first stop the git
// clients running beside the writers.
func stRunWriters(t *testing.T, dir string, writers, each int) ([]stAck, map[string]int, []string) {
	t.Helper()
	procs := make([]*stWriterProc, writers)
	for w := range procs {
		procs[w] = stStartWriter(t, dir, stressRef, fmt.Sprintf("w%d", w), each, false)
	}
	var acks []stAck
	var problems []string
	classes := map[string]int{}
	for _, p := range procs {
		err := p.wait()
		p.mu.Lock()
		acks = append(acks, p.acks...)
		classes["cas-retries (not failures)"] += p.retries
		bad := map[string]int{}
		var order []string
		for _, e := range p.errs {
			classes[e.class]++
			if e.class == "other" || e.class == "locked" {
				k := stNormalize(e.msg)
				if bad[k] == 0 {
					order = append(order, k)
				}
				bad[k]++
			}
		}
		for _, k := range order {
			problems = append(problems, fmt.Sprintf("writer %s: %d failed attempts: %s", p.name, bad[k], k))
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("writer %s exited: %v (%d of %d appends done)\n%s", p.name, err, len(p.acks), each, p.stderr.String()))
		}
		p.mu.Unlock()
	}
	return acks, classes, problems
}

var (
	stHexID   = regexp.MustCompile(`[0-9a-f]{40}|[0-9a-f]{2}/[0-9a-f]{38}`)
	stTmpName = regexp.MustCompile(`/tmp_obj_[0-9]+`)
	stTmpDir  = regexp.MustCompile(`/\S*/repo/\.git/`)
)

// stNormalize strips ids and paths from an error so that failures group.
func stNormalize(msg string) string {
	msg = stHexID.ReplaceAllString(msg, "<id>")
	msg = stTmpName.ReplaceAllString(msg, "/tmp_obj_N")
	return stTmpDir.ReplaceAllString(msg, "$$GIT_DIR/")
}

// stGit runs git in dir with stdin and returns stdout, failing the test on
// a non-zero exit.
func stGit(t testing.TB, dir string, stdin []byte, args ...string) []byte {
	t.Helper()
	out, errOut, err := stGitRun(dir, stdin, args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, errOut)
	}
	return out
}

func stGitRun(dir string, stdin []byte, args ...string) ([]byte, []byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gittest.Env(filepath.Dir(dir))
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.Bytes(), stderr.Bytes(), err
}

// stCatFileBatch returns the contents of each object name, read by one
// git cat-file --batch; a missing object fails the test.
func stCatFileBatch(t testing.TB, dir string, names []string) [][]byte {
	t.Helper()
	in := strings.Join(names, "\n") + "\n"
	out := stGit(t, dir, []byte(in), "cat-file", "--batch")
	res := make([][]byte, 0, len(names))
	for _, name := range names {
		nl := bytes.IndexByte(out, '\n')
		if nl < 0 {
			t.Fatalf("cat-file --batch: short output at %s", name)
		}
		head := strings.Fields(string(out[:nl]))
		if len(head) != 3 {
			t.Fatalf("cat-file --batch: %s: %q", name, out[:nl])
		}
		size, _ := strconv.Atoi(head[2])
		body := out[nl+1 : nl+1+size]
		out = out[nl+1+size+1:]
		res = append(res, body)
	}
	return res
}

type stChain struct {
	commits  []string // oldest first
	counters []int    // the counter record at each commit
}

// stReadChain walks ref's first-parent chain with git and reads the counter
// at every commit. It checks that the chain has no merges (so the
// first-parent chain is the whole history) and that every commit's counter
// is its predecessor's plus one, starting at one.
func stReadChain(t testing.TB, dir string, ref gitstore.RefName) stChain {
	t.Helper()
	lines := strings.Fields(string(stGit(t, dir, nil, "rev-list", "--first-parent", "--reverse", string(ref))))
	all := strings.TrimSpace(string(stGit(t, dir, nil, "rev-list", "--count", string(ref))))
	if all != strconv.Itoa(len(lines)) {
		t.Errorf("history of %s has %s commits but its first-parent chain %d: merges appeared", ref, all, len(lines))
	}
	names := make([]string, len(lines))
	for i, c := range lines {
		names[i] = c + ":counter/record.json"
	}
	bodies := stCatFileBatch(t, dir, names)
	ci := stChain{commits: lines, counters: make([]int, len(lines))}
	for i, b := range bodies {
		var env struct {
			Body stCounterBody `json:"body"`
			Kind gitstore.Kind `json:"kind"`
			V    int           `json:"v"`
		}
		if err := json.Unmarshal(b, &env); err != nil || env.Kind != stCounterKind {
			t.Fatalf("commit %s: counter record %q: %v", lines[i], b, err)
		}
		ci.counters[i] = env.Body.N
		if env.Body.N != i+1 {
			t.Errorf("commit %d of %d (%s) has counter %d, want %d: an append was lost or applied twice",
				i+1, len(lines), lines[i], env.Body.N, i+1)
		}
	}
	return ci
}

// stCheckAcks checks that every acknowledged append is on the chain at the
// position its counter names, with its log entry present in the tip.
func stCheckAcks(t testing.TB, dir string, ref gitstore.RefName, ci stChain, acks []stAck) {
	t.Helper()
	seen := map[int]stAck{}
	for _, a := range acks {
		if prev, dup := seen[a.n]; dup {
			t.Errorf("two appends acknowledged with counter %d: %q and %q", a.n, prev.lineRaw, a.lineRaw)
		}
		seen[a.n] = a
		if a.n < 1 || a.n > len(ci.commits) {
			t.Errorf("acknowledged append %q is beyond the chain of %d commits: lost", a.lineRaw, len(ci.commits))
			continue
		}
		if ci.commits[a.n-1] != a.commit {
			t.Errorf("acknowledged append %q: the chain has %s at that position: lost", a.lineRaw, ci.commits[a.n-1])
		}
	}
	if len(acks) == 0 {
		return
	}
	names := make([]string, len(acks))
	for i, a := range acks {
		names[i] = fmt.Sprintf("%s:log/%s/%d", ref, a.writer, a.i)
	}
	listed := strings.Fields(string(stGit(t, dir, nil, "ls-tree", "-r", "--name-only", string(ref), "log/")))
	have := map[string]bool{}
	for _, p := range listed {
		have[p] = true
	}
	for i, a := range acks {
		if !have[fmt.Sprintf("log/%s/%d", a.writer, a.i)] {
			t.Errorf("log entry of acknowledged append %q is missing from the tip", a.lineRaw)
			names[i] = ""
		}
	}
	var present []string
	var which []stAck
	for i, n := range names {
		if n != "" {
			present = append(present, n)
			which = append(which, acks[i])
		}
	}
	for i, b := range stCatFileBatch(t, dir, present) {
		if got := strings.TrimSpace(string(b)); got != strconv.Itoa(which[i].n) {
			t.Errorf("log entry of %q holds %q", which[i].lineRaw, got)
		}
	}
}

// stCheckRepoClean runs git fsck --strict and the store's own fsck, and looks
// for lock files left anywhere in the git directory.
func stCheckRepoClean(t testing.TB, dir string) {
	t.Helper()
	if out, errOut, err := stGitRun(dir, nil, "fsck", "--strict", "--no-dangling", "--no-progress"); err != nil {
		t.Errorf("git fsck --strict: %v\n%s%s", err, out, errOut)
	}
	s := stOpenStore(t, dir, gitstore.Options{Registry: stressKinds})
	rep, err := s.Fsck()
	if err != nil {
		t.Fatalf("store fsck: %v", err)
	}
	for _, p := range rep.Problems {
		t.Errorf("store fsck: %s", p)
	}
	if locks := stFindLocks(t, dir); len(locks) > 0 {
		t.Errorf("lock files left behind: %v", locks)
	}
}

func stFindLocks(t testing.TB, dir string) []string {
	t.Helper()
	var locks []string
	err := filepath.WalkDir(filepath.Join(dir, ".git"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if strings.HasSuffix(p, ".lock") {
			locks = append(locks, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return locks
}

func stOpenStore(t testing.TB, dir string, opts gitstore.Options) *gitstore.Store {
	t.Helper()
	loc, err := gitrepo.Discover(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if opts.Registry == nil {
		opts.Registry = stressKinds
	}
	s, err := gitstore.Open(loc, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestConcurrentProcessesLoseNoUpdate: four writer processes append to one
// ref at once. Every append is on the first-parent chain exactly once, in
// counter order, and git finds the repository sound.
func TestConcurrentProcessesLoseNoUpdate(t *testing.T) {
	dir := gittest.Init(t, false)
	writers, each := stressCounts()
	total := writers * each
	start := time.Now()
	acks, classes, problems := stRunWriters(t, dir, writers, each)
	for _, p := range problems {
		t.Error(p)
	}
	t.Logf("%d processes × %d appends in %v; attempts retried or failed, by class: %v", writers, each, time.Since(start).Round(time.Millisecond), classes)
	if len(acks) != total {
		t.Errorf("%d appends acknowledged, want %d", len(acks), total)
	}
	// Every failed append failed before moving the ref, so the chain holds
	// exactly the acknowledged ones, however many there are.
	ci := stReadChain(t, dir, stressRef)
	if len(ci.commits) != len(acks) {
		t.Errorf("first-parent chain has %d commits, want exactly %d (one per acknowledged append)", len(ci.commits), len(acks))
	}
	stCheckAcks(t, dir, stressRef, ci, acks)
	stCheckRepoClean(t, dir)
}

// stGitLoop runs one git command line over and over until stop is closed,
// never interrupting a run (a killed git gc would leave its own locks).
type stGitLoop struct {
	name       string
	runs, fail int
	lastErr    string
}

func stRunGitLoop(dir string, stop <-chan struct{}, wg *sync.WaitGroup, l *stGitLoop, argvs ...[]string) {
	defer wg.Done()
	for k := 0; ; k++ {
		select {
		case <-stop:
			return
		default:
		}
		args := argvs[k%len(argvs)]
		_, errOut, err := stGitRun(dir, nil, args...)
		l.runs++
		if err != nil {
			l.fail++
			l.lastErr = strings.Join(args, " ") + ": " + strings.TrimSpace(string(errOut))
		}
	}
}

// TestAppendsSurvivePackRefsAndGC repeats the four-process run while git
// packs refs, garbage-collects and repacks the same repository, and while
// git update-ref moves another ref in the same directory. A reader polls
// the ref through Refs.Read all along: the counter it sees never goes
// backwards and the ref never reads as absent once created.
func TestAppendsSurvivePackRefsAndGC(t *testing.T) {
	dir := gittest.Init(t, false)
	writers, each := stressCounts()
	total := writers * each

	const other = "refs/nwdes/other"
	a := strings.TrimSpace(string(stGit(t, dir, nil, "rev-parse", "HEAD")))
	b := strings.TrimSpace(string(stGit(t, dir, nil, "commit-tree", "HEAD^{tree}", "-p", "HEAD", "-m", "other")))
	stGit(t, dir, nil, "update-ref", other, a)
	// b must stay reachable while other points at a: git repack -a -d drops
	// unreachable objects from packs, and that is git's contract, not ours.
	stGit(t, dir, nil, "update-ref", "refs/heads/keep-other", b)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	packRefs := &stGitLoop{name: "pack-refs --all"}
	maint := &stGitLoop{name: "gc (gc.packRefs=false) / repack -a -d"}
	wg.Add(2)
	go stRunGitLoop(dir, stop, &wg, packRefs, []string{"pack-refs", "--all"})
	// gc and repack take turns in one loop, and gc does not pack refs:
	// two git pack-refs at once can lose a ref update in git itself (with
	// git 2.39 a pack-refs loop beside a gc loop reverts a ref that only
	// git update-ref writes), and two repacks at once race inside git.
	// Neither is what this test is about.
	go stRunGitLoop(dir, stop, &wg, maint, []string{"-c", "gc.packRefs=false", "gc", "--quiet"}, []string{"repack", "-a", "-d", "-q"})

	// A second writer, git update-ref, on another ref in the same directory.
	var otherOK, otherFail int
	var otherLastErr string
	otherCur := a
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			next := b
			if otherCur == b {
				next = a
			}
			if _, errOut, err := stGitRun(dir, nil, "update-ref", other, next, otherCur); err != nil {
				otherFail++
				otherLastErr = string(errOut)
				continue
			}
			otherOK++
			otherCur = next
		}
	}()

	// The reader: its own Store, as another process would have.
	type observation struct {
		polls, absent int
		seq           []int
		backwards     []string
		readErrs      []string
	}
	var obs observation
	readerDone := make(chan struct{})
	reader := stOpenStore(t, dir, gitstore.Options{Registry: stressKinds})
	go func() {
		defer close(readerDone)
		s := reader
		last := 0
		created := false
		for {
			select {
			case <-stop:
				return
			default:
			}
			obs.polls++
			h, err := s.Refs().Read(stressRef)
			if err != nil {
				obs.readErrs = append(obs.readErrs, "Refs.Read: "+err.Error())
				continue
			}
			if h.IsZero() {
				if created {
					obs.absent++
				}
				time.Sleep(time.Millisecond)
				continue
			}
			created = true
			tx, err := s.RecordsAt(stressRef, h)
			var n int
			if err == nil {
				n, err = stReadCounter(tx)
			}
			if err != nil {
				obs.readErrs = append(obs.readErrs, fmt.Sprintf("read counter at %s: %v", h, err))
				continue
			}
			if n < last {
				obs.backwards = append(obs.backwards, fmt.Sprintf("%d after %d (at %s)", n, last, h))
			}
			if len(obs.seq) == 0 || obs.seq[len(obs.seq)-1] != n {
				obs.seq = append(obs.seq, n)
			}
			last = n
			time.Sleep(time.Millisecond)
		}
	}()

	start := time.Now()
	acks, classes, problems := stRunWriters(t, dir, writers, each)
	close(stop)
	wg.Wait()
	<-readerDone
	for _, p := range problems {
		t.Error(p)
	}
	t.Logf("%d processes × %d appends in %v; attempts retried or failed, by class: %v", writers, each, time.Since(start).Round(time.Millisecond), classes)
	for _, l := range []*stGitLoop{packRefs, maint} {
		t.Logf("git %s: %d runs, %d failed (last: %s)", l.name, l.runs, l.fail, l.lastErr)
	}
	t.Logf("git update-ref %s: %d moves, %d refused (last: %s)", other, otherOK, otherFail, strings.TrimSpace(otherLastErr))
	t.Logf("reader: %d polls, %d distinct counter values seen", obs.polls, len(obs.seq))

	if packRefs.runs == 0 || maint.runs == 0 || otherOK == 0 {
		t.Errorf("the concurrent git clients did not run: pack-refs %d, gc/repack %d, update-ref %d", packRefs.runs, maint.runs, otherOK)
	}
	if obs.absent > 0 {
		t.Errorf("reader saw %s absent %d times after it was created", stressRef, obs.absent)
	}
	for _, s := range obs.backwards {
		t.Errorf("reader saw the counter go backwards: %s", s)
	}
	for i, e := range obs.readErrs {
		if i == 5 {
			t.Errorf("… %d read errors in all", len(obs.readErrs))
			break
		}
		t.Errorf("reader failed to read the store while git maintained it: %s", e)
	}
	if !sort.IntsAreSorted(obs.seq) {
		t.Errorf("observed counter sequence is not non-decreasing: %v", obs.seq)
	}
	if got := strings.TrimSpace(string(stGit(t, dir, nil, "rev-parse", other))); got != otherCur {
		t.Errorf("%s = %s, but git update-ref last set it to %s", other, got, otherCur)
	}

	if len(acks) != total {
		t.Errorf("%d appends acknowledged, want %d", len(acks), total)
	}
	// Every failed append failed before moving the ref, so the chain holds
	// exactly the acknowledged ones, however many there are.
	ci := stReadChain(t, dir, stressRef)
	if len(ci.commits) != len(acks) {
		t.Errorf("first-parent chain has %d commits, want exactly %d (one per acknowledged append)", len(ci.commits), len(acks))
	}
	stCheckAcks(t, dir, stressRef, ci, acks)
	stCheckRepoClean(t, dir)
}

// TestKilledWriterLeavesOldOrNewTip kills a writer process with SIGKILL at
// random moments. Each time the ref must name a present commit whose tree
// reads, git fsck must pass (dangling objects from the interrupted append
// are allowed), and the next append must succeed — after the test removes
// a lock the kill left, which the store must report as held, not break.
func TestKilledWriterLeavesOldOrNewTip(t *testing.T) {
	dir := gittest.Init(t, false)
	rounds := 5
	if testing.Short() {
		rounds = 3
	}
	var all []stAck
	locksLeft := 0
	for r := 0; r < rounds; r++ {
		durable := r%2 == 1
		p := stStartWriter(t, dir, stressRef, fmt.Sprintf("k%d", r), 0, durable)
		select {
		case <-p.firstOK:
		case <-p.done:
			p.wait()
			t.Fatalf("round %d: writer exited before its first append:\n%s", r, p.stderr.String())
		}
		time.Sleep(time.Duration(20+rand.IntN(181)) * time.Millisecond)
		if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		err := p.wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("round %d: writer did not die of SIGKILL: %v\n%s", r, err, p.stderr.String())
		}
		p.mu.Lock()
		acks := append([]stAck(nil), p.acks...)
		for _, e := range p.errs {
			t.Errorf("round %d: append failed before the kill: %s %s", r, e.class, e.msg)
		}
		p.mu.Unlock()
		all = append(all, acks...)

		tip := strings.TrimSpace(string(stGit(t, dir, nil, "rev-parse", "--verify", string(stressRef)+"^{commit}")))
		stGit(t, dir, nil, "cat-file", "-e", tip+"^{tree}")
		stGit(t, dir, nil, "ls-tree", "-r", tip)
		if out, errOut, err := stGitRun(dir, nil, "fsck", "--strict", "--no-dangling", "--no-progress"); err != nil {
			t.Fatalf("round %d: git fsck --strict after the kill: %v\n%s%s", r, err, out, errOut)
		}
		ci := stReadChain(t, dir, stressRef)
		stCheckAcks(t, dir, stressRef, ci, all)
		if last := acks[len(acks)-1]; ci.counters[len(ci.counters)-1] < last.n {
			t.Fatalf("round %d: tip counter %d is behind the last acknowledged append %d", r, ci.counters[len(ci.counters)-1], last.n)
		}

		s := stOpenStore(t, dir, gitstore.Options{Registry: stressKinds})
		s.Refs().LockTimeout = 50 * time.Millisecond
		lock := filepath.Join(dir, ".git", filepath.FromSlash(string(stressRef))+".lock")
		lockLeft := false
		if _, err := os.Stat(lock); err == nil {
			lockLeft = true
			locksLeft++
			_, _, err := stAppend(context.Background(), s, stressRef, "after", r)
			if !errors.Is(err, gitstore.ErrLocked) || !(refusal.Named(err, "LockHeld") || refusal.Named(err, "StaleLock")) {
				t.Fatalf("round %d: append with a lock left by a killed writer: err = %v, want LockHeld or StaleLock wrapping ErrLocked", r, err)
			}
			if now := strings.TrimSpace(string(stGit(t, dir, nil, "rev-parse", string(stressRef)))); now != tip {
				t.Fatalf("round %d: the ref moved from %s to %s despite the lock", r, tip, now)
			}
			if err := os.Remove(lock); err != nil {
				t.Fatal(err)
			}
		}
		h, n, err := stAppend(context.Background(), s, stressRef, "after", r)
		if err != nil {
			t.Fatalf("round %d: append after the kill: %v", r, err)
		}
		if want := len(ci.commits) + 1; n != want {
			t.Fatalf("round %d: append after the kill wrote counter %d, want %d", r, n, want)
		}
		all = append(all, stAck{writer: "after", i: r, n: n, commit: h.String(), lineRaw: "after " + strconv.Itoa(r)})
		t.Logf("round %d (durable=%v): %d appends acknowledged before the kill, chain %d, lock left: %v",
			r, durable, len(acks), len(ci.commits), lockLeft)
	}
	ci := stReadChain(t, dir, stressRef)
	stCheckAcks(t, dir, stressRef, ci, all)
	stCheckRepoClean(t, dir)
	t.Logf("%d of %d kills left a lock behind", locksLeft, rounds)
}

// TestReadsSurviveARepackThatDeletesACachedPack: a Store that has read
// from a pack remembers that pack (the first version kept go-git's index of
// it). git gc and git repack -a -d write a new pack and delete the old one;
// a later read of an object the remembered pack held must find it in the
// new pack (git cat-file does), not fail with "packfile not found" — and
// certainly not keep failing for the life of the process.
func TestReadsSurviveARepackThatDeletesACachedPack(t *testing.T) {
	dir := gittest.Init(t, false)
	s := stOpenStore(t, dir, gitstore.Options{Registry: stressKinds})
	ctx := context.Background()
	old, _, err := stAppend(ctx, s, stressRef, "w", 0)
	if err != nil {
		t.Fatal(err)
	}
	stGit(t, dir, nil, "repack", "-a", "-d", "-q")
	// The loose copies are gone; this read loads the index of the pack.
	if _, err := stReadAt(s, old); err != nil {
		t.Fatalf("read after the first repack: %v", err)
	}
	if _, _, err := stAppend(ctx, s, stressRef, "w", 1); err != nil {
		t.Fatal(err)
	}
	stGit(t, dir, nil, "repack", "-a", "-d", "-q") // a new pack replaces the one s has indexed
	want := strings.TrimSpace(string(stGit(t, dir, nil, "cat-file", "-p", old.String()+":counter/record.json")))
	for attempt := 1; attempt <= 3; attempt++ {
		n, err := stReadAt(s, old)
		if err != nil {
			t.Fatalf("read %d after git repack -a -d replaced the pack (git cat-file reads %s fine): %v", attempt, want, err)
		}
		if n != 1 {
			t.Fatalf("counter = %d, want 1", n)
		}
	}
	if _, _, err := stAppend(ctx, s, stressRef, "w", 2); err != nil {
		t.Fatalf("append after git repack -a -d: %v", err)
	}
}

// stReadAt reads the counter as of commit through s.
func stReadAt(s *gitstore.Store, commit oid.ID) (int, error) {
	tx, err := s.RecordsAt(stressRef, commit)
	if err != nil {
		return 0, err
	}
	return stReadCounter(tx)
}

// TestObjectWritesSurviveGitRemovingEmptyFanoutDirs: git repack -d packs
// loose objects and git prune-packed then deletes them, removing each
// objects/xx/ directory it empties. A writer that creates objects/xx/ and
// then renames its object into it can find the directory gone in between;
// git's own writers retry (see git's object-file.c, "raceproof" creation),
// so an append must not fail because git repacked concurrently. This is a
// race, so the test runs the two side by side for a bounded time.
func TestObjectWritesSurviveGitRemovingEmptyFanoutDirs(t *testing.T) {
	dir := gittest.Init(t, false)
	s := stOpenStore(t, dir, gitstore.Options{Registry: stressKinds})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	repack := &stGitLoop{name: "repack -d"}
	wg.Add(1)
	// Without -a no pack is ever deleted, so this test does not depend on
	// TestReadsSurviveARepackThatDeletesACachedPack.
	go stRunGitLoop(dir, stop, &wg, repack, []string{"repack", "-d", "-q"})
	budget := 3 * time.Second
	if testing.Short() {
		budget = 2 * time.Second
	}
	deadline := time.Now().Add(budget)
	ctx := context.Background()
	var failures []string
	n := 0
	for time.Now().Before(deadline) {
		_, err := s.Change(ctx, stressRef, "many objects", func(tx gitstore.Edit) error {
			// 32 new blobs spread over many objects/xx/ directories.
			for k := 0; k < 32; k++ {
				if err := tx.WriteBlob(fmt.Sprintf("spread/%d/%d", n, k), []byte(fmt.Sprintf("%d.%d\n", n, k))); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			failures = append(failures, err.Error())
		}
		n++
	}
	close(stop)
	wg.Wait()
	t.Logf("%d appends of 32 blobs beside %d runs of git repack -d; %d failed", n, repack.runs, len(failures))
	for i, f := range failures {
		if i == 3 {
			break
		}
		t.Errorf("append failed while git repack -d ran: %s", f)
	}
}

// TestWritingAnExistingOldLooseObjectFreshensIt: git gc prunes unreachable
// loose objects older than gc.pruneExpire (two weeks) and relies on every
// writer to bump the mtime of an object it wanted to write but found
// already there (git's freshen_loose_object): otherwise a prune that
// computed reachability just before the writer's new tree and commit
// landed deletes an old unreachable object the new commit now needs. The
// reference here is git hash-object -w, which freshens; the store writes
// through go-git, which skips an existing loose object without touching it.
func TestWritingAnExistingOldLooseObjectFreshensIt(t *testing.T) {
	dir := gittest.Init(t, false)
	month := time.Now().Add(-30 * 24 * time.Hour)
	age := func(content string) (string, string) {
		t.Helper()
		id := strings.TrimSpace(string(stGit(t, dir, []byte(content), "hash-object", "-w", "--stdin")))
		p := filepath.Join(dir, ".git", "objects", id[:2], id[2:])
		if err := os.Chtimes(p, month, month); err != nil {
			t.Fatal(err)
		}
		return id, p
	}
	mtime := func(p string) time.Time {
		t.Helper()
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.ModTime()
	}
	recent := time.Now().Add(-time.Hour)

	// git itself: writing an object that exists freshens it.
	_, gp := age("written again by git\n")
	stGit(t, dir, []byte("written again by git\n"), "hash-object", "-w", "--stdin")
	if !mtime(gp).After(recent) {
		t.Fatalf("git hash-object -w did not freshen an existing loose object; the premise of this test is wrong")
	}

	// The store: the same content, written as part of an append.
	id, sp := age("written again by nwdes\n")
	s := stOpenStore(t, dir, gitstore.Options{})
	if _, err := s.Change(context.Background(), stressRef, "reuse", func(tx gitstore.Edit) error {
		return tx.WriteBlob("reused", []byte("written again by nwdes\n"))
	}); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(stGit(t, dir, nil, "rev-parse", string(stressRef)+":reused"))); got != id {
		t.Fatalf("the append stored %s, want the existing object %s", got, id)
	}
	if m := mtime(sp); !m.After(recent) {
		t.Errorf("the store wrote object %s, which already existed loose, without freshening it: mtime %s is still older than gc.pruneExpire, so a concurrent git gc may delete it under the new commit",
			id, m.Format(time.RFC3339))
	}
}

// TestOneStoreIsSafeForConcurrentGoroutines: Store's documentation says a
// Store is safe for concurrent use by goroutines. Four goroutines append
// through one Store while a fifth reads through it; the chain must be
// intact, and under -race the race detector must find nothing. (Objects are
// written through one go-git filesystem.Storage; go-git's DotGit.NewObject
// resets an object-list cache without a lock, so two goroutines writing at
// once race unless the store serialises its writes, which it did not at
// first.)
func TestOneStoreIsSafeForConcurrentGoroutines(t *testing.T) {
	dir := gittest.Init(t, false)
	s := stOpenStore(t, dir, gitstore.Options{Registry: stressKinds})
	const writers, each = 4, 10
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, writers*each+1)
	acks := make(chan stAck, writers*each)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			name := fmt.Sprintf("g%d", w)
			for i := 0; i < each; i++ {
				h, n, err := stAppend(ctx, s, stressRef, name, i)
				if err != nil {
					errs <- err
					continue
				}
				acks <- stAck{writer: name, i: i, n: n, commit: h.String(), lineRaw: fmt.Sprintf("%s %d", name, i)}
			}
		}(w)
	}
	stop := make(chan struct{})
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		for {
			select {
			case <-stop:
				return
			default:
			}
			tx, err := s.Records(stressRef)
			if err == nil {
				_, err = stReadCounter(tx)
			}
			if err != nil {
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	close(stop)
	<-readerDone
	close(errs)
	close(acks)
	for err := range errs {
		t.Errorf("through a shared Store: %v", err)
	}
	var all []stAck
	for a := range acks {
		all = append(all, a)
	}
	ci := stReadChain(t, dir, stressRef)
	if len(ci.commits) != writers*each || len(all) != writers*each {
		t.Errorf("chain has %d commits and %d appends were acknowledged, want %d", len(ci.commits), len(all), writers*each)
	}
	stCheckAcks(t, dir, stressRef, ci, all)
}
