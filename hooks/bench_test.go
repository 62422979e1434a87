package hooks_test

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/hooks"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/trust"
)

// The pre-push benchmark's repository: a main history of benchCommits
// commits, each examined once (accepted) in refs/nwdes/examine and noted in
// refs/notes/nwdes, both refs growing by benchPerCommit entries per commit
// so that, as in real use, their trees have histories that git gc stores
// as delta chains. Everything is packed by git gc. About 120k objects.
const (
	benchCommits   = 10_000
	benchPerCommit = 100 // examinations per commit of the examine ref
)

// benchDirEnv names a directory to build the fixture in and keep (reused
// when already built there), to look at it with git afterwards.
const benchDirEnv = "NWDES_HOOK_BENCH_DIR"

var bench struct {
	once sync.Once
	root string // removed by TestMain unless benchDirEnv names it
	repo string
	bin  string // directory holding git-nwdes
	head string
	// parent is head's parent: as the remote's tip of main it carries the
	// signing policy, so a push of head is checked with verification on.
	parent string
	err    error
}

// benchSigner is the fixed key the fixture signs head's examination with
// and its policy allows for greet.
func benchSigner() (ssh.Signer, error) {
	return ssh.NewSignerFromKey(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize)))
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bench.root != "" && os.Getenv(benchDirEnv) == "" {
		os.RemoveAll(bench.root)
	}
	os.Exit(code)
}

func benchFixture(b *testing.B) {
	b.Helper()
	bench.once.Do(func() { bench.err = buildBenchFixture() })
	if bench.err != nil {
		b.Fatal(bench.err)
	}
}

func benchGit(dir string, stdin []byte, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gittest.Env(filepath.Dir(dir))
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return out, nil
}

