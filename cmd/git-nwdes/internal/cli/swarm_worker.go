package cli

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/internal/text"
)

// workerCheckOptions are swarm worker check's argument and flags.
type workerCheckOptions struct {
	File string
	JSON bool
}

func (s *session) swarmWorkerCmd() *cli.Command {
	return &cli.Command{
		Name:  "worker",
		Usage: "check worker descriptions",
		Subcommands: []*cli.Command{{
			Name:      "check",
			Usage:     "validate a worker description, naming every problem",
			UsageText: "git nwdes swarm worker check FILE [--json]",
			Description: `A worker description is one JSON object: name, harness (a program path or
a name on PATH), harness_args ({prompt} and {model} are replaced), model,
deadline (a Go duration), slots, read_roots and env (names of variables the
harness may receive). Unknown fields are refused; every problem is reported
in one run (WorkerInvalid).

EXAMPLES
   git nwdes swarm worker check worker.json
` + exitStatus(),
			Flags: []cli.Flag{jsonFlag()},
			Action: func(c *cli.Context) error {
				o := workerCheckOptions{JSON: s.wantJSON(c)}
				if c.Args().Len() != 1 {
					return usagef("name one worker description FILE")
				}
				o.File = c.Args().First()
				return s.swarmWorkerCheck(o)
			},
		}},
	}
}

func (s *session) swarmWorkerCheck(o workerCheckOptions) error {
	w, err := s.readWorker(o.File)
	if err != nil {
		return err
	}
	// Outside a repository the wall's roots are the defaults; inside,
	// nwdes.sandbox.root adds to them.
	var cfg *gitrepo.Config
	if st, err := s.open(); err == nil {
		cfg, _ = s.config(st.Location())
	}
	wall, err := s.jobWall(false, cfg)
	if err != nil {
		return err
	}
	if err := harnessReachable(wall, w); err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(s.env.Stdout, w)
	}
	fmt.Fprintf(s.env.Stdout, "worker %s: %s, deadline %s, %d slots\n", text.TerminalLine(w.Name), text.TerminalLine(w.Harness), w.Deadline, w.Slots)
	return nil
}
