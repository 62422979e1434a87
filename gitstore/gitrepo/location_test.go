package gitrepo_test

import (
	"github.com/nwdes/nwdes/gitstore/oid"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/refusal"
)

func TestDiscoverFindsTheRepositoryAsGitDoes(t *testing.T) {
	repo := gittest.Init(t, false)
	gittest.WriteFile(t, repo, "a/b/c.txt", "x")
	bare := gittest.Init(t, true)
	wt := filepath.Join(t.TempDir(), "wt")
	gittest.Git(t, repo, "worktree", "add", "-q", wt)
	dotgit := filepath.Join(repo, ".git")
	env := func(kv ...string) gitrepo.Getenv {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	cases := []struct {
		name                     string
		dir                      string
		env                      gitrepo.Getenv
		gitDir, common, workTree string
	}{
		{"from the top", repo, nil, dotgit, dotgit, repo},
		{"from a subdirectory", filepath.Join(repo, "a", "b"), nil, dotgit, dotgit, repo},
		{"in a bare repository", bare, nil, bare, bare, ""},
		{"in a linked worktree the state is the main repository's", wt, nil, filepath.Join(dotgit, "worktrees", "wt"), dotgit, wt},
		{"GIT_DIR", t.TempDir(), env("GIT_DIR", dotgit), dotgit, dotgit, ""},
		{"GIT_DIR with GIT_WORK_TREE", t.TempDir(), env("GIT_DIR", dotgit, "GIT_WORK_TREE", repo), dotgit, dotgit, repo},
		{"GIT_COMMON_DIR", wt, env("GIT_DIR", filepath.Join(dotgit, "worktrees", "wt"), "GIT_COMMON_DIR", dotgit, "GIT_WORK_TREE", wt), filepath.Join(dotgit, "worktrees", "wt"), dotgit, wt},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			loc, err := gitrepo.Discover(c.dir, c.env)
			if err != nil {
				t.Fatal(err)
			}
			want := c.workTree
			if c.name == "GIT_DIR" {
				want = c.dir // git takes the current directory as the work tree
			}
			if loc.GitDir != c.gitDir || loc.CommonDir != c.common || loc.WorkTree != want {
				t.Fatalf("got %+v, want git %s common %s worktree %s", loc, c.gitDir, c.common, want)
			}
		})
	}
}

func TestDiscoverRefusesOutsideARepository(t *testing.T) {
	dir := t.TempDir()
	_, err := gitrepo.Discover(dir, func(k string) string {
		if k == "GIT_CEILING_DIRECTORIES" {
			return filepath.Dir(dir)
		}
		return ""
	})
	if !refusal.Named(err, "NotARepository") {
		t.Fatalf("err = %v, want NotARepository", err)
	}
}

// TestDiscoverReadsTheObjectFormat: a SHA-256 repository is found and its
// format read as git reads it; a format git does not know is refused by
// name.
func TestDiscoverReadsTheObjectFormat(t *testing.T) {
	for _, c := range []struct {
		args []string
		want oid.Format
	}{
		{[]string{"init", "-q"}, oid.SHA1},
		{[]string{"init", "-q", "--object-format=sha1"}, oid.SHA1},
		{[]string{"init", "-q", "--object-format=sha256"}, oid.SHA256},
	} {
		dir := filepath.Join(t.TempDir(), "r")
		gittest.Git(t, filepath.Dir(dir), append(c.args, dir)...)
		loc, err := gitrepo.Discover(dir, nil)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if f, err := gitrepo.ObjectFormat(loc.CommonDir); err != nil || f != c.want {
			t.Fatalf("%v: format %v %v, want %v", c.args, f, err, c.want)
		}
	}
	dir := gittest.Init(t, false)
	gittest.Git(t, dir, "config", "core.repositoryformatversion", "1")
	gittest.Git(t, dir, "config", "extensions.objectFormat", "sha3")
	_, err := gitrepo.Discover(dir, nil)
	if !refusal.Named(err, refusal.UnsupportedRepository) || !strings.Contains(err.Error(), "sha3") {
		t.Fatalf("err = %v, want UnsupportedRepository naming sha3", err)
	}
}

// git 2.39 cannot create a reftable repository; a newer git's is marked by
// extensions.refStorage in a format-1 repository, which is what this
// writes. nwdes reads refs as files, so it refuses by name.
func TestDiscoverRefusesAReftableRepository(t *testing.T) {
	dir := gittest.Init(t, false)
	gittest.Git(t, dir, "config", "core.repositoryformatversion", "1")
	gittest.Git(t, dir, "config", "extensions.refStorage", "reftable")
	_, err := gitrepo.Discover(dir, nil)
	if !refusal.Named(err, refusal.UnsupportedRepository) || !strings.Contains(err.Error(), "reftable") {
		t.Fatalf("err = %v, want UnsupportedRepository naming reftable", err)
	}
}
