package sandbox_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/refusal"
	"github.com/nwdes/nwdes/sandbox"
)

// sharedCache is a directory standing for the host's module cache: a
// read-only module file the host trusts.
func sharedCache(t *testing.T) (dir, file string) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mod := filepath.Join(dir, "example.com", "m@v1.0.0")
	if err := os.MkdirAll(mod, 0o755); err != nil {
		t.Fatal(err)
	}
	file = filepath.Join(mod, "m.go")
	if err := os.WriteFile(file, []byte("package m\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	return dir, file
}

func TestAJobCannotChangeAFileOfASharedCache(t *testing.T) {
	inEachMode(t, func(t *testing.T, w *sandbox.Wall) {
		dir, file := sharedCache(t)
		w.Caches = []string{dir}
		res := runLine(t, w, sandbox.Command{}, "chmod u+w "+file+"; echo 'func init() { panic(1) }' >> "+file+"; echo planted > "+dir+"/new; cat "+file)
		if b, _ := os.ReadFile(file); string(b) != "package m\n" {
			t.Fatalf("the host's cache file was changed to %q (%+v)", b, res)
		}
		// Without a view Landlock alone holds, and it does not handle
		// chmod: a root job may change the mode of any file root owns
		// (docs/sandbox.md, What is not enforced), never its bytes.
		if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o444 && !w.NoNamespaces {
			t.Fatalf("the host's cache file's mode was changed to %v", fi.Mode())
		}
		if _, err := os.Stat(filepath.Join(dir, "new")); err == nil {
			t.Fatal("a file the job made was left in the host's cache")
		}
		if len(res.Enforced.Caches) != 1 || res.Enforced.Caches[0].Path != dir {
			t.Fatalf("enforced.caches = %+v", res.Enforced.Caches)
		}
		if w.NoNamespaces {
			if res.Enforced.Caches[0].Mode != sandbox.CacheReadOnly {
				t.Fatalf("without a view a cache is read-only, got %+v", res.Enforced.Caches)
			}
			return
		}
		// In its own view the job writes a copy of its own, and sees it.
		if res.Enforced.Caches[0].Mode != sandbox.CacheOverlay || res.End != sandbox.EndExit || res.ExitCode != 0 ||
			!strings.Contains(string(res.Stdout.Tail), "panic(1)") {
			t.Fatalf("the job did not get a copy-on-write cache: %+v\n%s\n%s", res.Enforced.Caches, res.Stdout.Tail, res.Stderr.Tail)
		}
		// A later job sees the host's files, not what the first one left.
		res = runLine(t, w, sandbox.Command{}, "cat "+file+"; test ! -e "+dir+"/new && echo CLEAN")
		if got := string(res.Stdout.Tail); got != "package m\nCLEAN\n" {
			t.Fatalf("a later job saw %q (%s)", got, res.Stderr.Tail)
		}
	})
}

func TestAJobCannotReachTheCopiesOfItsCaches(t *testing.T) {
	w := newWall(t)
	dir, _ := sharedCache(t)
	w.Caches = []string{dir}
	res := runLine(t, w, sandbox.Command{}, `ls -A "$HOME/../.caches"; echo DONE`)
	if got := string(res.Stdout.Tail); got != "DONE\n" {
		t.Fatalf("the job listed its caches' upper directories: %q (%s)", got, res.Stderr.Tail)
	}
}

func TestAWritePathThroughASymbolicLinkIsRefused(t *testing.T) {
	inEachMode(t, func(t *testing.T, w *sandbox.Wall) {
		shared, err := filepath.EvalSymlinks(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		elsewhere := t.TempDir()
		// An earlier job, given the whole directory, plants a link in it.
		res := runLine(t, w, sandbox.Command{Write: []string{shared}}, "ln -s "+elsewhere+" "+shared+"/sub")
		if res.End != sandbox.EndExit || res.ExitCode != 0 {
			t.Fatalf("%+v %s", res, res.Stderr.Tail)
		}
		for _, c := range []sandbox.Command{{Write: []string{shared + "/sub"}}, {Read: []string{shared + "/sub"}}} {
			c.Args, c.Dir = sandbox.Shell("touch x"), shared
			_, err = w.Run(t.Context(), c)
			r, ok := refusal.As(err)
			if !ok || r.Name != refusal.PathIsLink || !strings.Contains(r.Detail, shared+"/sub") {
				t.Fatalf("a path through a planted link was not refused PathIsLink: %v", err)
			}
		}
		if _, err := os.Stat(filepath.Join(elsewhere, "x")); err == nil {
			t.Fatal("the job wrote through the link")
		}
	})
}
