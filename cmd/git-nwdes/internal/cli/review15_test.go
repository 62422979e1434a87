package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nwdes/nwdes/internal/gittest"
)

// runAt is runIn with the clock fixed at now.
func runAt(t *testing.T, dir string, now time.Time, args ...string) hostileRun {
	t.Helper()
	home := filepath.Join(filepath.Dir(dir), "home")
	os.MkdirAll(home, 0o755)
	env := map[string]string{"HOME": home, "PATH": os.Getenv("PATH"), "TMPDIR": t.TempDir(), "GIT_CONFIG_NOSYSTEM": "1", "NO_COLOR": "1"}
	var out, errb bytes.Buffer
	code := Main(context.Background(), append([]string{"git-nwdes"}, args...), Env{
		Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Dir: dir,
		Getenv: func(k string) string { return env[k] }, Now: func() time.Time { return now },
	})
	return hostileRun{code, out.String(), errb.String()}
}

const cleanTrial15 = `{"at":"2026-03-02T09:00:00Z","kind":"segment_start","segment":"supervisor"}
{"at":"2026-03-02T09:20:00Z","kind":"segment_end","segment":"supervisor","action":"succeeded"}
{"at":"2026-03-02T10:00:00Z","kind":"window_open","segment":"window"}
{"at":"2026-03-02T10:00:00Z","kind":"dispatch"}
{"at":"2026-03-02T11:00:00Z","kind":"window_close","segment":"window"}`

const start15 = `{"v": 1, "window": {"segment": "window", "opensAt": "2026-03-02T10:00:00Z", "closesAt": "2026-03-02T11:00:00Z"}}`

var graded15 = time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC)

func trialLedger15(t *testing.T, extra ...string) string {
	t.Helper()
	dir := gittest.Init(t, false)
	gittest.WriteFile(t, dir, "start.json", start15)
	for _, e := range append(strings.Split(cleanTrial15, "\n"), extra...) {
		if r := runAt(t, dir, graded15, "ledger", "append", "--ledger", "trial", "--event", e); r.code != 0 {
			t.Fatalf("append %s: %d %s", e, r.code, r.stderr)
		}
	}
	if len(extra) > 0 {
		return dir
	}
	if r := runAt(t, dir, graded15, "ledger", "grade", "--start", "start.json", "--ledger", "trial"); r.code != 0 {
		t.Fatalf("the clean trial does not grade clean: %d %s %s", r.code, r.stdout, r.stderr)
	}
	return dir
}

// Grade's exit status is 0 clean, 1 an intervention in the window, 2
// refused before a result: a ledger or file it cannot read is no judgment
// of the window (3, could not decide), never 1, which a gate reading the
// status would take for "an intervention fell inside the window".
func TestGradeCouldNotDecideWhenItCannotReadItsLedger(t *testing.T) {
	t.Run("a broken ledger", func(t *testing.T) {
		dir := trialLedger15(t)
		cmd := exec.Command("sh", "-ec", `
L=refs/nwdes/ledgers/trial
p=entries/000000/0000000001/record.json
new=$(git cat-file blob "$L:$p" | sed 's/supervisor/superviser/' | git hash-object -w --stdin)
git read-tree --index-output=.git/tmpidx "$L"
GIT_INDEX_FILE=.git/tmpidx git update-index --cacheinfo 100644,$new,$p
git update-ref "$L" $(git commit-tree -m edit -p $(git rev-parse "$L") $(GIT_INDEX_FILE=.git/tmpidx git write-tree))`)
		cmd.Dir = dir
		cmd.Env = gittest.Env(filepath.Dir(dir))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v %s", err, out)
		}
		r := runAt(t, dir, graded15, "ledger", "grade", "--start", "start.json", "--ledger", "trial")
		if r.code != ExitUndecided {
			t.Errorf("grade of a broken ledger: exit %d (%s), want 3", r.code, strings.TrimSpace(r.stderr))
		}
	})
	t.Run("a ledger file that cannot be read", func(t *testing.T) {
		dir := trialLedger15(t)
		r := runAt(t, dir, graded15, "ledger", "grade", "--start", "start.json", "--file", "absent.jsonl")
		if r.code != ExitUndecided {
			t.Errorf("grade of an absent file: exit %d (%s), want 3", r.code, strings.TrimSpace(r.stderr))
		}
	})
	t.Run("a start record that cannot be read", func(t *testing.T) {
		dir := trialLedger15(t)
		r := runAt(t, dir, graded15, "ledger", "grade", "--start", "absent.json", "--ledger", "trial")
		if r.code != ExitUndecided {
			t.Errorf("grade with an absent start record: exit %d (%s), want 3", r.code, strings.TrimSpace(r.stderr))
		}
	})
}

