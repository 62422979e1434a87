package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/trust"
)

// trustShowOptions are trust show's flags.
type trustShowOptions struct {
	Rev  string
	JSON bool
}

func (s *session) trustShowCmd() *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "list the committed policy at a revision (what enforcement reads)",
		UsageText: "git nwdes trust show [--rev REV] [--json]",
		Description: `Lists the policy committed at REV (default HEAD): each line's feature
patterns and key. Enforcement reads it from the protected branch's tip.

EXAMPLES
   git nwdes trust show --rev origin/main
` + exitStatus(),
		Flags: []cli.Flag{&cli.StringFlag{Name: "rev", Value: "HEAD", Usage: "the `REV` whose committed policy to show"}, jsonFlag()},
		Action: func(c *cli.Context) error {
			return s.trustShow(trustShowOptions{Rev: c.String("rev"), JSON: s.wantJSON(c)})
		},
	}
}

func (s *session) trustShow(o trustShowOptions) error {
	st, err := s.open()
	if err != nil {
		return err
	}
	commit, err := st.Resolve(o.Rev)
	if err != nil {
		return err
	}
	f, err := st.ReadFile(commit, trust.PolicyPath)
	if errors.Is(err, gitstore.ErrNotFound) {
		if o.JSON {
			return writeJSON(s.env.Stdout, map[string]any{"rev": o.Rev, "policy": nil})
		}
		fmt.Fprintf(s.env.Stdout, "no signing policy at %s: examinations need no signature there\n", text.TerminalLine(o.Rev))
		return nil
	}
	if err != nil {
		return err
	}
	pol, err := trust.ParsePolicy(trust.PolicyPath+" at "+o.Rev, f.Data)
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(s.env.Stdout, map[string]any{"rev": o.Rev, "policy": pol.Entries()})
	}
	for _, e := range pol.Entries() {
		fmt.Fprintf(s.env.Stdout, "%s\t%s (%s)\n", text.TerminalLine(strings.Join(e.Features, ",")), e.Key, e.KeyType)
	}
	return nil
}
