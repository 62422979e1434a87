package workspace_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/examine/workspace"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/refusal"
)

const contract = `# REQUEST
Greet the visitor by name.

# ACCEPTANCE CRITERIA
E1. greet NAME prints "Hello, NAME."
E2. the guide documents greet

# FILE SCOPE
greet
`

// candidate makes a repository whose commit holds a contract, public prose
// (default roots and a declared README), private source, and a command
// declaration; it returns the checkout and an open store.
func candidate(t *testing.T, extra map[string]string) (string, *gitstore.Store) {
	t.Helper()
	dir := gittest.Init(t, false)
	files := map[string]string{
		".nwave/features/greeting.md": contract,
		"docs/guides/greeting.md":     "# Greeting\n\nRun `greet NAME`.\n",
		"docs/guides/deep/more.tmpl":  "more {{.}}\n",
		"docs/guides/notes.txt":       "not prose by extension\n",
		"docs/internal/plan.md":       "private plan\n",
		"src/greet.go":                "package main // source is never public\n",
		"README.md":                   "# greet\n",
		".nwave/config.json":          `{"examine": {"public": ["README.md"]}}`,
		".nwave/examine.json":         `{"commands": [{"name": "greet", "path": "bin/greet"}], "build": "make bin/greet"}`,
	}
	for k, v := range extra {
		files[k] = v
	}
	for name, body := range files {
		if body == "" {
			os.Remove(filepath.Join(dir, name))
			continue
		}
		gittest.WriteFile(t, dir, name, body)
	}
	gittest.Git(t, dir, "add", "-A")
	gittest.Git(t, dir, "commit", "-q", "-m", "candidate")
	loc, err := gitrepo.Discover(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := gitstore.NewRegistry(examine.Register)
	if err != nil {
		t.Fatal(err)
	}
	st, err := gitstore.Open(loc, gitstore.Options{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	real, _ := filepath.EvalSymlinks(dir)
	return real, st
}

func prompt(t *testing.T, st *gitstore.Store) *workspace.Bundle {
	t.Helper()
	p := &workspace.Prompter{Store: st, TempDir: t.TempDir(), Now: func() time.Time { return time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC) }}
	b, err := p.Prompt(context.Background(), examine.Target{Feature: "greeting"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { chmodAll(b.Workspace); os.RemoveAll(b.Workspace) })
	return b
}

func chmodAll(dir string) {
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o755)
		}
		return nil
	})
}

func refusalName(err error) string {
	var r *refusal.Error
	if errors.As(err, &r) {
		return r.Name
	}
	return ""
}

func TestPromptShowsExactlyThePublicProseReadOnly(t *testing.T) {
	checkout, st := candidate(t, nil)
	b := prompt(t, st)
	if !filepath.IsAbs(b.Workspace) || strings.HasPrefix(b.Workspace, checkout) {
		t.Fatalf("workspace %s is not outside the checkout %s", b.Workspace, checkout)
	}
	var got []string
	filepath.WalkDir(b.Workspace, func(p string, d os.DirEntry, err error) error {
		rel, _ := filepath.Rel(b.Workspace, p)
		fi, _ := d.Info()
		if strings.HasPrefix(rel, "public") && fi.Mode().Perm()&0o222 != 0 {
			t.Errorf("%s is writable: %v", rel, fi.Mode())
		}
		if !d.IsDir() {
			got = append(got, rel)
		}
		return nil
	})
	want := []string{"public/README.md", "public/docs/guides/deep/more.tmpl", "public/docs/guides/greeting.md"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("workspace files %q, want %q", got, want)
	}
	text := b.Text()
	for _, must := range []string{"TASK\n", "E1: greet NAME prints \"Hello, NAME.\"", "E2: the guide documents greet", "COMMANDS: greet", "\nWORKSPACE: " + b.Workspace + "\n"} {
		if !strings.Contains(text, must) {
			t.Errorf("bundle lacks %q:\n%s", must, text)
		}
	}
	for _, never := range []string{checkout, "src/greet.go", "private plan", "package main"} {
		if strings.Contains(text, never) {
			t.Errorf("bundle holds %q", never)
		}
	}
	if !strings.HasSuffix(text, "WORKSPACE: "+b.Workspace+"\n") {
		t.Errorf("the WORKSPACE: line is not last:\n%s", text)
	}
	// The projection is recorded: its tree is git's, with the committed blobs.
	if ls := gittest.Git(t, checkout, "ls-tree", "-r", "--name-only", b.Projection); ls != "README.md\ndocs/guides/deep/more.tmpl\ndocs/guides/greeting.md" {
		t.Fatalf("projection tree %s:\n%s", b.Projection, ls)
	}
	if a, c := gittest.Git(t, checkout, "rev-parse", b.Projection+":docs/guides/greeting.md"), gittest.Git(t, checkout, "rev-parse", "HEAD:docs/guides/greeting.md"); a != c {
		t.Fatalf("projection blob %s, committed %s", a, c)
	}
	gittest.Git(t, checkout, "fsck", "--strict")
	// A second prompt records nothing new for the same candidate.
	tip, _ := st.Tip(examine.Ref)
	prompt(t, st)
	if again, _ := st.Tip(examine.Ref); again != tip {
		t.Fatal("a second prompt of the same candidate recorded the projection again")
	}
}

