package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"
	"golang.org/x/crypto/ssh"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/internal/boundedio"
	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/refusal"
	"github.com/nwdes/nwdes/trust"
)

// trustCmd edits and shows the signing policy: git's allowed-signers file
// at .nwave/trust/allowed_signers whose principals are feature patterns.
// add and remove edit the work tree's file; the change takes effect when
// it is committed to the protected branch, where it is judged by the
// policy already there.
func (s *session) trustCmd() *cli.Command {
	keyFlag := &cli.StringFlag{Name: "key", Usage: "the public key: a `FILE` (id_ed25519.pub) or the key itself (\"ssh-ed25519 AAAA…\")", Required: true}
	featureFlag := &cli.StringFlag{Name: "feature", Usage: "the feature `PATTERN` the key may accept (* and ? wildcards, ! to exclude, comma-separated)", Required: true}
	after := "commit " + trust.PolicyPath + " to the protected branch; the policy already there judges that commit, and the new one applies from then on"
	return &cli.Command{
		Name:  "trust",
		Usage: "edit or show who may sign the examinations of which features",
		Description: `The signing policy is ` + trust.PolicyPath + `, git's allowed-signers
format with feature patterns as principals. Once it is on a protected branch,
the pre-push hook and the server's pre-receive check accept a feature only
when its examination is signed by a key the policy allows for it. See
docs/trust.md.

EXAMPLES
   git nwdes trust add --feature 'greeting,auth-*' --key ~/.ssh/id_ed25519.pub
   git nwdes trust show
   git nwdes trust remove --feature greeting --key ~/.ssh/id_ed25519.pub
` + exitStatusAll(),
		Subcommands: []*cli.Command{
			{
				Name:      "add",
				Usage:     "allow a key to sign a feature pattern's examinations (in the work tree)",
				UsageText: "git nwdes trust add --feature PATTERN --key FILE|KEY",
				Description: `Appends a line to the work tree's ` + trust.PolicyPath + ` (created if
absent). The same pattern and key twice is refused.

EXAMPLES
   git nwdes trust add --feature greeting --key ~/.ssh/id_ed25519.pub
` + exitStatus(),
				Flags: []cli.Flag{featureFlag, keyFlag},
				Action: func(c *cli.Context) error {
					path, cur, key, comment, err := s.policyEdit(c)
					if err != nil {
						return err
					}
					line := fmt.Sprintf("%s %s", c.String("feature"), strings.TrimSpace(string(ssh.MarshalAuthorizedKey(key))))
					if comment != "" {
						line += " " + comment
					}
					if _, err := trust.ParsePolicy("--feature/--key", []byte(line)); err != nil {
						return err
					}
					for _, l := range strings.Split(string(cur), "\n") {
						if gives(l, c.String("feature"), key) {
							return refusal.New(refusal.MissingFact, "nothing to do", "%s already allows %s for %s", trust.PolicyPath, trust.Fingerprint(key), c.String("feature"))
						}
					}
					if len(cur) > 0 && !bytes.HasSuffix(cur, []byte("\n")) {
						cur = append(cur, '\n')
					}
					if err := writePolicy(path, append(cur, line+"\n"...)); err != nil {
						return err
					}
					fmt.Fprintf(s.env.Stdout, "%s now allows %s for %s\n%s\n", trust.PolicyPath, trust.Fingerprint(key), text.TerminalLine(c.String("feature")), after)
					return nil
				},
			},
			{
				Name:      "remove",
				Usage:     "stop allowing a key for a feature pattern (in the work tree)",
				UsageText: "git nwdes trust remove --feature PATTERN --key FILE|KEY",
				Description: `Removes the lines of the work tree's ` + trust.PolicyPath + ` that give
exactly that pattern to that key. To revoke a key everywhere, remove each
of its lines (git nwdes trust show lists them).

EXAMPLES
   git nwdes trust remove --feature greeting --key ~/.ssh/old_key.pub
` + exitStatus(),
				Flags: []cli.Flag{featureFlag, keyFlag},
				Action: func(c *cli.Context) error {
					path, cur, key, _, err := s.policyEdit(c)
					if err != nil {
						return err
					}
					var kept []string
					removed := 0
					for _, l := range strings.SplitAfter(string(cur), "\n") {
						if gives(l, c.String("feature"), key) {
							removed++
							continue
						}
						kept = append(kept, l)
					}
					if removed == 0 {
						return refusal.New(refusal.MissingFact, "git nwdes trust show lists the policy's lines",
							"%s has no line giving %s to %s", trust.PolicyPath, text.TerminalLine(c.String("feature")), trust.Fingerprint(key))
					}
					if err := writePolicy(path, []byte(strings.Join(kept, ""))); err != nil {
						return err
					}
					fmt.Fprintf(s.env.Stdout, "%s no longer allows %s for %s\n%s\n", trust.PolicyPath, trust.Fingerprint(key), text.TerminalLine(c.String("feature")), after)
					return nil
				},
			},
			{
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
					asJSON := s.wantJSON(c)
					st, err := s.open()
					if err != nil {
						return err
					}
					commit, err := st.Resolve(c.String("rev"))
					if err != nil {
						return err
					}
					f, err := st.ReadFile(commit, trust.PolicyPath)
					if errors.Is(err, gitstore.ErrNotFound) {
						if asJSON {
							return writeJSON(s.env.Stdout, map[string]any{"rev": c.String("rev"), "policy": nil})
						}
						fmt.Fprintf(s.env.Stdout, "no signing policy at %s: examinations need no signature there\n", text.TerminalLine(c.String("rev")))
						return nil
					}
					if err != nil {
						return err
					}
					pol, err := trust.ParsePolicy(trust.PolicyPath+" at "+c.String("rev"), f.Data)
					if err != nil {
						return err
					}
					if asJSON {
						return writeJSON(s.env.Stdout, map[string]any{"rev": c.String("rev"), "policy": pol.Entries()})
					}
					for _, e := range pol.Entries() {
						fmt.Fprintf(s.env.Stdout, "%s\t%s (%s)\n", text.TerminalLine(strings.Join(e.Features, ",")), e.Key, e.KeyType)
					}
					return nil
				},
			},
		},
	}
}

