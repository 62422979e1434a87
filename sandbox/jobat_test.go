package sandbox_test

import (
	"os"
	"path/filepath"
	"testing"

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
