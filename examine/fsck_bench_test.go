package examine_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/internal/gittest"
)

// fsckBenchPerCommit is how many examinations one records commit adds, as
// the hook's benchmark grows its repository.
const fsckBenchPerCommit = 100

// BenchmarkFsckExaminations runs `git nwdes fsck` (built as make build
// builds it) on a repository of n examined commits, each with its
// examination record, the feature's index and the brief as a note, against
// its twin `git fsck` on the same repository, the two alternating. The goal
// (issue 26) is a ratio of at most 3 at 10k examinations, and a cost linear
// in what fsck checks: the ratio should not grow from 1k to 10k.
func BenchmarkFsckExaminations(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			dir := b.TempDir()
			bin := filepath.Join(dir, "git-nwdes")
			if err := gittest.BuildNwdes(bin); err != nil {
				b.Fatal(err)
			}
			repo := filepath.Join(dir, "repo")
			examinedRepo(b, repo, n)
			gittest.Alternate(b, repo, gittest.Env(dir), []string{"nwdes", "git"}, []string{bin, "fsck"}, []string{"git", "fsck", "--no-progress"})
		})
	}
}

// BenchmarkFsckInProcess is Store.Fsck of the repository
// BenchmarkFsckExaminations checks at 1k examinations, and of the one
// BenchmarkFsckDraft checks at 1,000 observations, in a warm process
// without the process start: what to profile. Each fsck opens its own
// store, as the command does.
func BenchmarkFsckInProcess(b *testing.B) {
	for _, tc := range []struct {
		name string
		make func(b *testing.B, repo string)
	}{
		{"examinations-1000", func(b *testing.B, repo string) { examinedRepo(b, repo, 1000) }},
		{"examinations-10000", func(b *testing.B, repo string) { examinedRepo(b, repo, 10000) }},
		{"draft-1000", func(b *testing.B, repo string) { draftRepo(b, repo, 1000) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			repo := filepath.Join(b.TempDir(), "repo")
			tc.make(b, repo)
			loc, err := gitrepo.Discover(repo, nil)
			if err != nil {
				b.Fatal(err)
			}
			reg := gitstore.MustRegistry(examine.Register)
			b.ResetTimer()
			defer gittest.CPUPerOp(b)()
			for i := 0; i < b.N; i++ {
				st, err := gitstore.Open(loc, gitstore.Options{Registry: reg})
				if err != nil {
					b.Fatal(err)
				}
				rep, err := st.Fsck()
				if err != nil {
					b.Fatal(err)
				}
				if len(rep.Problems) > 0 {
					b.Fatalf("fsck found problems: %+v", rep.Problems[0])
				}
				st.Close()
			}
		})
	}
}

