//go:build !urfave_cli_no_docs

package cli

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var manUpdate = flag.Bool("man.update", false, "rewrite cmd/git-nwdes/internal/cli/git-nwdes.1 from the app's definition")

// renderMan is the man page as urfave/cli renders the app, after the same
// setup a run gives it (the --help and --version flags).
func renderMan(t *testing.T) string {
	t.Helper()
	s := &session{env: Env{Getenv: func(string) string { return "" }}}
	app := s.app(nil)
	app.Setup()
	page, err := app.ToManWithSection(1)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Replace(page, ".TH git nwdes 1", manTitle, 1)
}

func TestManPageIsCurrent(t *testing.T) {
	page := renderMan(t)
	if *manUpdate {
		if err := os.WriteFile("git-nwdes.1", []byte(page), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if page != manPage {
		t.Fatal("git-nwdes.1 is not the app's man page: run go test ./internal/cli -run TestManPageIsCurrent -man.update")
	}
	if !strings.HasPrefix(strings.TrimPrefix(manPage, ".nh\n"), manTitle+"\n") {
		t.Fatalf("the page's title is not %q", manTitle)
	}
}
