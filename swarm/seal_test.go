package swarm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/swarm"
)

// plant is a harness body that leaves, in its job's repository and
// directory, everything a git run there could execute: core.fsmonitor,
// core.pager, diff.external, a clean/smudge filter named by .gitattributes
// and by .git/info/attributes, a post-checkout hook, a submodule whose own
// repository has an fsmonitor, symbolic links from .git to host files,
// and a job directory made to look like a bare repository with a pager.
// Each planted command writes a marker in m; h holds host files the links
// point at. The job's own work, a commit, is made first.
func plant(m, h string) string {
	return fmt.Sprintf(`set -e
M=%s H=%s
id="-c user.name=w -c user.email=w@example.com"
echo work > work.txt
git add work.txt
git $id commit -q -m work
echo more >> README
mkdir sub
(cd sub && git init -q && git $id commit -q --allow-empty -m s && git config core.fsmonitor "touch $M/submodule; false")
git update-index --add --cacheinfo 160000,$(git -C sub rev-parse HEAD),sub
printf '* filter=evil\n' > .gitattributes
mkdir -p .git/info .git/hooks
printf '* filter=evil\n' > .git/info/attributes
printf '#!/bin/sh\ntouch %%s/post-checkout\n' "$M" > .git/hooks/post-checkout
chmod +x .git/hooks/post-checkout
rm -f .git/description
ln -s "$H/hostfile" .git/description
ln -s "$H/hostdir" .git/modules
ln -s "$H/hostfile" .git/refs/heads/evil
mkdir -p "$NWDES_JOB_DIR/objects/info" "$NWDES_JOB_DIR/refs"
echo "$(cd .git/objects && pwd)" > "$NWDES_JOB_DIR/objects/info/alternates"
git rev-parse HEAD > "$NWDES_JOB_DIR/HEAD"
printf '[core]\n\tpager = touch %%s/jobdir; cat\n' "$M" > "$NWDES_JOB_DIR/config"
git config filter.evil.clean "touch $M/filter; cat"
git config filter.evil.smudge "touch $M/filter; cat"
git config diff.external "touch $M/diff-external; true"
git config core.pager "touch $M/pager; cat"
git config core.fsmonitor "touch $M/fsmonitor; false"
`, m, h)
}