// examinedRepo makes repo: a main history of n commits, each examined
// (accepted) once, its record, the feature's index and its brief as a note
// written by git fast-import in commits of fsckBenchPerCommit, then packed
// by git gc. The records and notes are what nwdes would write, so fsck
// finds nothing wrong.
func examinedRepo(b *testing.B, repo string, n int) {
	b.Helper()
	git := func(stdin []byte, args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = repo, gittest.Env(filepath.Dir(repo))
		cmd.Stdin = bytes.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if err := os.MkdirAll(repo, 0o755); err != nil {
		b.Fatal(err)
	}
	git(nil, "init", "-q", "-b", "main")
	var s bytes.Buffer
	contract := "# REQUEST\nGreet.\n# ACCEPTANCE CRITERIA\nE1. greet NAME prints Hello, NAME.\nE2. greet prints usage\n"
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&s, "commit refs/heads/main\nmark :%d\ncommitter T <t@e> %d +0000\ndata 7\nchange\n", i, 1767225600+i)
		if i > 1 {
			fmt.Fprintf(&s, "from :%d\n", i-1)
		} else {
			fmt.Fprintf(&s, "M 100644 inline .nwave/features/greet.md\ndata %d\n%s\n", len(contract), contract)
		}
		body := fmt.Sprintf("revision %d of file %d\n", i, i%100)
		fmt.Fprintf(&s, "M 100644 inline src/file%02d.txt\ndata %d\n%s\n", i%100, len(body), body)
	}
	marks := filepath.Join(filepath.Dir(repo), "marks")
	git(s.Bytes(), "fast-import", "--quiet", "--export-marks="+marks)
	commits := map[string]string{}
	raw, err := os.ReadFile(marks)
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		f := strings.Fields(l)
		commits[f[0]] = f[1]
	}
	blob := git(nil, "rev-parse", "main:.nwave/features/greet.md")
	s.Reset()
	var notes bytes.Buffer
	when := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 1; i <= n; i++ {
		c := commits[fmt.Sprintf(":%d", i)]
		if (i-1)%fsckBenchPerCommit == 0 {
			fmt.Fprintf(&s, "commit %s\ncommitter nwdes <nwdes@localhost> %d +0000\ndata 6\nclose\n", examine.Ref, when.Unix()+int64(i))
			fmt.Fprintf(&notes, "commit %s\ncommitter nwdes <nwdes@localhost> %d +0000\ndata 6\nnotes\n", gitstore.NotesRef, when.Unix()+int64(i))
		}
		text := fmt.Sprintf("greet Ada printed Hello, Ada. (run %d)\n", i)
		ex := &examine.Examination{
			Feature: "greet", Candidate: c, ContractPath: ".nwave/features/greet.md",
			ContractBlob: blob, Outcome: examine.Accepted,
			Diagnostic: "judged from public behaviour", ClosedAt: when.Add(time.Duration(i) * time.Second).Format("2006-01-02T15:04:05.000000000Z07:00"),
			Rows: []examine.PublishedRow{
				{Expectation: "E1", Criterion: "greet NAME prints Hello, NAME.", Verdict: examine.Met, Cites: []int{0}},
				{Expectation: "E2", Criterion: "greet prints usage", Verdict: examine.Met, Cites: []int{0}},
			},
			Texts: []examine.CitedText{{Source: examine.SourceExaminer, Text: []byte(text)}},
		}
		rec, err := gitstore.NewRecord(examine.KindExamination, 1, ex)
		if err != nil {
			b.Fatal(err)
		}
		env, err := gitstore.Canonical(map[string]any{"body": json.RawMessage(rec.Body), "kind": rec.Kind, "v": 1})
		if err != nil {
			b.Fatal(err)
		}
		sum := sha256.Sum256(rec.Body)
		stamp := strings.NewReplacer("-", "", ":", "").Replace(ex.ClosedAt)
		path := fmt.Sprintf("published/%s/%s/greet/%s-%s", c[:2], c[2:], stamp, hex.EncodeToString(sum[:6]))
		fmt.Fprintf(&s, "M 100644 inline %s/record.json\ndata %d\n%s\n", path, len(env), env)
		fmt.Fprintf(&s, "M 100644 inline %s/payload/t1\ndata %d\n%s\n", path, len(text), text)
		if i%fsckBenchPerCommit == 0 || i == n {
			latest, err := gitstore.Canonical(map[string]any{"body": map[string]any{
				"path": path, "candidate": c, "outcome": "accepted", "closed_at": ex.ClosedAt,
			}, "kind": examine.KindLatest, "v": 1})
			if err != nil {
				b.Fatal(err)
			}
			fmt.Fprintf(&s, "M 100644 inline features/greet/record.json\ndata %d\n%s\n", len(latest), latest)
		}
		note := examine.RenderBrief(ex)
		fmt.Fprintf(&notes, "N inline %s\ndata %d\n%s\n", c, len(note), note)
	}
	s.Write(notes.Bytes())
	git(s.Bytes(), "fast-import", "--quiet")
	git(nil, "gc", "-q", "--prune=now")
}

// BenchmarkFsckDraft runs `git nwdes fsck` (built as make build builds it)
// on a repository whose one draft was grown to n observations by n adds,
// each its own commit of the drafts ref, against its twin `git fsck` on
// the same repository, the two alternating. The goal (issue 26) is a ratio
// of at most 3 at 1,000 observations, and a cost linear in what fsck
// checks: each version of the draft holds every observation so far, so the
// ratio, not the time, should stay flat from 250 to 1,000.
func BenchmarkFsckDraft(b *testing.B) {
	for _, n := range []int{250, 1000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			dir := b.TempDir()
			bin := filepath.Join(dir, "git-nwdes")
			if err := gittest.BuildNwdes(bin); err != nil {
				b.Fatal(err)
			}
			repo := filepath.Join(dir, "repo")
			draftRepo(b, repo, n)
			gittest.Alternate(b, repo, gittest.Env(dir), []string{"nwdes", "git"}, []string{bin, "fsck"}, []string{"git", "fsck", "--no-progress"})
		})
	}
}

// draftRepo makes repo: one commit with a contract, and a draft of it
// grown by n observation adds, as the examiner makes them.
func draftRepo(b *testing.B, repo string, n int) {
	b.Helper()
	env := gittest.Env(filepath.Dir(repo))
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = repo, env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	if err := os.MkdirAll(filepath.Join(repo, ".nwave/features"), 0o755); err != nil {
		b.Fatal(err)
	}
	git("init", "-q", "-b", "main")
	contract := "# REQUEST\nGreet.\n# ACCEPTANCE CRITERIA\nE1. greet NAME prints Hello, NAME.\n"
	if err := os.WriteFile(filepath.Join(repo, ".nwave/features/greet.md"), []byte(contract), 0o644); err != nil {
		b.Fatal(err)
	}
	git("add", "-A")
	git("commit", "-q", "-m", "contract")
	loc, err := gitrepo.Discover(repo, nil)
	if err != nil {
		b.Fatal(err)
	}
	st, err := gitstore.Open(loc, gitstore.Options{Registry: gitstore.MustRegistry(examine.Register)})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	x := &examine.Examiner{Store: st}
	ctx := context.Background()
	t := examine.Target{Feature: "greet"}
	if _, err := x.Open(ctx, t, false); err != nil {
		b.Fatal(err)
	}
	for i := range n {
		if _, err := x.AddObservation(ctx, t, examine.SourceExaminer, fmt.Appendf(nil, "greet Ada printed Hello, Ada. (run %d)\n", i)); err != nil {
			b.Fatal(err)
		}
	}
}
