package judge_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/judge"
	"github.com/nwdes/nwdes/refusal"
	"github.com/nwdes/nwdes/trust"
)

// TestPolicyAtRefusesAPolicyThatIsNotAFile: a directory or a symbolic link
// where the policy goes is refused, never read as "no policy" (which would
// stop signatures from being required) nor followed.
func TestPolicyAtRefusesAPolicyThatIsNotAFile(t *testing.T) {
	for name, place := range map[string]func(dir string){
		"a directory": func(dir string) {
			gittest.WriteFile(t, dir, trust.PolicyPath+"/inner", "x\n")
		},
		"a symbolic link": func(dir string) {
			p := filepath.Join(dir, filepath.FromSlash(trust.PolicyPath))
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.Symlink("/etc/passwd", p); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := gittest.Init(t, false)
			place(dir)
			gittest.Git(t, dir, "add", "-A")
			gittest.Git(t, dir, "commit", "-q", "-m", "policy")
			loc, err := gitrepo.Discover(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			st, err := gitstore.Open(loc, gitstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			head, err := st.Resolve("HEAD")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := judge.PolicyAt(st, head, "the policy"); !refusal.Named(err, refusal.ConfigurationMalformed) {
				t.Fatalf("PolicyAt: %v", err)
			}
		})
	}
}
