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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	code := cli.Main(ctx, os.Args, cli.OSEnv())
	stop()
	os.Exit(code)
}
