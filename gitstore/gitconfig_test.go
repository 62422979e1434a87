package gitstore_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/internal/gittest"
)

// TestGitConfigFromTheConfigReadInProcessIsGitsAnswer holds GitConfig
// answered from Options.Config to what git config --get-all prints, and
// a Conditional configuration to git's answer rather than its own.
func TestGitConfigFromTheConfigReadInProcessIsGitsAnswer(t *testing.T) {
	dir := gittest.Init(t, false)
	env := gittest.Env(filepath.Dir(dir))
	getenv := func(k string) string {
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, k+"="); ok {
				return v
			}
		}
		return ""
	}
	f, err := os.OpenFile(filepath.Join(dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, werr := f.WriteString("[remote \"origin\"]\n\turl = ../a.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n\tfetch = +refs/nwdes/*:refs/remotes/origin/nwdes/*\n" +
		"[remote \"Mixed\"]\n\turl\n\turl = b\n")
	if err := f.Close(); werr != nil || err != nil {
		t.Fatal(werr, err)
	}
	loc, err := gitrepo.Discover(dir, getenv)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := gitrepo.ReadConfig(loc, getenv)
	if err != nil {
		t.Fatal(err)
	}
	conditional := &gitrepo.Config{Conditional: true}
	conditional.Add("remote.origin.url", "not git's answer")
	byGit := openStore(t, dir, gitstore.Options{})
	o := gitstore.SyncOptions{Environ: env}
	for _, c := range []struct {
		name string
		cfg  *gitrepo.Config
	}{{"read in process", cfg}, {"conditional", conditional}} {
		st := openStore(t, dir, gitstore.Options{Config: c.cfg})
		for _, key := range []string{"remote.origin.url", "remote.origin.fetch", "REMOTE.origin.URL", "remote.Mixed.url", "remote.mixed.url", "remote.none.url"} {
			got, err := st.GitConfig(context.Background(), key, o)
			if err != nil {
				t.Fatal(err)
			}
			want, err := byGit.GitConfig(context.Background(), key, o)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s: %s is %q, git says %q", c.name, key, got, want)
			}
		}
	}
}