// gives reports whether a policy line gives exactly the feature pattern to
// key (whatever options it carries): what add refuses twice and remove
// removes.
func gives(line, feature string, key ssh.PublicKey) bool {
	f := strings.Fields(line)
	if len(f) < 3 || f[0] != feature {
		return false
	}
	want := strings.Fields(string(ssh.MarshalAuthorizedKey(key)))
	for i := 1; i+1 < len(f); i++ {
		if f[i] == want[0] && f[i+1] == want[1] {
			return true
		}
	}
	return false
}

// policyEdit is what add and remove work on: the work tree's policy path
// and content (none yet: empty), and the --key they name.
func (s *session) policyEdit(c *cli.Context) (string, []byte, ssh.PublicKey, string, error) {
	path := filepath.Join(s.workTree(), filepath.FromSlash(trust.PolicyPath))
	b, err := boundedio.ReadFile(path, policyLimit)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", nil, nil, "", err
	}
	key, comment, err := s.readPublicKey(c.String("key"))
	return path, b, key, comment, err
}

func writePolicy(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// readPublicKey reads --key: a public key file, or the key itself.
func (s *session) readPublicKey(arg string) (ssh.PublicKey, string, error) {
	b := []byte(arg)
	if !strings.HasPrefix(arg, "ssh-") && !strings.HasPrefix(arg, "ecdsa-") && !strings.HasPrefix(arg, "sk-") {
		p := arg
		if rest, ok := strings.CutPrefix(p, "~/"); ok {
			p = filepath.Join(s.env.Getenv("HOME"), rest)
		}
		var err error
		if b, err = s.readFileArg(p, keyFileLimit); err != nil {
			return nil, "", err
		}
	}
	key, comment, _, _, err := ssh.ParseAuthorizedKey(b)
	if err != nil {
		return nil, "", refusal.NewUnreadable(refusal.InputUnreadable, "give a public key (the .pub file), never a private one", "--key %s is not an SSH public key: %v", arg, err)
	}
	return key, comment, nil
}
