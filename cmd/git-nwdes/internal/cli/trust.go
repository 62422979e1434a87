package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"
	"golang.org/x/crypto/ssh"

	"github.com/nwdes/nwdes/internal/boundedio"
	"github.com/nwdes/nwdes/refusal"
	"github.com/nwdes/nwdes/trust"
)

// trustCmd edits and shows the signing policy: git's allowed-signers file
// at .nwave/trust/allowed_signers whose principals are feature patterns.
// add and remove edit the work tree's file; the change takes effect when
// it is committed to the protected branch, where it is judged by the
// policy already there.
func (s *session) trustCmd() *cli.Command {
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
			s.trustAddCmd(),
			s.trustRemoveCmd(),
			s.trustShowCmd(),
		},
	}
}

func trustKeyFlag() cli.Flag {
	return &cli.StringFlag{Name: "key", Usage: "the public key: a `FILE` (id_ed25519.pub) or the key itself (\"ssh-ed25519 AAAA…\")", Required: true}
}

func trustFeatureFlag() cli.Flag {
	return &cli.StringFlag{Name: "feature", Usage: "the feature `PATTERN` the key may accept (* and ? wildcards, ! to exclude, comma-separated)", Required: true}
}

// trustAfter is what add and remove say last: when their edit applies.
const trustAfter = "commit " + trust.PolicyPath + " to the protected branch; the policy already there judges that commit, and the new one applies from then on"

// policyEdit is what add and remove work on: the work tree's policy path
// and content (none yet: empty), and the --key they name.
func (s *session) policyEdit(keyArg string) (string, []byte, ssh.PublicKey, string, error) {
	path := filepath.Join(s.workTree(), filepath.FromSlash(trust.PolicyPath))
	b, err := boundedio.ReadFile(path, policyLimit)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", nil, nil, "", err
	}
	key, comment, err := s.readPublicKey(keyArg)
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
