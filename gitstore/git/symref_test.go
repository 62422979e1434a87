package git_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/gitstore/git"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/refusal"
)

func TestReferentFollowsSymbolicRefsAsGitDoes(t *testing.T) {
	dir := gittest.Init(t, true)
	gittest.Git(t, dir, "symbolic-ref", "refs/heads/alias", "refs/heads/main")
	gittest.Git(t, dir, "symbolic-ref", "refs/heads/alias2", "refs/heads/alias")
	gittest.Git(t, dir, "symbolic-ref", "refs/heads/dangling", "refs/heads/release/1")
	refs := git.NewRefs(dir)
	for _, c := range []struct {
		name  git.RefName
		want  git.RefName
		chain []git.RefName
	}{
		{"refs/heads/main", "refs/heads/main", []git.RefName{"refs/heads/main"}},
		{"refs/heads/alias", "refs/heads/main", []git.RefName{"refs/heads/alias", "refs/heads/main"}},
		{"refs/heads/alias2", "refs/heads/main", []git.RefName{"refs/heads/alias2", "refs/heads/alias", "refs/heads/main"}},
		{"refs/heads/dangling", "refs/heads/release/1", []git.RefName{"refs/heads/dangling", "refs/heads/release/1"}},
		{"refs/heads/absent", "refs/heads/absent", []git.RefName{"refs/heads/absent"}},
	} {
		got, chain, err := refs.Referent(c.name)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got != c.want || !reflect.DeepEqual(chain, c.chain) {
			t.Errorf("%s resolves to %s by %v, want %s by %v", c.name, got, chain, c.want, c.chain)
		}
		if out, err := gittest.Run(dir, "symbolic-ref", "-q", string(c.name)); err == nil && git.RefName(strings.TrimSpace(out)) != c.want {
			t.Errorf("git resolves %s to %s, Referent to %s", c.name, out, got)
		}
	}
}

func TestReferentRefusesLoopsAndTargetsOutsideRefs(t *testing.T) {
	dir := gittest.Init(t, true)
	refs := git.NewRefs(dir)
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("refs/heads/a", "ref: refs/heads/b\n")
	write("refs/heads/b", "ref: refs/heads/a\n")
	write("refs/heads/out", "ref: HEAD\n")
	for _, name := range []git.RefName{"refs/heads/a", "refs/heads/out"} {
		_, _, err := refs.Referent(name)
		if r, ok := refusal.As(err); !ok || r.Name != refusal.RefUnreadable {
			t.Errorf("%s: got %v, want RefUnreadable", name, err)
		}
	}
}

func TestNamesListsLooseAndPackedRefsSymbolicOrNot(t *testing.T) {
	dir := gittest.Init(t, false)
	gittest.Git(t, dir, "branch", "packed")
	gittest.Git(t, dir, "pack-refs", "--all")
	gittest.Git(t, dir, "branch", "loose")
	gittest.Git(t, dir, "symbolic-ref", "refs/heads/alias", "refs/heads/main")
	gittest.Git(t, dir, "tag", "v1")
	refs := git.NewRefs(filepath.Join(dir, ".git"))
	heads := func(n git.RefName) bool { return filepath.Dir(string(n)) == "refs/heads" }
	got, err := refs.Names(heads)
	if err != nil {
		t.Fatal(err)
	}
	want := []git.RefName{"refs/heads/alias", "refs/heads/loose", "refs/heads/main", "refs/heads/packed"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Names = %v, want %v", got, want)
	}
}

func TestSymbolicRefsListsOnlySymbolicOnes(t *testing.T) {
	dir := gittest.Init(t, false)
	gittest.Git(t, dir, "branch", "plain")
	gittest.Git(t, dir, "symbolic-ref", "refs/heads/alias", "refs/heads/main")
	gittest.Git(t, dir, "symbolic-ref", "refs/tags/t", "refs/heads/plain")
	refs := git.NewRefs(filepath.Join(dir, ".git"))
	got, err := refs.SymbolicRefs(func(n git.RefName) bool { return strings.HasPrefix(string(n), "refs/heads/") })
	if err != nil {
		t.Fatal(err)
	}
	if want := map[git.RefName]git.RefName{"refs/heads/alias": "refs/heads/main"}; !reflect.DeepEqual(got, want) {
		t.Errorf("SymbolicRefs = %v, want %v", got, want)
	}
}
