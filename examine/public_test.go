package examine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/refusal"
)

func TestParsePublicRefusesEveryMalformedDeclaration(t *testing.T) {
	ok := map[string][]string{
		`{}`:                               nil,
		`{"other": 1}`:                     nil,
		`{"examine": {}}`:                  nil,
		`{"examine": {"level": "strict"}}`: nil,
		`{"examine": {"public": ["docs/runbooks/**.md", "README.md"]}}`: {"docs/runbooks/**.md", "README.md"},
	}
	for in, want := range ok {
		got, err := examine.ParsePublic([]byte(in))
		if err != nil || strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s: %q %v", in, got, err)
		}
	}
	for _, in := range []string{
		`not json`, `[]`, `"x"`, `null`,
		`{"examine": []}`, `{"examine": "x"}`, `{"examine": null}`,
		`{"examine": {"public": ["a"], "other": 1}}`,
		`{"examine": {"public": []}}`, `{"examine": {"public": "a"}}`, `{"examine": {"public": null}}`,
		`{"examine": {"public": [1]}}`, `{"examine": {"public": ["/etc/passwd"]}}`,
		`{"examine": {"public": ["a//b"]}}`, `{"examine": {"public": ["a/./b"]}}`, `{"examine": {"public": ["../x"]}}`,
		`{"examine": {"public": ["a/"]}}`, `{"examine": {"public": [""]}}`,
	} {
		_, err := examine.ParsePublic([]byte(in))
		if !refusal.Named(err, refusal.InputUnreadable) || !strings.Contains(err.Error(), "examine.public") {
			t.Errorf("%s: %v", in, err)
		}
	}
}

// TestPublicProjectionIsTheCommittedProseOnly: the default roots' .md and
// .tmpl files and what examine.public matches (* within a segment, **
// across, /**/ zero or more directories), from committed blobs only; no
// source, no symbolic link, nothing from the work tree.
func TestPublicProjectionIsTheCommittedProseOnly(t *testing.T) {
	dir := gittest.Init(t, false)
	for _, p := range []string{
		"docs/guides/start.md", "docs/guides/deep/more.md", "docs/guides/image.png", "nWave/skills/s.tmpl",
		"nWave/agents/a.md", "docs/runbooks/ops/run.md", "docs/runbooks/run.txt", "docs/runbooks/top.md",
		"src/main.go", "guide/x/y/z/end.md", "guide/end.md", "notes/one.md", "notes/sub/two.md",
	} {
		gittest.WriteFile(t, dir, p, p+"\n")
	}
	gittest.WriteFile(t, dir, ".nwave/config.json", `{"examine": {"public": ["docs/runbooks/**.md", "README", "guide/**/end.md", "notes/*.md"]}}`)
	if err := os.Symlink("../src/main.go", filepath.Join(dir, "docs/guides/link.md")); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "add", "-A")
	gittest.Git(t, dir, "commit", "-q", "-m", "prose")
	gittest.WriteFile(t, dir, "docs/guides/uncommitted.md", "x\n")
	st := openStore(t, dir)
	head, err := st.Resolve("HEAD")
	if err != nil {
		t.Fatal(err)
	}
	files, err := examine.PublicProjection(st, head)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		got = append(got, f.Path)
	}
	want := []string{"README", "docs/guides/deep/more.md", "docs/guides/start.md", "docs/runbooks/ops/run.md", "docs/runbooks/top.md",
		"guide/end.md", "guide/x/y/z/end.md", "nWave/agents/a.md", "nWave/skills/s.tmpl", "notes/one.md"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("projection:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A malformed declaration refuses the whole projection.
	gittest.WriteFile(t, dir, ".nwave/config.json", `{"examine": {"public": ["/etc"]}}`)
	gittest.Git(t, dir, "commit", "-q", "-am", "bad")
	head, _ = st.Resolve("HEAD")
	if _, err := examine.PublicProjection(st, head); !refusal.Named(err, refusal.InputUnreadable) {
		t.Fatalf("a malformed declaration: %v", err)
	}
}
