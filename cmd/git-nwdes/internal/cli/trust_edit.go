package cli

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/refusal"
	"github.com/nwdes/nwdes/trust"
)

// trustEditOptions are the flags of trust add and remove.
type trustEditOptions struct {
	Feature string
	Key     string
}

func trustEditFlags(c *cli.Context) trustEditOptions {
	return trustEditOptions{Feature: c.String("feature"), Key: c.String("key")}
}

func (s *session) trustAddCmd() *cli.Command {
	return &cli.Command{
		Name:      "add",
		Usage:     "allow a key to sign a feature pattern's examinations (in the work tree)",
		UsageText: "git nwdes trust add --feature PATTERN --key FILE|KEY",
		Description: `Appends a line to the work tree's ` + trust.PolicyPath + ` (created if
absent). The same pattern and key twice is refused.

EXAMPLES
   git nwdes trust add --feature greeting --key ~/.ssh/id_ed25519.pub
` + exitStatus(),
		Flags:  []cli.Flag{trustFeatureFlag(), trustKeyFlag()},
		Action: func(c *cli.Context) error { return s.trustAdd(trustEditFlags(c)) },
	}
}

func (s *session) trustAdd(o trustEditOptions) error {
	path, cur, key, comment, err := s.policyEdit(o.Key)
	if err != nil {
		return err
	}
	out, added, err := trust.AddLine(cur, o.Feature, key, comment)
	if err != nil {
		return err
	}
	if !added {
		return refusal.New(refusal.MissingFact, "nothing to do", "%s already allows %s for %s", trust.PolicyPath, trust.Fingerprint(key), o.Feature)
	}
	if err := writePolicy(path, out); err != nil {
		return err
	}
	fmt.Fprintf(s.env.Stdout, "%s now allows %s for %s\n%s\n", trust.PolicyPath, trust.Fingerprint(key), text.TerminalLine(o.Feature), trustAfter)
	return nil
}

func (s *session) trustRemoveCmd() *cli.Command {
	return &cli.Command{
		Name:      "remove",
		Usage:     "stop allowing a key for a feature pattern (in the work tree)",
		UsageText: "git nwdes trust remove --feature PATTERN --key FILE|KEY",
		Description: `Removes the lines of the work tree's ` + trust.PolicyPath + ` that give
exactly that pattern to that key. To revoke a key everywhere, remove each
of its lines (git nwdes trust show lists them).

EXAMPLES
   git nwdes trust remove --feature greeting --key ~/.ssh/old_key.pub
` + exitStatus(),
		Flags:  []cli.Flag{trustFeatureFlag(), trustKeyFlag()},
		Action: func(c *cli.Context) error { return s.trustRemove(trustEditFlags(c)) },
	}
}

func (s *session) trustRemove(o trustEditOptions) error {
	path, cur, key, _, err := s.policyEdit(o.Key)
	if err != nil {
		return err
	}
	out, removed := trust.RemoveLines(cur, o.Feature, key)
	if removed == 0 {
		return refusal.New(refusal.MissingFact, "git nwdes trust show lists the policy's lines",
			"%s has no line giving %s to %s", trust.PolicyPath, text.TerminalLine(o.Feature), trust.Fingerprint(key))
	}
	if err := writePolicy(path, out); err != nil {
		return err
	}
	fmt.Fprintf(s.env.Stdout, "%s no longer allows %s for %s\n%s\n", trust.PolicyPath, trust.Fingerprint(key), text.TerminalLine(o.Feature), trustAfter)
	return nil
}
