package cli

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/examine/workspace"
	"github.com/nwdes/nwdes/internal/text"
)

// examineReadOptions are examine read's flags and PATH.
type examineReadOptions struct {
	Workspace string
	Path      string
	JSON      bool
}

func (s *session) examineReadCmd() *cli.Command {
	return &cli.Command{
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
		Flags: []cli.Flag{workspaceFlag(), jsonFlag()},
		Action: func(c *cli.Context) error {
			o := examineReadOptions{Workspace: c.String("workspace"), Path: c.Args().First(), JSON: s.wantJSON(c)}
			if c.Args().Len() > 1 {
				return usagef("read takes at most one PATH")
			}
			return s.examineRead(o)
		},
	}
}

func (s *session) examineRead(o examineReadOptions) error {
	st, err := s.openWithoutGitEnv()
	if err != nil {
		return err
	}
	w, _, err := workspace.Open(st, o.Workspace)
	if err != nil {
		return err
	}
	got, err := workspace.Read(w, o.Path)
	if err != nil {
		return err
	}
	switch {
	case o.JSON && got.Dir:
		return writeJSON(s.env.Stdout, got)
	case o.JSON:
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
}