func buildBenchFixture() error {
	root := os.Getenv(benchDirEnv)
	if root == "" {
		var err error
		if root, err = os.MkdirTemp("", "nwdes-hook-bench"); err != nil {
			return err
		}
	}
	bench.root = root
	bench.bin = filepath.Join(root, "bin")
	if err := gittest.BuildNwdes(filepath.Join(bench.bin, "git-nwdes")); err != nil {
		return err
	}
	bench.repo = filepath.Join(root, "repo")
	if head, err := os.ReadFile(filepath.Join(root, "head")); err == nil {
		f := strings.Fields(string(head))
		if len(f) == 2 {
			bench.head, bench.parent = f[0], f[1]
			return nil
		}
	}
	signer, err := benchSigner()
	if err != nil {
		return err
	}
	policy := "greet " + string(ssh.MarshalAuthorizedKey(signer.PublicKey()))
	if err := os.RemoveAll(bench.repo); err != nil {
		return err
	}
	if _, err := benchGit(root, nil, "init", "-q", "-b", "main", bench.repo); err != nil {
		return err
	}
	// 1. The main history, with the contract in every tree.
	var s bytes.Buffer
	contract := "# REQUEST\nGreet.\n# ACCEPTANCE CRITERIA\nE1. greet NAME prints Hello, NAME.\nE2. greet prints usage\n"
	for i := 1; i <= benchCommits; i++ {
		fmt.Fprintf(&s, "commit refs/heads/main\nmark :%d\ncommitter T <t@e> %d +0000\n", i, 1767225600+i)
		msg := fmt.Sprintf("change %d\n", i)
		fmt.Fprintf(&s, "data %d\n%s", len(msg), msg)
		if i > 1 {
			fmt.Fprintf(&s, "from :%d\n", i-1)
		} else {
			fmt.Fprintf(&s, "M 100644 inline .nwave/features/greet.md\ndata %d\n%s\n", len(contract), contract)
			fmt.Fprintf(&s, "M 100644 inline %s\ndata %d\n%s\n", trust.PolicyPath, len(policy), policy)
		}
		body := fmt.Sprintf("revision %d of file %d\n", i, i%100)
		fmt.Fprintf(&s, "M 100644 inline src/file%02d.txt\ndata %d\n%s\n", i%100, len(body), body)
	}
	marks := filepath.Join(root, "marks")
	if _, err := benchGit(bench.repo, s.Bytes(), "fast-import", "--quiet", "--export-marks="+marks); err != nil {
		return err
	}
	commits, err := readMarks(marks)
	if err != nil {
		return err
	}
	bench.head, bench.parent = commits[benchCommits], commits[benchCommits-1]
	blob, err := benchGit(bench.repo, nil, "rev-parse", "main:.nwave/features/greet.md")
	if err != nil {
		return err
	}
	// 2. One accepted examination per commit, and its brief as a note.
	s.Reset()
	when := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 1; i <= benchCommits; i++ {
		if (i-1)%benchPerCommit == 0 {
			fmt.Fprintf(&s, "commit %s\ncommitter nwdes <nwdes@localhost> %d +0000\ndata 6\nclose\n", examine.Ref, when.Unix()+int64(i))
		}
		ex := &examine.Examination{
			Feature: "greet", Candidate: commits[i], ContractPath: ".nwave/features/greet.md",
			ContractBlob: strings.TrimSpace(string(blob)), Outcome: examine.Accepted,
			Diagnostic: "judged from public behaviour", ClosedAt: when.Add(time.Duration(i) * time.Second).Format("2006-01-02T15:04:05.000000000Z07:00"),
			Rows: []examine.PublishedRow{
				{Expectation: "E1", Criterion: "greet NAME prints Hello, NAME.", Verdict: examine.Met, Cites: []int{0}},
				{Expectation: "E2", Criterion: "greet prints usage", Verdict: examine.Met, Cites: []int{0}},
			},
			Texts: []examine.CitedText{{Source: examine.SourceExaminer}},
		}
		rec, err := gitstore.NewRecord(examine.KindExamination, 1, ex)
		if err != nil {
			return err
		}
		env, err := gitstore.Canonical(map[string]any{"body": json.RawMessage(rec.Body), "kind": rec.Kind, "v": 1})
		if err != nil {
			return err
		}
		sum := sha256.Sum256(rec.Body)
		stamp := strings.NewReplacer("-", "", ":", "").Replace(ex.ClosedAt)
		path := fmt.Sprintf("published/%s/%s/greet/%s-%s", commits[i][:2], commits[i][2:], stamp, hex.EncodeToString(sum[:6]))
		text := fmt.Sprintf("greet Ada printed Hello, Ada. (run %d)\n", i)
		fmt.Fprintf(&s, "M 100644 inline %s/record.json\ndata %d\n%s\n", path, len(env), env)
		fmt.Fprintf(&s, "M 100644 inline %s/payload/t1\ndata %d\n%s\n", path, len(text), text)
		if i == benchCommits {
			sig, err := trust.Sign(signer, trust.Message(env, map[string][]byte{"t1": []byte(text)}))
			if err != nil {
				return err
			}
			fmt.Fprintf(&s, "M 100644 inline %s/payload/%s\ndata %d\n%s\n", path, trust.SignaturePayload, len(sig), sig)
		}
		latest, err := gitstore.Canonical(map[string]any{"body": map[string]any{
			"path": path, "candidate": commits[i], "outcome": "accepted", "closed_at": ex.ClosedAt,
		}, "kind": examine.KindLatest, "v": 1})
		if err != nil {
			return err
		}
		if i%benchPerCommit == 0 || i == benchCommits {
			fmt.Fprintf(&s, "M 100644 inline features/greet/record.json\ndata %d\n%s\n", len(latest), latest)
		}
	}
	for i := 1; i <= benchCommits; i++ {
		if (i-1)%benchPerCommit == 0 {
			fmt.Fprintf(&s, "commit %s\ncommitter nwdes <nwdes@localhost> %d +0000\ndata 6\nnotes\n", gitstore.NotesRef, when.Unix()+int64(i))
		}
		note := fmt.Sprintf("## nwdes acceptance brief: greet: accepted\n\n- candidate: %s\n", commits[i])
		fmt.Fprintf(&s, "N inline %s\ndata %d\n%s\n", commits[i], len(note), note)
	}
	if _, err := benchGit(bench.repo, s.Bytes(), "fast-import", "--quiet"); err != nil {
		return err
	}
	if _, err := benchGit(bench.repo, nil, "gc", "-q", "--prune=now"); err != nil {
		return err
	}
	if _, err := hooks.Install(filepath.Join(bench.repo, ".git", "hooks")); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(root, "head"), []byte(bench.head+" "+bench.parent+"\n"), 0o644)
}

func readMarks(path string) (map[int]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[int]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var n int
		var sha string
		if _, err := fmt.Sscanf(sc.Text(), ":%d %s", &n, &sha); err != nil {
			return nil, err
		}
		out[n] = sha
	}
	return out, sc.Err()
}

func countObjects(b *testing.B) int {
	out, err := benchGit(bench.repo, nil, "count-objects", "-v")
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for _, l := range strings.Split(string(out), "\n") {
		var v int
		if _, err := fmt.Sscanf(l, "in-pack: %d", &v); err == nil {
			n += v
		}
		if _, err := fmt.Sscanf(l, "count: %d", &v); err == nil {
			n += v
		}
	}
	return n
}

// BenchmarkPrePushHook runs the installed pre-push hook — sh, then
// git-nwdes checking one pushed ref of main — exactly as git push would,
// side by side with `git notes --ref nwdes show <commit>` on the same
// repository, alternating the two so both see the same machine. It
// reports both times per run and their ratio (the goal is at most 2).
//
// The hook runs as it is configured by default, sending the records the
// accepted branch depends on to origin first (they are there already
// after the first round, so this is the check plus a push that finds
// nothing to send); BenchmarkPrePushHookCheckOnly is the same with
// nwdes.push.records=manual, the check alone, as the hook was before it
// sent records.
func BenchmarkPrePushHook(b *testing.B) {
	benchPrePushHook(b, strings.Repeat("0", 40))
}

