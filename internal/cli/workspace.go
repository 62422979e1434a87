package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/examine/workspace"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/internal/text"
)

// workspaceCmds are the examiner's verbs around its workspace: prompt
// makes one, read and probe gather evidence in it.
func (s *session) workspaceCmds() []*cli.Command {
	wsFlag := &cli.StringFlag{Name: "workspace", Aliases: []string{"w"}, Usage: "the workspace `W` a prompt printed", Required: true}
	return []*cli.Command{
		{
			Name:      "prompt",
			Usage:     "make the examiner's workspace and print its bundle",
			UsageText: "git nwdes examine prompt --feature F [--candidate REV] [--json]",
			Description: `Makes a workspace W outside every checkout (under TMPDIR) holding exactly
public/, the candidate's public projection (its committed prose under
docs/guides, nWave/skills, nWave/templates and nWave/agents, and what
.nwave/config.json declares under examine.public), read-only, and scratch/,
the examiner's. Records the projection in the store, and prints the bundle:
the TASK with its probing rules, the feature's expectations, the commands
the candidate declares (.nwave/examine.json, or pyproject.toml's
[project.scripts]), the verbs to use, and last a line WORKSPACE: W.
A malformed or conflicting declaration is refused before anything is made.
See docs/workspace.md.

EXAMPLES
   git nwdes examine prompt --feature greeting
   git nwdes examine prompt --feature greeting --json | jq -r .workspace
` + exitStatus(),
			Flags: append(targetFlags(), jsonFlag()),
			Action: func(c *cli.Context) error {
				asJSON := s.wantJSON(c)
				st, err := s.openWithoutGitEnv()
				if err != nil {
					return err
				}
				p := &workspace.Prompter{Store: st, TempDir: s.env.Getenv("TMPDIR"), Now: s.env.Now}
				b, err := p.Prompt(c.Context, target(c))
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(s.env.Stdout, b)
				}
				fmt.Fprint(s.env.Stdout, text.Terminal(b.Text()))
				return nil
			},
		},
		{
			Name:      "read",
			Usage:     "list a directory or print a file of the workspace's public projection",
			UsageText: "git nwdes examine read --workspace W [PATH] [--json]",
			Description: `PATH is relative to W/public (its top when left out). A path outside the
projection, or through a symbolic link, is refused with ReadRefused. The
workspace is first checked against the projection recorded for it
(WorkspaceContaminated when anything differs).

EXAMPLES
   git nwdes examine read --workspace "$W"
   git nwdes examine read --workspace "$W" docs/guides/greeting.md
` + exitStatus(),
			Flags: []cli.Flag{wsFlag, jsonFlag()},
			Action: func(c *cli.Context) error {
				asJSON := s.wantJSON(c)
				if c.Args().Len() > 1 {
					return usagef("read takes at most one PATH")
				}
				st, err := s.openWithoutGitEnv()
				if err != nil {
					return err
				}
				w, _, err := workspace.Open(st, c.String("workspace"))
				if err != nil {
					return err
				}
				got, err := workspace.Read(w, c.Args().First())
				if err != nil {
					return err
				}
				switch {
				case asJSON && got.Dir:
					return writeJSON(s.env.Stdout, got)
				case asJSON:
					return writeJSON(s.env.Stdout, map[string]any{"path": got.Path, "dir": false, "text": string(got.Data)})
				case got.Dir:
					for _, e := range got.Entries {
						name := e.Name
						if e.Dir {
							name += "/"
						}
						fmt.Fprintln(s.env.Stdout, text.TerminalLine(name))
					}
				default:
					s.env.Stdout.Write(got.Data)
				}
				return nil
			},
		},
		{
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
			Flags: []cli.Flag{wsFlag, jsonFlag(),
				&cli.BoolFlag{Name: "best-effort", Usage: "run even where the kernel cannot enforce the whole wall (what was missing is reported)"},
				&cli.BoolFlag{Name: "network", Usage: "give the command the host's network (denied otherwise); the probe's report says so"}},
			Action: func(c *cli.Context) error {
				asJSON := s.wantJSON(c)
				args := c.Args().Slice()
				if len(args) == 0 {
					return usagef("name the command after --: git nwdes examine probe --workspace W -- NAME [ARGS...]")
				}
				st, err := s.openWithoutGitEnv()
				if err != nil {
					return err
				}
				strict, err := gateStrict(c, s.cfg)
				if err != nil {
					return err
				}
				wall, err := s.jobWall(strict, s.cfg)
				if err != nil {
					return err
				}
				wall.Lang = s.env.Getenv("LANG") // the wall's default is C.UTF-8
				var out, errOut strings.Builder
				p := &workspace.Prober{Store: st, Wall: wall, Stdout: s.env.Stdout, Stderr: s.env.Stderr, Network: c.Bool("network")}
				if asJSON {
					p.Stdout, p.Stderr = &out, &errOut
				}
				pr, err := p.Run(c.Context, c.String("workspace"), args)
				if err != nil {
					return err
				}
				if asJSON {
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
			},
		},
	}
}

// openWithoutGitEnv opens the repository the command runs in as found from
// its directory alone: the examiner's verbs read git with the ambient
// GIT_* variables removed (a GIT_DIR or GIT_WORK_TREE left in the
// examiner's environment, by a hook say, must not show it another
// repository's projection). The rest of the command sees the same.
func (s *session) openWithoutGitEnv() (*gitstore.Store, error) {
	getenv := s.env.Getenv
	s.env.Getenv = func(k string) string {
		if strings.HasPrefix(k, "GIT_") {
			return ""
		}
		return getenv(k)
	}
	return s.open()
}

// sweepWorkspaces removes the feature's workspaces after a successful
// close and says what it did, on stdout, before the outcome line.
func (s *session) sweepWorkspaces(ctx context.Context, feature string) (*workspace.Swept, error) {
	st, err := s.open()
	if err != nil {
		return nil, err
	}
	checkout, err := workspace.Checkout(st)
	if err != nil {
		return &workspace.Swept{}, nil // a bare repository made no workspace
	}
	now := time.Now()
	if s.env.Now != nil {
		now = s.env.Now()
	}
	return workspace.Sweep(ctx, st, feature, checkout, now)
}
