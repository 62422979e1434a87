package cli

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/examine/workspace"
	"github.com/nwdes/nwdes/internal/text"
)

// examinePromptOptions are examine prompt's flags.
type examinePromptOptions struct {
	Target examine.Target
	JSON   bool
}

func (s *session) examinePromptCmd() *cli.Command {
	return &cli.Command{
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
			return s.examinePrompt(c.Context, examinePromptOptions{Target: target(c), JSON: s.wantJSON(c)})
		},
	}
}

func (s *session) examinePrompt(ctx context.Context, o examinePromptOptions) error {
	st, err := s.openWithoutGitEnv()
	if err != nil {
		return err
	}
	p := &workspace.Prompter{Store: st, TempDir: s.env.Getenv("TMPDIR"), Now: s.env.Now}
	b, err := p.Prompt(ctx, o.Target)
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(s.env.Stdout, b)
	}
	fmt.Fprint(s.env.Stdout, text.Terminal(b.Text()))
	return nil
}
