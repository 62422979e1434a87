package hooks

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/internal/gittest"
)

func TestIncludeIfIsAskedOfGit(t *testing.T) {
	root := t.TempDir()
	common := filepath.Join(root, ".git")
	gittest.WriteFile(t, common, "config", "[includeIf \"gitdir:~/work/\"]\n\tpath = work.inc\n[nwdes]\nprotect = local\n")
	loc := gitrepo.Location{GitDir: common, CommonDir: common, WorkTree: root}
	asked := []string{}
	ask := func(key string) ([]string, error) {
		asked = append(asked, key)
		if key == "nwdes.protect" {
			return []string{"trunk"}, nil
		}
		return nil, nil
	}
	set, err := LoadSettings(loc, nil, ask)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(set.Policy.Protect, []string{"refs/heads/trunk"}) || len(asked) != 7 {
		t.Fatalf("policy %q, asked %q", set.Policy.Protect, asked)
	}
}