func TestReadListsAndPrintsAndRefusesTheRest(t *testing.T) {
	_, st := candidate(t, nil)
	b := prompt(t, st)
	w, _, err := workspace.Open(st, b.Workspace)
	if err != nil {
		t.Fatal(err)
	}
	top, err := workspace.Read(w, "")
	if err != nil || !top.Dir || len(top.Entries) != 2 || top.Entries[0].Name != "README.md" || top.Entries[1].Name != "docs" || !top.Entries[1].Dir {
		t.Fatalf("read of the top: %+v %v", top, err)
	}
	f, err := workspace.Read(w, "docs/guides/greeting.md")
	if err != nil || string(f.Data) != "# Greeting\n\nRun `greet NAME`.\n" {
		t.Fatalf("read of the guide: %q %v", f.Data, err)
	}
	// scratch may hold a link out; reading through it is refused.
	os.Symlink("/etc", filepath.Join(b.Workspace, "scratch", "etc"))
	for _, p := range []string{"/etc/passwd", "../scratch", "docs/../../scratch", "src/greet.go", "docs/internal/plan.md", "nothing"} {
		if _, err := workspace.Read(w, p); refusalName(err) != refusal.ReadRefused {
			t.Errorf("read %q: %v, want ReadRefused", p, err)
		}
	}
}

func TestEveryContaminationIsNamedAndAFreshWorkspaceIsClean(t *testing.T) {
	for name, spoil := range map[string]func(w string) error{
		"bytes changed": func(w string) error {
			p := filepath.Join(w, "public/README.md")
			os.Chmod(p, 0o644)
			if err := os.WriteFile(p, []byte("# edited\n"), 0o644); err != nil {
				return err
			}
			return os.Chmod(p, 0o444)
		},
		"a file added": func(w string) error {
			os.Chmod(filepath.Join(w, "public"), 0o755)
			defer os.Chmod(filepath.Join(w, "public"), 0o555)
			return os.WriteFile(filepath.Join(w, "public/extra.md"), nil, 0o444)
		},
		"a file removed": func(w string) error {
			os.Chmod(filepath.Join(w, "public"), 0o755)
			defer os.Chmod(filepath.Join(w, "public"), 0o555)
			return os.Remove(filepath.Join(w, "public/README.md"))
		},
		"a symlink in public": func(w string) error {
			os.Chmod(filepath.Join(w, "public"), 0o755)
			defer os.Chmod(filepath.Join(w, "public"), 0o555)
			return os.Symlink("README.md", filepath.Join(w, "public/link.md"))
		},
		"a public file writable":      func(w string) error { return os.Chmod(filepath.Join(w, "public/README.md"), 0o644) },
		"a public directory writable": func(w string) error { return os.Chmod(filepath.Join(w, "public/docs"), 0o755) },
		"a third top-level entry":     func(w string) error { return os.Mkdir(filepath.Join(w, "src"), 0o755) },
		"scratch is a symlink": func(w string) error {
			if err := os.Remove(filepath.Join(w, "scratch")); err != nil {
				return err
			}
			return os.Symlink("/tmp", filepath.Join(w, "scratch"))
		},
		"inside a checkout": func(w string) error { return os.Mkdir(filepath.Join(filepath.Dir(w), ".git"), 0o755) },
	} {
		t.Run(name, func(t *testing.T) {
			_, st := candidate(t, nil)
			b := prompt(t, st)
			if _, _, err := workspace.Open(st, b.Workspace); err != nil {
				t.Fatalf("a fresh workspace: %v", err)
			}
			if err := spoil(b.Workspace); err != nil {
				t.Fatal(err)
			}
			_, _, err := workspace.Open(st, b.Workspace)
			if refusalName(err) != refusal.WorkspaceContaminated {
				t.Fatalf("%v, want WorkspaceContaminated", err)
			}
		})
	}
}