// lookAround runs, in the repository at repo and in scratch beside it,
// what a person does to look at a job's work: git status, diff, log (on a
// terminal, so a pager would run), checkout. Their failures are not the
// point: what they ran is.
func lookAround(t *testing.T, repo, scratch string) {
	t.Helper()
	env := append(gittest.Env(t.TempDir()), "PAGER=cat", "SHELL=/bin/sh")
	for _, c := range []struct{ dir, cmd string }{
		{repo, "git status"}, {repo, "git diff"}, {repo, "git log -p"}, {repo, "git diff HEAD"},
		{repo, "git checkout -q -b other"}, {scratch, "git log"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		cmd := exec.CommandContext(ctx, "script", "-qec", c.cmd, "/dev/null")
		cmd.Dir, cmd.Env = c.dir, env
		out, _ := cmd.CombinedOutput()
		cancel()
		t.Logf("%s in %s:\n%s", c.cmd, c.dir, out)
	}
}

func markers(t *testing.T, m string) []string {
	t.Helper()
	es, err := os.ReadDir(m)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

func hostFiles(t *testing.T) string {
	t.Helper()
	h := t.TempDir()
	if err := os.WriteFile(filepath.Join(h, "hostfile"), []byte("host\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(h, "hostdir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h, "hostdir", "keep"), []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return h
}

func TestWhatAJobPlantsInItsRepositoryRunsInNoGitAfterItEnds(t *testing.T) {
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("no script(1) to give git a terminal")
	}
	// The plant works: the same script run in a repository nwdes did not
	// seal makes git run every planted command.
	control := t.TempDir()
	cm := filepath.Join(control, "markers")
	os.Mkdir(cm, 0o755)
	cjob := filepath.Join(control, "job")
	repo := filepath.Join(cjob, "repo")
	gittest.Git(t, control, "clone", "-q", gittest.Init(t, false), repo)
	os.Mkdir(filepath.Join(cjob, "scratch"), 0o755)
	sh := exec.Command("/bin/sh", "-c", plant(cm, hostFiles(t)))
	sh.Dir, sh.Env = repo, append(gittest.Env(t.TempDir()), "NWDES_JOB_DIR="+cjob, "GIT_CEILING_DIRECTORIES="+cjob)
	if out, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("plant outside the wall: %v\n%s", err, out)
	}
	lookAround(t, repo, filepath.Join(cjob, "scratch"))
	want := []string{"diff-external", "filter", "fsmonitor", "jobdir", "pager", "post-checkout", "submodule"}
	if got := markers(t, cm); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("the plant ran %v in an unsealed repository, want %v", got, want)
	}

	requireWall(t)
	dir := gittest.Init(t, false)
	st, err := openStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	labels := queue(t, st, dir, 1, "plant")
	m := filepath.Join(t.TempDir(), "markers")
	os.Mkdir(m, 0o755)
	h := hostFiles(t)
	w := parseWorker(t, harness(t, t.TempDir(), plant(m, h), "1m"))
	sup, err := supervisor(st, w, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sup.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	exactlyOnce(t, st, labels)
	jobs, _ := filepath.Glob(filepath.Join(st.Location().CommonDir, "nwdes", "swarm", "jobs", labels[0], "*"))
	if len(jobs) != 1 {
		t.Fatalf("job directories: %v", jobs)
	}
	job := jobs[0]
	lookAround(t, filepath.Join(job, "repo"), filepath.Join(job, "scratch"))
	if got := markers(t, m); len(got) > 0 {
		t.Errorf("git runs in the ended job's directory ran what the job planted: %v", got)
	}
	if b, err := os.ReadFile(filepath.Join(h, "hostfile")); err != nil || string(b) != "host\n" {
		t.Errorf("the host file a planted link named was changed: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(h, "hostdir", "keep")); err != nil {
		t.Errorf("the host directory a planted link named was emptied: %v", err)
	}
	for _, name := range []string{"repo/.git/hooks", "repo/.git/modules", "repo/.git/info", "repo/.git/index", "HEAD"} {
		if _, err := os.Lstat(filepath.Join(job, name)); err == nil {
			t.Errorf("%s is still there", name)
		}
	}
	if _, err := os.Stat(filepath.Join(job, "repo", ".gitattributes")); err != nil {
		t.Errorf("the work tree, the job's output, lost .gitattributes: %v", err)
	}
	tl, _ := os.ReadFile(filepath.Join(job, "timeline.tsv"))
	for _, name := range []string{"repo/.git/hooks", "repo/.git/modules", "repo/.git/refs/heads/evil (a symbolic link)", "HEAD"} {
		if !strings.Contains(string(tl), name) {
			t.Errorf("timeline.tsv does not name %s as sealed:\n%s", name, tl)
		}
	}
	// The job's work is still there to fetch into a repository of one's own.
	mine := filepath.Join(t.TempDir(), "mine")
	gittest.Git(t, filepath.Dir(mine), "init", "-q", mine)
	gittest.Git(t, mine, "fetch", "-q", filepath.Join(job, "repo"), "worker/"+labels[0]+":refs/job/work")
	if got := gittest.Git(t, mine, "log", "-1", "--format=%s", "refs/job/work"); got != "work" {
		t.Errorf("fetched the job's branch: its tip says %q, want work", got)
	}
	if got := markers(t, m); len(got) > 0 {
		t.Errorf("fetching from the job's repository ran %v", got)
	}
}

func TestACredentialTheWorkerPassesOnIsInNothingTheSupervisorRecordsOrSays(t *testing.T) {
	requireWall(t)
	secret := fmt.Sprintf("sk-%x", time.Now().UnixNano()) + "-Zq9"
	dir := gittest.Init(t, false)
	st, err := openStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	labels := queue(t, st, dir, 1, "cred")
	// The harness uses its credential, says it on stderr, keeps a copy in
	// scratch, and even quotes it in its report.
	script := `echo "using $AGENT_KEY" >&2
printf '%s' "$AGENT_KEY" > "$NWDES_JOB_DIR/scratch/used"
line=$(head -n 1 "$1")
printf '%s\nDONE used %s\n' "$line" "$AGENT_KEY" > "$NWDES_JOB_DIR/RESULT.md"
`
	b, _ := json.Marshal(map[string]any{
		"name": "sh", "harness": "/bin/sh", "harness_args": []string{"-c", script, "sh", "{prompt}"},
		"deadline": "1m", "env": []string{"AGENT_KEY"},
	})
	w, err := swarm.ParseWorker(b)
	if err != nil {
		t.Fatal(err)
	}
	sup, err := supervisor(st, w, "")
	if err != nil {
		t.Fatal(err)
	}
	sup.Wall.Getenv = func(name string) string {
		if name == "AGENT_KEY" {
			return secret
		}
		return ""
	}
	var events strings.Builder
	sup.Events = func(e swarm.Event) { fmt.Fprintf(&events, "%+v\n", e) }
	sum, err := sup.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	exactlyOnce(t, st, labels)
	job := filepath.Join(st.Location().CommonDir, "nwdes", "swarm", "jobs", labels[0])
	jobs, _ := filepath.Glob(filepath.Join(job, "*"))
	job = jobs[0]
	if got, _ := os.ReadFile(filepath.Join(job, "scratch", "used")); string(got) != secret {
		t.Fatalf("the harness got %q, not the credential", got)
	}
	leak := func(what, text string) {
		t.Helper()
		if strings.Contains(text, secret) {
			t.Errorf("the credential is in %s", what)
		}
	}
	leak("the events", events.String())
	leak("the summary", fmt.Sprintf("%+v", sum))
	recs, err := swarm.Jobs(st)
	if err != nil {
		t.Fatal(err)
	}
	leak("the job record", fmt.Sprintf("%+v", recs))
	leak("the refs", gittest.Git(t, dir, "for-each-ref"))
	cmd := exec.Command("git", "cat-file", "--batch-all-objects", "--batch")
	cmd.Dir, cmd.Env = dir, gittest.Env(t.TempDir())
	objects, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(objects), "DONE used <AGENT_KEY>") {
		t.Errorf("the recorded report does not name the redacted credential:\n%s", objects)
	}
	leak("an object of the repository", string(objects))
	harnessWrote := map[string]bool{"harness.log": true, "RESULT.md": true, "scratch/used": true}
	err = filepath.WalkDir(job, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(job, p)
		if harnessWrote[rel] {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		leak(rel, string(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if log, _ := os.ReadFile(filepath.Join(job, "harness.log")); !strings.Contains(string(log), secret) {
		t.Errorf("harness.log, the harness's own output, lost what it said: %q", log)
	}
}
