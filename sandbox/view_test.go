package sandbox_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/refusal"
	"github.com/nwdes/nwdes/sandbox"
)

func TestTheJobDirectoryAppearsAtAFixedPathInItsView(t *testing.T) {
	inEachMode(t, func(t *testing.T, w *sandbox.Wall) {
		j, err := w.NewJob()
		if err != nil {
			t.Fatal(err)
		}
		defer j.Close()
		res, err := j.Run(t.Context(), sandbox.Command{
			Args: sandbox.Shell(`echo "$PWD $HOME $TMPDIR $GIT_CEILING_DIRECTORIES"; echo made > out`), JobAt: sandbox.FixedJobDir,
		})
		if err != nil || res.End != sandbox.EndExit || res.ExitCode != 0 {
			t.Fatalf("%+v %v\n%s", res, err, res.Stderr.Tail)
		}
		want := "/nwdes/job/work /nwdes/job/home /nwdes/job/tmp /nwdes/job\n"
		if w.NoNamespaces {
			// Without a view of its own the job sees its directory where it is.
			want = j.Work + " " + j.Home + " " + j.Tmp + " " + j.Root + "\n"
		}
		if got := string(res.Stdout.Tail); got != want {
			t.Fatalf("the job saw %q, want %q", got, want)
		}
		if b, err := os.ReadFile(filepath.Join(j.Work, "out")); err != nil || string(b) != "made\n" {
			t.Fatalf("what the job wrote is not in its directory: %q %v", b, err)
		}
	})
}

func TestAProgramUnderAHomeOutsideTheRootsIsRefusedNamingTheConfiguration(t *testing.T) {
	w := newWall(t)
	bin := filepath.Join(w.Home, ".toolchain", "versions", "1.0", "bin")
	os.MkdirAll(bin, 0o755)
	tool := filepath.Join(bin, "tool")
	os.WriteFile(tool, []byte("#!/bin/sh\necho tool\n"), 0o755)
	_, err := w.Run(t.Context(), sandbox.Command{Args: []string{tool}, Dir: "/usr"})
	r, ok := refusal.As(err)
	if !ok || r.Name != refusal.OutsideRoots || !strings.Contains(r.Remedy, "git config --add nwdes.sandbox.root "+filepath.Dir(bin)) {
		t.Fatalf("not refused OutsideRoots with the root to configure: %v", err)
	}
	w.Roots = append(sandbox.DefaultRoots(w.Path, w.Home), filepath.Dir(bin))
	res, err := w.Run(t.Context(), sandbox.Command{Args: []string{tool}, Dir: "/usr"})
	if err != nil || res.End != sandbox.EndExit || string(res.Stdout.Tail) != "tool\n" {
		t.Fatalf("%+v %v %s", res, err, res.Stderr.Tail)
	}
}