func TestScratchMayHoldAnythingAndInspectionFollowsNoLink(t *testing.T) {
	_, st := candidate(t, nil)
	b := prompt(t, st)
	s := filepath.Join(b.Workspace, "scratch")
	os.Symlink("/", filepath.Join(s, "root"))
	os.Symlink("../public", filepath.Join(s, "pub"))
	os.WriteFile(filepath.Join(s, "fixture.txt"), []byte("x"), 0o600)
	if _, _, err := workspace.Open(st, b.Workspace); err != nil {
		t.Fatalf("scratch contents contaminated the workspace: %v", err)
	}
}

func TestAMalformedPublicDeclarationRefusesThePromptAndMakesNothing(t *testing.T) {
	tmp := t.TempDir()
	for name, extra := range map[string]map[string]string{
		"examine.public not an array": {".nwave/config.json": `{"examine": {"public": "README.md"}}`},
		"commands not a list":         {".nwave/examine.json": `{"commands": {}}`},
		"names differ from pyproject": {"pyproject.toml": "[project.scripts]\nhello = \"greet.cli:main\"\n"},
	} {
		t.Run(name, func(t *testing.T) {
			_, st := candidate(t, extra)
			p := &workspace.Prompter{Store: st, TempDir: tmp}
			_, err := p.Prompt(context.Background(), examine.Target{Feature: "greeting"})
			if refusalName(err) != refusal.InputUnreadable {
				t.Fatalf("%v, want InputUnreadable", err)
			}
			if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
				t.Fatalf("a refused prompt left %v", ents)
			}
			if tip, _ := st.Tip(examine.Ref); !tip.IsZero() {
				t.Fatal("a refused prompt recorded a projection")
			}
		})
	}
}

func TestAWorkspaceDirectoryInsideACheckoutIsRefused(t *testing.T) {
	checkout, st := candidate(t, nil)
	p := &workspace.Prompter{Store: st, TempDir: filepath.Join(checkout, "docs")}
	if _, err := p.Prompt(context.Background(), examine.Target{Feature: "greeting"}); refusalName(err) != refusal.TempDirUnusable {
		t.Fatalf("%v, want TempDirUnusable", err)
	}
}

