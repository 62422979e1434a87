package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/examine/workspace"
)

// examineProbeOptions are examine probe's flags and command line.
type examineProbeOptions struct {
	Workspace  string
	Args       []string // NAME [ARGS...]
	Network    bool
	BestEffort bool
	JSON       bool
}

func (s *session) examineProbeCmd() *cli.Command {
	return &cli.Command{
		Name:      "probe",
		Usage:     "run a command the candidate declares, inside the wall, in the workspace",
		UsageText: "git nwdes examine probe --workspace W [--network] [--best-effort] [--json] -- NAME [ARGS...]",
		Description: `Runs only a command the candidate declares in its committed
.nwave/examine.json (the built file it names, started through the very
descriptor nwdes checked, following no symbolic link) or, without one, a
[project.scripts] entry of its pyproject.toml (through python3 -I -B).
The command runs inside the wall with W/scratch as its directory, HOME,
TMPDIR and only write set, W/public readable, only PATH and LANG
(default C.UTF-8) from this environment, and no network: with --network
it has the host's network, and says so (a line on stderr, "network":
"open" with --json), which an observation made with it should quote. Arguments and --option=value
values must be relative and stay inside W from W/scratch (ProbeRefused).
Its exit status and both streams pass through, with the candidate
checkout's path replaced by <candidate>. With --json the streams are
captured into one object with what the wall enforced. Like gate run, the
probe refuses to run where the kernel cannot wall it in (SandboxUnavailable)
unless --best-effort or git config nwdes.sandbox.bestEffort true. See
docs/workspace.md.

EXAMPLES
   git nwdes examine probe --workspace "$W" -- greet --help
   git nwdes examine probe --workspace "$W" -- greet --name=visitor
` + exitStatus(passesThrough("the command's own exit status, when it ran")),
		Flags: []cli.Flag{workspaceFlag(), jsonFlag(),
			&cli.BoolFlag{Name: "best-effort", Usage: "run even where the kernel cannot enforce the whole wall (what was missing is reported)"},
			&cli.BoolFlag{Name: "network", Usage: "give the command the host's network (denied otherwise); the probe's report says so"}},
		Action: func(c *cli.Context) error {
			o := examineProbeOptions{Workspace: c.String("workspace"), Args: c.Args().Slice(), Network: c.Bool("network"),
				BestEffort: c.Bool("best-effort"), JSON: s.wantJSON(c)}
			if len(o.Args) == 0 {
				return usagef("name the command after --: git nwdes examine probe --workspace W -- NAME [ARGS...]")
			}
			return s.examineProbe(c.Context, o)
		},
	}
}

func (s *session) examineProbe(ctx context.Context, o examineProbeOptions) error {
	st, err := s.openWithoutGitEnv()
	if err != nil {
		return err
	}
	strict, err := wallStrict(o.BestEffort, s.cfg)
	if err != nil {
		return err
	}
	wall, err := s.jobWall(strict, s.cfg)
	if err != nil {
		return err
	}
	wall.Lang = s.env.Getenv("LANG") // the wall's default is C.UTF-8
	var out, errOut strings.Builder
	p := &workspace.Prober{Store: st, Wall: wall, Stdout: s.env.Stdout, Stderr: s.env.Stderr, Network: o.Network}
	if o.JSON {
		p.Stdout, p.Stderr = &out, &errOut
	}
	pr, err := p.Run(ctx, o.Workspace, o.Args)
	if err != nil {
		return err
	}
	if o.JSON {
		rep := sandboxReport(pr.Result)
		rep["workspace"], rep["command"], rep["args"] = pr.Workspace, pr.Command, pr.Args
		rep["mode"], rep["launch"], rep["network"] = pr.Mode, pr.Launch, pr.Network
		rep["stdout"].(map[string]any)["text"] = out.String()
		rep["stderr"].(map[string]any)["text"] = errOut.String()
		writeJSON(s.env.Stdout, rep)
	} else {
		if pr.Network == workspace.NetworkOpen {
			fmt.Fprintln(s.env.Stderr, "nwdes probe: network open (--network): the command had the host's network")
		}
		for _, line := range s.sandboxNotes(pr.Result) {
			fmt.Fprintf(s.env.Stderr, "nwdes probe: %s\n", line)
		}
	}
	return &passthrough{code: exitCodeOf(pr.Result)}
}
