// Command git-nwdes is nwdes's command line, run as `git nwdes <verb>`.
// Everything lives in internal/cli beside it, so that tests drive it in
// process.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/nwdes/nwdes/cmd/git-nwdes/internal/cli"
)

func main() {
	// The signals are never let go: the process exits right after, and
	// each one let go is a round trip to the runtime's signal thread
	// (4% of a start's CPU time, issue 26).
	ctx, _ := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	os.Exit(cli.Main(ctx, os.Args, cli.OSEnv()))
}