func TestAJobsWorkspaceMayLieInItsWalledJobDirectoryAndNowhereElseInTheCheckout(t *testing.T) {
	checkout, st := candidate(t, nil)
	job := filepath.Join(checkout, ".git", "nwdes", "swarm", "jobs", "exam", "1-0123456789abcdef")
	if err := os.MkdirAll(filepath.Join(job, "scratch"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := &workspace.Prompter{Store: st, TempDir: job, Job: job}
	b, err := p.Prompt(context.Background(), examine.Target{Feature: "greeting"})
	if err != nil || filepath.Dir(b.Workspace) != job {
		t.Fatalf("in the job directory: %+v, %v", b, err)
	}
	for name, p := range map[string]*workspace.Prompter{
		"the checkout, named as a job": {Store: st, TempDir: filepath.Join(checkout, "docs"), Job: filepath.Join(checkout, "docs")},
		"outside the job directory":    {Store: st, TempDir: filepath.Join(checkout, "docs"), Job: job},
		"without saying it is a job's": {Store: st, TempDir: job},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := p.Prompt(context.Background(), examine.Target{Feature: "greeting"}); refusalName(err) != refusal.TempDirUnusable {
				t.Fatalf("%v, want TempDirUnusable", err)
			}
		})
	}
	t.Run("a checkout inside the job", func(t *testing.T) {
		if err := os.Mkdir(filepath.Join(job, "scratch", ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
		p := &workspace.Prompter{Store: st, TempDir: filepath.Join(job, "scratch"), Job: job}
		if _, err := p.Prompt(context.Background(), examine.Target{Feature: "greeting"}); refusalName(err) != refusal.TempDirUnusable {
			t.Fatalf("%v, want TempDirUnusable", err)
		}
	})
}

func TestSweepRemovesCleanWorkspacesKeepsContaminatedOnesAndLeavesOtherCheckouts(t *testing.T) {
	checkout, st := candidate(t, nil)
	clean, dirty := prompt(t, st), prompt(t, st)
	os.Mkdir(filepath.Join(dirty.Workspace, "extra"), 0o755)
	swept, err := workspace.Sweep(context.Background(), st, "greeting", filepath.Join(checkout, "elsewhere"), time.Now())
	if err != nil || len(swept.Removed)+len(swept.Kept) != 0 || len(swept.Elsewhere) != 2 {
		t.Fatalf("from another checkout: %+v %v", swept, err)
	}
	swept, err = workspace.Sweep(context.Background(), st, "greeting", checkout, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(swept.Removed) != 1 || swept.Removed[0] != clean.Workspace || len(swept.Kept) != 1 || !strings.HasPrefix(swept.Kept[0], dirty.Workspace) {
		t.Fatalf("sweep: %+v", swept)
	}
	if _, err := os.Lstat(clean.Workspace); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the clean workspace is still there")
	}
	if _, err := os.Lstat(dirty.Workspace); err != nil {
		t.Fatal("the contaminated workspace was removed")
	}
	// Both stay recorded (the examination names the projection seen);
	// only the removed one says so, and only the kept one can be used.
	ws, _ := examine.Workspaces(st)
	for _, w := range ws {
		if (w.Path == clean.Workspace) != (w.Removed != "") {
			t.Errorf("record after the sweep: %+v", w)
		}
	}
	if _, err := examine.FindWorkspace(st, clean.Workspace); refusalName(err) != refusal.MissingFact {
		t.Errorf("a removed workspace is still found: %v", err)
	}
	again, err := workspace.Sweep(context.Background(), st, "greeting", checkout, time.Now())
	if err != nil || len(again.Removed) != 0 || len(again.Kept) != 1 {
		t.Fatalf("a second sweep: %+v %v", again, err)
	}
}

func TestOutputPathsAreRewrittenAcrossWrites(t *testing.T) {
	var out bytes.Buffer
	r := workspace.NewReplacerForTest(&out, "/home/u/repo", "<candidate>")
	for _, chunk := range []string{"at /home/u/re", "po/bin: ok /home/u/repo", "", "/x /home/u/rep", "o2 /home/u/repo:1 /home/u/rep"} {
		r.Write([]byte(chunk))
	}
	r.Flush()
	if got := out.String(); got != "at <candidate>/bin: ok <candidate>/x /home/u/repo2 <candidate>:1 /home/u/rep" {
		t.Fatalf("%q", got)
	}
	out.Reset()
	r.Write([]byte("ends with /home/u/repo"))
	r.Flush()
	if got := out.String(); got != "ends with <candidate>" {
		t.Fatalf("%q", got)
	}
}

// However the output is cut into writes, the rewrite is the same.
func FuzzOutputRewriteIgnoresHowTheStreamIsCut(f *testing.F) {
	f.Add([]byte("at /home/u/repo/bin and /home/u/repo2 /home/u/repo"), uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, cut uint8) {
		var whole, pieces bytes.Buffer
		w := workspace.NewReplacerForTest(&whole, "/home/u/repo", "<candidate>")
		w.Write(data)
		w.Flush()
		p := workspace.NewReplacerForTest(&pieces, "/home/u/repo", "<candidate>")
		n := int(cut%16) + 1
		for i := 0; i < len(data); i += n {
			p.Write(data[i:min(i+n, len(data))])
		}
		p.Flush()
		if whole.String() != pieces.String() {
			t.Fatalf("whole %q, in pieces of %d %q", whole.String(), n, pieces.String())
		}
	})
}
