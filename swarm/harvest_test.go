package swarm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/oid"
)

func TestAWorkersIdentityIsItsOwnOrTheDefaultThatNamesIt(t *testing.T) {
	t.Parallel()
	w := &Worker{Name: "coder"}
	if n, e := w.Ident(); n != "nwdes worker coder" || e != "coder@nwdes.invalid" {
		t.Fatalf("default identity = %q <%s>", n, e)
	}
	w.Identity = "Pool Bot <bot@pool.example>"
	if n, e := w.Ident(); n != "Pool Bot" || e != "bot@pool.example" {
		t.Fatalf("identity = %q <%s>", n, e)
	}
	if err := w.Validate(); err == nil || !strings.Contains(err.Error(), "harness: missing") || strings.Contains(err.Error(), "identity") {
		t.Fatalf("Validate = %v", err)
	}
}

func TestThePromptIsTheCardThenTheResultContract(t *testing.T) {
	t.Parallel()
	c, err := ParseCard([]byte(testCard))
	if err != nil {
		t.Fatal(err)
	}
	p := string(Prompt(c, "/jobs/x/RESULT.md"))
	if !strings.HasPrefix(p, string(c.Text)) {
		t.Fatal("the prompt does not begin with the card byte for byte")
	}
	for _, want := range []string{"$NWDES_JOB_DIR/RESULT.md (/jobs/x/RESULT.md)", "\n" + c.ContractLine + "\n", "DONE, BLOCKED or ABSTAIN",
		"at most 1048576 bytes, 2000 lines and 8192", "git commit"} {
		if !strings.Contains(p[len(c.Text):], want) {
			t.Errorf("the contract does not say %q:\n%s", want, p[len(c.Text):])
		}
	}
}

func TestJobHeadFollowsHEADThroughLooseAndPackedRefsOnly(t *testing.T) {
	t.Parallel()
	const a, b = "1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222"
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string // a commit id, or what the error says
	}{
		{"a loose branch", map[string]string{"HEAD": "ref: refs/heads/w\n", "refs/heads/w": a + "\n"}, a},
		{"a packed branch", map[string]string{"HEAD": "ref: refs/heads/w\n", "packed-refs": "# pack-refs with: peeled\n" + b + " refs/heads/w\n^" + a + "\n"}, b},
		// git 2.39 reads the second of two lines, a first-match reader the
		// first: a job could show one head to git and have another harvested.
		{"a branch packed twice", map[string]string{"HEAD": "ref: refs/heads/w\n", "packed-refs": "# pack-refs with: peeled fully-peeled sorted\n" + a + " refs/heads/w\n" + b + " refs/heads/w\n"}, "more than once"},
		{"a detached HEAD", map[string]string{"HEAD": a + "\n"}, a},
		{"an unborn branch", map[string]string{"HEAD": "ref: refs/heads/none\n"}, "unborn"},
		{"a ref outside refs/", map[string]string{"HEAD": "ref: ../../config\n"}, "which is no ref"},
		{"a cycle", map[string]string{"HEAD": "ref: refs/heads/a\n", "refs/heads/a": "ref: refs/heads/a\n"}, "more than 5 deep"},
		{"no newline", map[string]string{"HEAD": a}, "not one line"},
		{"not an id", map[string]string{"HEAD": "ref: refs/heads/w\n", "refs/heads/w": "xyz\n"}, "no commit id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for name, body := range tc.files {
				p := filepath.Join(dir, "repo", ".git", filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			id, err := jobHead(dir, oid.SHA1)
			switch {
			case len(tc.want) == 40 && (err != nil || id.String() != tc.want):
				t.Fatalf("jobHead = %s, %v; want %s", id, err, tc.want)
			case len(tc.want) != 40 && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("jobHead = %s, %v; want an error saying %q", id, err, tc.want)
			}
		})
	}
}

func TestAJobRecordsHarvestFieldsHoldTogether(t *testing.T) {
	t.Parallel()
	head := strings.Repeat("a", 40)
	ok := Job{Label: "c", Attempt: 1, Nonce: "0123456789abcdef"}
	for _, tc := range []struct {
		name string
		v    int
		edit func(j *Job)
		want string
	}{
		{"v1 with no harvest", 1, func(j *Job) {}, ""},
		{"v1 naming a head", 1, func(j *Job) { j.Head = head }, "a v1 job record holds no harvest"},
		{"none", 2, func(j *Job) { j.Harvest = HarvestNone }, ""},
		{"none with a head", 2, func(j *Job) { j.Harvest, j.Head = HarvestNone, head }, "names no head"},
		{"descends", 2, func(j *Job) {
			j.Harvest, j.Head, j.HeadRef, j.Commits, j.Changed, j.ChangedCount = HarvestDescends, head, string(HeadRef("c", 1, j.Nonce)), 1, []string{"a"}, 1
		}, ""},
		{"descends under another ref", 2, func(j *Job) {
			j.Harvest, j.Head, j.HeadRef = HarvestDescends, head, string(Heads)+"other/1-0123456789abcdef"
		}, "names its head"},
		{"more paths than counted", 2, func(j *Job) {
			j.Harvest, j.Head, j.HeadRef, j.Changed = HarvestDiverged, head, string(HeadRef("c", 1, j.Nonce)), []string{"a"}
		}, "do not add up"},
		{"an unknown harvest", 2, func(j *Job) { j.Harvest = "maybe" }, `harvest "maybe" is not`},
		{"v2 with no harvest", 2, func(j *Job) {}, `harvest "" is not`},
	} {
		j := ok
		tc.edit(&j)
		if got := j.harvestProblem(tc.v); got != tc.want && (tc.want == "" || !strings.Contains(got, tc.want)) {
			t.Errorf("%s: harvestProblem = %q, want %q", tc.name, got, tc.want)
		}
	}
	if HeadRef("c", 2, "0123456789abcdef") != gitstore.RefName("refs/nwdes/swarm/heads/c/2-0123456789abcdef") {
		t.Fatal(HeadRef("c", 2, "0123456789abcdef"))
	}
}
