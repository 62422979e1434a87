package cli

import (
	"context"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/examine/workspace"
	"github.com/nwdes/nwdes/gitstore"
)

// workspaceCmds are the examiner's verbs around its workspace: prompt
// makes one, read and probe gather evidence in it.
func (s *session) workspaceCmds() []*cli.Command {
	return []*cli.Command{s.examinePromptCmd(), s.examineReadCmd(), s.examineProbeCmd()}
}

func workspaceFlag() cli.Flag {
	return &cli.StringFlag{Name: "workspace", Aliases: []string{"w"}, Usage: "the workspace `W` a prompt printed", Required: true}
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
