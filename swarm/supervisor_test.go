package swarm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	gitremote "github.com/nwdes/nwdes/gitstore/remote"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/sandbox"
	"github.com/nwdes/nwdes/swarm"
)

// TestMain lets the test binary be the wall's helper and a supervisor
// process of its own (supervise DIR WORKER.json [remote]).
func TestMain(m *testing.M) {
	if sandbox.IsHelper(os.Args) {
		os.Exit(sandbox.HelperMain())
	}
	if len(os.Args) >= 4 && os.Args[1] == "supervise" {
		remote := ""
		if len(os.Args) > 4 {
			remote = os.Args[4]
		}
		if err := superviseIn(os.Args[2], os.Args[3], remote); err != nil {
			fmt.Fprintln(os.Stderr, "supervise:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func openStore(dir string) (*gitstore.Store, error) {
	loc, err := gitrepo.Discover(dir, nil)
	if err != nil {
		return nil, err
	}
	reg, err := gitstore.NewRegistry(examine.Register, swarm.Register)
	if err != nil {
		return nil, err
	}
	return gitstore.Open(loc, gitstore.Options{Registry: reg})
}

func wall() *sandbox.Wall {
	return &sandbox.Wall{Path: "/usr/bin:/bin", Strict: false, Grace: 300 * time.Millisecond,
		Helper: sandbox.Helper{Path: "/proc/self/exe", Argv0: os.Args[0]}}
}

func supervisor(st *gitstore.Store, w *swarm.Worker, remote string) (*swarm.Supervisor, error) {
	me, err := swarm.Self("tester")
	if err != nil {
		return nil, err
	}
	var book swarm.Book = &swarm.Local{Store: st}
	sync := gitstore.SyncOptions{Environ: gittest.Env(os.TempDir())}
	if remote != "" {
		book = &swarm.Remote{Store: st, Name: remote, Sync: sync}
	}
	return &swarm.Supervisor{
		Store: st, Book: book, Remote: remote, Sync: sync, Wall: wall(), Worker: w,
		JobsDir: filepath.Join(st.Location().CommonDir, "nwdes", "swarm", "jobs"), Holder: me,
		Heartbeat: 100 * time.Millisecond, Poll: 50 * time.Millisecond, Grace: time.Second,
		Export: examine.ExportTree,
	}, nil
}

func superviseIn(dir, workerFile, remote string) error {
	st, err := openStore(dir)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(workerFile)
	if err != nil {
		return err
	}
	w, err := swarm.ParseWorker(b)
	if err != nil {
		return err
	}
	sup, err := supervisor(st, w, remote)
	if err != nil {
		return err
	}
	_, err = sup.Run(context.Background())
	return err
}

// harness is a worker whose harness is a shell script: it reads the
// card's contract line from the prompt and publishes a RESULT.md, after
// running body.
func harness(t *testing.T, dir, body, deadline string) string {
	t.Helper()
	script := body + `
line=$(head -n 1 "$1")
printf '%s\nDONE worked\n' "$line" > "$NWDES_JOB_DIR/RESULT.md"
`
	w := map[string]any{
		"name": "sh", "harness": "/bin/sh", "harness_args": []string{"-c", script, "sh", "{prompt}"},
		"model": "none", "deadline": deadline, "slots": 1,
	}
	b, _ := json.Marshal(w)
	p := filepath.Join(dir, "worker.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func parseWorker(t *testing.T, p string) *swarm.Worker {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	w, err := swarm.ParseWorker(b)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// queue adds n cards on HEAD.
func queue(t *testing.T, st *gitstore.Store, dir string, n int, prefix string) []string {
	t.Helper()
	head := gittest.Git(t, dir, "rev-parse", "HEAD")
	var labels []string
	for i := 0; i < n; i++ {
		label := fmt.Sprintf("%s%02d", prefix, i)
		text := fmt.Sprintf("RESULT: %s sha=%s\nBASE: %s\n\nSay hello %d.\n", label, head[:12], head, i)
		c, err := swarm.ParseCard([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		if err := swarm.Add(context.Background(), st, c, 0, "tester", time.Now()); err != nil {
			t.Fatal(err)
		}
		labels = append(labels, label)
	}
	return labels
}

func requireWall(t *testing.T) {
	t.Helper()
	if err := sandbox.Available(false); err != nil {
		t.Skipf("this kernel cannot wall a harness in: %v", err)
	}
}

// exactlyOnce checks that each label has exactly one finished job, done
// with an ok result, and one job directory.
func exactlyOnce(t *testing.T, st *gitstore.Store, labels []string) {
	t.Helper()
	jobs, err := swarm.Jobs(st)
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, j := range jobs {
		per[j.Label]++
		if j.End != swarm.EndDone || j.Result != "ok" {
			t.Errorf("job %s #%d: end %s result %s (%s)", j.Label, j.Attempt, j.End, j.Result, j.Reason)
		}
		if why := swarm.VerifyExit(&j); why != "" {
			t.Errorf("job %s: %s", j.Label, why)
		}
	}
	for _, l := range labels {
		if per[l] != 1 {
			t.Errorf("card %s ran %d times", l, per[l])
		}
		dirs, _ := filepath.Glob(filepath.Join(st.Location().CommonDir, "nwdes", "swarm", "jobs", l, "*"))
		if len(dirs) > 1 {
			t.Errorf("card %s has %d job directories", l, len(dirs))
		}
	}
	if len(jobs) != len(labels) {
		t.Errorf("%d jobs for %d cards", len(jobs), len(labels))
	}
}

func TestTwoSupervisorProcessesRunEachOfTwentyCardsExactlyOnce(t *testing.T) {
	requireWall(t)
	dir := gittest.Init(t, false)
	st, err := openStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	labels := queue(t, st, dir, 20, "card")
	worker := harness(t, t.TempDir(), "sleep 0.05", "1m")
	var wg sync.WaitGroup
	outs := make([]string, 2)
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := exec.Command(os.Args[0], "supervise", dir, worker).CombinedOutput()
			outs[i], errs[i] = string(out), err
		}()
	}
	wg.Wait()
	for i := range 2 {
		if errs[i] != nil {
			t.Fatalf("supervisor %d: %v\n%s", i, errs[i], outs[i])
		}
	}
	exactlyOnce(t, st, labels)
	// Both supervisors ran some: the queue was shared, not run by one.
	jobs, _ := swarm.Jobs(st)
	pids := map[int]int{}
	for _, j := range jobs {
		pids[j.Holder.PID]++
	}
	if len(pids) != 2 {
		t.Logf("one supervisor ran every card (%v): the other found none free", pids)
	}
	gittest.Git(t, dir, "fsck", "--strict")
}

func TestTwoClonesSharingOnlyABareRemoteRunEachCardOnce(t *testing.T) {
	requireWall(t)
	if testing.Short() {
		t.Skip("pushes and fetches for every lease")
	}
	bare := gittest.Init(t, true)
	origin := gittest.Init(t, false)
	gittest.Git(t, origin, "push", "-q", bare, "main")
	st, err := openStore(origin)
	if err != nil {
		t.Fatal(err)
	}
	labels := queue(t, st, origin, 8, "remote")
	gittest.Git(t, origin, "remote", "add", "origin", bare)
	if _, err := gitremote.New(st).Push(context.Background(), "origin", gitstore.SyncOptions{Environ: gittest.Env(os.TempDir())}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	var clones []string
	for i := range 2 {
		c := filepath.Join(t.TempDir(), fmt.Sprintf("clone%d", i))
		gittest.Git(t, filepath.Dir(c), "clone", "-q", bare, c)
		clones = append(clones, c)
	}
	worker := harness(t, t.TempDir(), "sleep 0.05", "1m")
	var wg sync.WaitGroup
	outs := make([]string, 2)
	errs := make([]error, 2)
	for i, c := range clones {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := exec.Command(os.Args[0], "supervise", c, worker, "origin").CombinedOutput()
			outs[i], errs[i] = string(out), err
		}()
	}
	wg.Wait()
	for i := range clones {
		if errs[i] != nil {
			t.Fatalf("supervisor in clone %d: %v\n%s", i, errs[i], outs[i])
		}
	}
	// The remote's ledger holds each card once.
	check := filepath.Join(t.TempDir(), "check")
	gittest.Git(t, filepath.Dir(check), "clone", "-q", bare, check)
	cst, err := openStore(check)
	if err != nil {
		t.Fatal(err)
	}
	defer cst.Close()
	if _, err := gitremote.New(cst).Fetch(context.Background(), "origin", gitstore.SyncOptions{Environ: gittest.Env(os.TempDir())}); err != nil {
		t.Fatal(err)
	}
	jobs, err := swarm.Jobs(cst)
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, j := range jobs {
		per[j.Label]++
	}
	for _, l := range labels {
		if per[l] != 1 {
			t.Errorf("card %s ran %d times across the clones", l, per[l])
		}
	}
	if out := gittest.Git(t, bare, "for-each-ref", "refs/nwdes/swarm/leases/"); out != "" {
		t.Errorf("leases left on the remote:\n%s", out)
	}
}

func TestAStrandedLeaseOfAKilledSupervisorIsRunAgain(t *testing.T) {
	requireWall(t)
	dir := gittest.Init(t, false)
	st, err := openStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	labels := queue(t, st, dir, 1, "slow")
	slow := harness(t, t.TempDir(), `[ -e "$HOME/../../../again" ] || sleep 300`, "10m")
	cmd := exec.Command(os.Args[0], "supervise", dir, slow)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until its job runs, then kill it outright.
	local := &swarm.Local{Store: st}
	deadline := time.Now().Add(20 * time.Second)
	for {
		entries, err := local.List(context.Background())
		if err == nil && len(entries) == 1 && entries[0].Lease != nil {
			if logs, _ := filepath.Glob(filepath.Join(dir, ".git/nwdes/swarm/jobs/slow00/*/harness.log")); len(logs) == 1 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the first supervisor never took the card")
		}
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	me, _ := swarm.Self("tester")
	entries, _ := local.List(context.Background())
	if got := swarm.StateOf(entries[0].Lease, 0, me, time.Now(), 0); got != swarm.Stranded {
		t.Fatalf("the killed supervisor's lease is %s, want stranded", got)
	}
	// Another supervisor runs it again (quickly this time).
	os.WriteFile(filepath.Join(dir, ".git/nwdes/swarm/again"), nil, 0o644)
	fast := parseWorker(t, harness(t, t.TempDir(), "", "1m"))
	sup, err := supervisor(st, fast, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sup.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	jobs, _ := swarm.Jobs(st)
	if len(jobs) != 1 || jobs[0].Label != labels[0] || jobs[0].Attempt != 2 || jobs[0].Result != "ok" {
		t.Fatalf("jobs after the rerun: %+v", jobs)
	}
}

func TestAHarnessPastItsDeadlineIsEndedWithNoSurvivors(t *testing.T) {
	requireWall(t)
	dir := gittest.Init(t, false)
	st, _ := openStore(dir)
	defer st.Close()
	queue(t, st, dir, 1, "late")
	w := parseWorker(t, harness(t, t.TempDir(), "sleep 300 & sleep 300", "1s"))
	sup, _ := supervisor(st, w, "")
	if _, err := sup.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	jobs, _ := swarm.Jobs(st)
	if len(jobs) != 1 || jobs[0].End != swarm.EndDeadline || jobs[0].Survivors != 0 || jobs[0].Result != "blocked" {
		t.Fatalf("a job past its deadline: %+v", jobs)
	}
	if why := swarm.VerifyExit(&jobs[0]); why != "" {
		t.Fatal(why)
	}
	res, _ := os.ReadFile(filepath.Join(jobs[0].JobDir, "RESULT.md"))
	if !swarm.IsMachineryResult(res) {
		t.Fatalf("the machinery's RESULT.md: %q", res)
	}
}

func TestAJobThatWritesItsOwnExitRecordIsCaughtAndARewriteLater(t *testing.T) {
	requireWall(t)
	dir := gittest.Init(t, false)
	st, _ := openStore(dir)
	defer st.Close()
	queue(t, st, dir, 1, "forger")
	w := parseWorker(t, harness(t, t.TempDir(), `printf '{"end":"done","exit_code":0}' > "$NWDES_JOB_DIR/exit.json" && ln -s /etc/passwd "$NWDES_JOB_DIR/usage.tsv"`, "1m"))
	sup, _ := supervisor(st, w, "")
	if _, err := sup.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	jobs, _ := swarm.Jobs(st)
	if len(jobs) != 1 || len(jobs[0].Forged) == 0 || jobs[0].Result != "refused" {
		t.Fatalf("a job that wrote exit.json: %+v", jobs)
	}
	if !slices.Contains(jobs[0].Forged, "exit.json was already there (a regular file the job wrote)") {
		t.Errorf("forged: %q; want what the job left named for a person", jobs[0].Forged)
	}
	// The link the job planted at usage.tsv is named, and replaced by
	// the supervisor's file, not written through.
	if !slices.Contains(jobs[0].Forged, "usage.tsv was already there (a symbolic link the job wrote)") {
		t.Errorf("forged: %q; want the planted usage.tsv named", jobs[0].Forged)
	}
	if fi, err := os.Lstat(filepath.Join(jobs[0].JobDir, "usage.tsv")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("usage.tsv after the job: %v %v; want the supervisor's regular file", fi, err)
	}
	if why := swarm.VerifyExit(&jobs[0]); why != "" {
		t.Fatalf("the supervisor's exit record: %s", why)
	}
	// A rewrite after the fact, even one that keeps the fields, is caught.
	p := filepath.Join(jobs[0].JobDir, "exit.json")
	b, _ := os.ReadFile(p)
	os.Chmod(p, 0o644)
	os.WriteFile(p, []byte(strings.Replace(string(b), `"end": "done"`, `"end": "done" `, 1)+" "), 0o644)
	if why := swarm.VerifyExit(&jobs[0]); !strings.Contains(why, "rewritten") {
		t.Fatalf("a rewritten exit.json: %q", why)
	}
}

func TestTheStagedCheckoutIsACleanRepositoryTheHarnessCanCommitIn(t *testing.T) {
	requireWall(t)
	dir := gittest.Init(t, false)
	gittest.WriteFile(t, dir, "bin/tool", "#!/bin/sh\n")
	os.Chmod(filepath.Join(dir, "bin/tool"), 0o755)
	gittest.Git(t, dir, "add", "-A")
	gittest.Git(t, dir, "commit", "-qm", "tool")
	st, _ := openStore(dir)
	defer st.Close()
	queue(t, st, dir, 1, "stage")
	w := parseWorker(t, harness(t, t.TempDir(), `
git status --porcelain > "$NWDES_JOB_DIR/status.txt" 2>&1
git rev-parse --abbrev-ref HEAD > "$NWDES_JOB_DIR/branch.txt"
echo change > new.txt && git add new.txt && git -c user.name=w -c user.email=w@x commit -qm work && git rev-parse HEAD~1 > "$NWDES_JOB_DIR/parent.txt"
`, "1m"))
	sup, _ := supervisor(st, w, "")
	if _, err := sup.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	jobs, _ := swarm.Jobs(st)
	if len(jobs) != 1 {
		t.Fatalf("jobs: %+v", jobs)
	}
	read := func(name string) string {
		b, _ := os.ReadFile(filepath.Join(jobs[0].JobDir, name))
		return strings.TrimSpace(string(b))
	}
	if s := read("status.txt"); s != "" {
		t.Errorf("git status in the staged checkout: %q", s)
	}
	if b := read("branch.txt"); b != "worker/stage00" {
		t.Errorf("branch %q", b)
	}
	if p := read("parent.txt"); p != gittest.Git(t, dir, "rev-parse", "HEAD") {
		t.Errorf("the harness's commit has parent %q", p)
	}
	// Its commit is in the checkout's own objects, not the store's.
	if _, err := gittest.Run(dir, "cat-file", "-e", "worker/stage00"); err == nil {
		t.Error("the harness's branch reached the repository")
	}
	gittest.Git(t, filepath.Join(jobs[0].JobDir, "repo"), "fsck")
}

func TestOneSupervisorWithManyWorkersRunsEachCardOnce(t *testing.T) {
	requireWall(t)
	dir := gittest.Init(t, false)
	st, _ := openStore(dir)
	defer st.Close()
	labels := queue(t, st, dir, 8, "many")
	sup, _ := supervisor(st, parseWorker(t, harness(t, t.TempDir(), "sleep 0.05", "1m")), "")
	sup.Workers = 4
	if _, err := sup.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	exactlyOnce(t, st, labels)
}

// What the supervisor could not write in a job directory is named in the
// job's record, which is what lasts; an exit record it could not write
// ends the run with that error, leaves nothing recorded, and the card
// runs again.
func TestAMachineFileThatCannotBeWrittenIsNamedInTheRecord(t *testing.T) {
	requireWall(t)
	dir := gittest.Init(t, false)
	st, _ := openStore(dir)
	defer st.Close()
	queue(t, st, dir, 1, "full")
	w := parseWorker(t, harness(t, t.TempDir(), `:`, "1m"))

	diskFull := errors.New("no space left on device (injected)")
	// A run that ignored the failure would wait for more cards for ever.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sup, _ := supervisor(st, w, "")
	swarm.FailMachineWrites(sup, func(name string) error {
		if name == "exit.json" {
			return diskFull
		}
		return nil
	})
	if _, err := sup.Run(ctx); err == nil || !strings.Contains(err.Error(), "write exit record of full00") || !errors.Is(err, diskFull) {
		t.Fatalf("a run whose exit record could not be written: %v", err)
	}
	if jobs, err := swarm.Jobs(st); err != nil || len(jobs) != 0 {
		t.Fatalf("jobs recorded without an exit record: %+v, %v", jobs, err)
	}

	sup, _ = supervisor(st, w, "")
	swarm.FailMachineWrites(sup, func(name string) error {
		if name == "usage.tsv" || name == "timeline.tsv" {
			return diskFull
		}
		return nil
	})
	if _, err := sup.Run(ctx); err != nil {
		t.Fatal(err)
	}
	jobs, err := swarm.Jobs(st)
	if err != nil || len(jobs) != 1 {
		t.Fatalf("jobs: %+v, %v; want the card's run recorded once", jobs, err)
	}
	j := jobs[0]
	// In the order the supervisor writes them.
	want := []string{"usage.tsv: " + diskFull.Error(), "timeline.tsv: " + diskFull.Error()}
	// The attempt whose exit record was lost left no record: the
	// number is free again.
	if !slices.Equal(j.Lost, want) || j.Attempt != 1 || j.End != swarm.EndDone || j.Result != "ok" {
		t.Fatalf("job %s #%d: end %s, result %s, lost %q; want attempt 1 done ok, lost %q", j.Label, j.Attempt, j.End, j.Result, j.Lost, want)
	}
	for _, name := range []string{"usage.tsv", "timeline.tsv"} {
		if _, err := os.Lstat(filepath.Join(j.JobDir, name)); !os.IsNotExist(err) {
			t.Errorf("%s in the job directory: %v; want none", name, err)
		}
	}
	if len(j.Timeline) == 0 {
		t.Error("the record has no timeline, though only its file was lost")
	}
	if why := swarm.VerifyExit(&j); why != "" {
		t.Errorf("the exit record: %s", why)
	}
}