func BenchmarkPrePushHookCheckOnly(b *testing.B) {
	benchFixture(b)
	gittest.Git(b, bench.repo, "config", "nwdes.push.records", "manual")
	defer gittest.Git(b, bench.repo, "config", "--unset", "nwdes.push.records")
	benchPrePushHook(b, strings.Repeat("0", 40))
}

// BenchmarkPrePushHookSigned is the same push with signature verification
// on: the remote's tip of main (head's parent) holds a signing policy, so
// the hook also reads it there, and verifies head's signed examination.
func BenchmarkPrePushHookSigned(b *testing.B) {
	benchFixture(b)
	benchPrePushHook(b, bench.parent)
}

func benchPrePushHook(b *testing.B, remoteTip string) {
	benchFixture(b)
	hook := filepath.Join(bench.repo, ".git", "hooks", "pre-push")
	input := fmt.Sprintf("refs/heads/main %s refs/heads/main %s\n", bench.head, remoteTip)
	benchAgainstNotesShow(b, "hook", "accepted (greet)", func() *exec.Cmd {
		cmd := exec.Command(hook, "origin", "../remote.git")
		cmd.Stdin = strings.NewReader(input)
		return cmd
	})
}

// BenchmarkStatusJSON is `git nwdes status --commit <head> --json`, what CI
// runs, against `git notes --ref nwdes show <head>` on the same repository:
// both answer what was concluded about one commit. The goal (issue 26) is a
// ratio of at most 1.2.
func BenchmarkStatusJSON(b *testing.B) {
	benchFixture(b)
	benchAgainstNotesShow(b, "status", `"accepted"`, func() *exec.Cmd {
		return exec.Command(filepath.Join(bench.bin, "git-nwdes"), "status", "--commit", bench.head, "--json")
	})
}

// BenchmarkExamineShow is the brief read, `git nwdes examine show` of the
// checked-out commit's one feature, against `git notes --ref nwdes show
// <head>`, which prints the brief nwdes published there. Goal: at most 1.2.
func BenchmarkExamineShow(b *testing.B) {
	benchFixture(b)
	benchAgainstNotesShow(b, "show", "greet", func() *exec.Cmd {
		return exec.Command(filepath.Join(bench.bin, "git-nwdes"), "examine", "show", "--feature", "greet")
	})
}

// benchAgainstNotesShow runs the command cmd makes (in the fixture's
// repository, with the test environment and git-nwdes on PATH) alternately
// with `git notes --ref nwdes show <head>` (gittest.AlternateRuns), each
// run required to succeed and print its marker, and reports both times,
// wall and CPU, and their ratios.
func benchAgainstNotesShow(b *testing.B, name, marker string, cmd func() *exec.Cmd) {
	env := append(gittest.Env(bench.root), "PATH="+bench.bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	notes := func() *exec.Cmd { return exec.Command("git", "notes", "--ref", "nwdes", "show", bench.head) }
	wall, cpu := gittest.AlternateRuns(b, bench.repo, env, []string{name, "notes-show"},
		gittest.Side{Cmd: cmd, Want: marker}, gittest.Side{Cmd: notes, Want: bench.head})
	b.Logf("%d objects: %s %.2f ms, git notes show %.2f ms, ratio %.2f; CPU %.2f ms against %.2f ms, ratio %.2f", countObjects(b), name,
		wall[0], wall[1], wall[0]/wall[1], cpu[0], cpu[1], cpu[0]/cpu[1])
}

// BenchmarkCheckInProcess is the check alone, in a warm process: what the
// hook costs beyond starting sh and git-nwdes.
func BenchmarkCheckInProcess(b *testing.B) {
	benchFixture(b)
	loc, err := gitrepo.Discover(bench.repo, nil)
	if err != nil {
		b.Fatal(err)
	}
	p := hooks.Policy{Protect: hooks.DefaultProtect}
	us := []hooks.Update{{LocalRef: "refs/heads/main", LocalOID: bench.head, RemoteRef: "refs/heads/main", RemoteOID: strings.Repeat("0", 40)}}
	b.ResetTimer()
	defer gittest.CPUPerOp(b)()
	for i := 0; i < b.N; i++ {
		open := func() (*gitstore.Store, error) { return gitstore.Open(loc, gitstore.Options{}) }
		rep, err := hooks.Check(open, p, us)
		if err != nil || rep.Refs[0].Verdict != hooks.Accepted {
			b.Fatalf("%+v %v", rep, err)
		}
	}
}