// "A line dated after the grading moment is refused": a preflight entry is
// a line of the ledger too, but it is skipped unread (only its kind is
// looked at), so one dated years after the grading moment, or one written
// inside the window (a preflight after the dispatch), grades clean and is
// cited as the trial's preflight.
func TestAPreflightEntryDatedAfterTheGradingMomentIsRefused(t *testing.T) {
	dir := trialLedger15(t, `{"at":"2999-01-01T00:00:00Z","kind":"preflight","readings":{"ready":true}}`)
	r := runAt(t, dir, graded15, "ledger", "grade", "--start", "start.json", "--ledger", "trial")
	if r.code != 2 || !strings.Contains(r.stderr, "line-after-grading") {
		t.Errorf("a preflight entry dated 2999, graded at %s: exit %d\n%s%s", graded15.Format(time.RFC3339), r.code, r.stdout, r.stderr)
	}
}

func procStart15(t *testing.T, pid int) uint64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Skip("no procfs")
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	n, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// The preflight's window reading judges readings.window, a second copy of
// the window that nothing compares with the record's own window (the one
// the grade measures). A record whose window opens three hours ahead, with
// a readings.window five minutes ahead, reads "window true": the preflight
// vouches for a window this dispatch does not open.
func TestPreflightJudgesTheWindowTheRecordDeclares(t *testing.T) {
	dir := gittest.Init(t, false)
	now := time.Now().UTC().Truncate(time.Second)
	declared := now.Add(3 * time.Hour)
	readings := now.Add(5 * time.Minute)
	rec := map[string]any{
		"v": 1,
		"window": map[string]any{"segment": "window",
			"opensAt": declared.Format(time.RFC3339), "closesAt": declared.Add(time.Hour).Format(time.RFC3339)},
		"readings": map[string]any{
			"window":     map[string]any{"open": readings.Format(time.RFC3339), "close": readings.Add(time.Hour).Format(time.RFC3339)},
			"supervisor": map[string]any{"pid": os.Getpid(), "start": procStart15(t, os.Getpid())},
			"witness":    map[string]any{"file": filepath.Join(t.TempDir(), "beat"), "interval_ms": 10},
		},
	}
	b, _ := json.Marshal(rec)
	gittest.WriteFile(t, dir, "start.json", string(b))
	r := runAt(t, dir, now, "trial", "preflight", "--start", "start.json", "--json")
	if r.code == 2 && strings.Contains(r.stderr, "TrialInvalid") {
		return // refusing the disagreeing record is a right answer
	}
	var got struct {
		Readings []struct{ Name, Answer, Detail string } `json:"readings"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("exit %d: %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	for _, x := range got.Readings {
		if x.Name == "window" && x.Answer == "true" {
			t.Errorf("the record's window opens at %s, 3h ahead, and the preflight reads window true: %s", declared.Format(time.RFC3339), x.Detail)
		}
	}
}

// Preflight: exit 1 is "a reading is false"; a start record that cannot
// be read is no reading at all: it could not decide (3), never 1.
func TestPreflightCouldNotDecideWhenItsStartRecordCannotBeRead(t *testing.T) {
	dir := gittest.Init(t, false)
	r := runAt(t, dir, time.Now(), "trial", "preflight", "--start", "absent.json")
	if r.code != ExitUndecided {
		t.Errorf("preflight with an absent start record: exit %d (%s), want 3", r.code, strings.TrimSpace(r.stderr))
	}
}
