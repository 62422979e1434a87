package cli

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/refusal"
	"github.com/nwdes/nwdes/trust"
)

func targetFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "feature", Usage: "the feature examined (its contract is .nwave/features/`NAME`.md; may be left out when the commit has one)"},
		&cli.StringFlag{Name: "candidate", Usage: "the candidate commit (`REV`, default HEAD)"},
		&cli.StringFlag{Name: "contract", Usage: "the committed contract `PATH` at the candidate"},
	}
}

func target(c *cli.Context) examine.Target {
	return examine.Target{Feature: c.String("feature"), Candidate: c.String("candidate"), Contract: c.String("contract")}
}

// signer is the signing function --sign or nwdes.sign asks for (nil when
// neither does): the SSH key git would sign with, loaded before anything
// is written so that an unusable key changes nothing.
func (s *session) signer(c *cli.Context) (func([]byte) ([]byte, error), string, error) {
	return s.signerFor(signFlag(c))
}

// signOption is --sign as given: Set when given at all, so that
// --sign=false overrides git config nwdes.sign.
type signOption struct{ Set, Sign bool }

func signFlag(c *cli.Context) signOption {
	return signOption{Set: c.IsSet("sign"), Sign: c.Bool("sign")}
}

// signerFor is signer for --sign as given.
func (s *session) signerFor(o signOption) (func([]byte) ([]byte, error), string, error) {
	cfg := s.cfg
	if cfg == nil {
		return nil, "", nil
	}
	want, err := configBool(cfg, "nwdes.sign", false)
	if err != nil {
		return nil, "", err
	}
	if o.Set {
		want = o.Sign
	}
	if !want {
		return nil, "", nil
	}
	if f, _ := cfg.Get("gpg.format"); f != "ssh" {
		return nil, "", refusal.New(refusal.SigningKeyUnusable,
			"git config gpg.format ssh and user.signingKey to your SSH key (openpgp and x509 are not supported)",
			"gpg.format is %q: nwdes signs with SSH keys only", f)
	}
	key, _ := cfg.Get("user.signingkey")
	signer, err := trust.LoadSigner(key, s.env.Getenv)
	if err != nil {
		return nil, "", err
	}
	return func(m []byte) ([]byte, error) { return trust.Sign(signer, m) }, trust.Fingerprint(signer.PublicKey()), nil
}

func (s *session) examiner() (*examine.Examiner, error) {
	st, err := s.open()
	if err != nil {
		return nil, err
	}
	return s.examinerOn(st)
}

// examinerOn is the examiner the verbs use, on a store already open.
func (s *session) examinerOn(st examine.Store) (*examine.Examiner, error) {
	gates, err := s.gatesMode()
	if err != nil {
		return nil, err
	}
	return &examine.Examiner{Store: st, Now: s.env.Now, DisplayRef: s.displayRef(), Gates: gates}, nil
}

// gatesMode is git config nwdes.gates: binding unless it says advisory.
func (s *session) gatesMode() (examine.GatesMode, error) {
	if s.cfg == nil {
		return examine.GatesBinding, nil
	}
	v, set := s.cfg.Get("nwdes.gates")
	return examine.ParseGatesMode(strings.TrimSpace(v), set)
}

// proofMode is git config nwdes.gates.proof: optional unless it says
// required.
func (s *session) proofMode() (examine.ProofMode, error) {
	if s.cfg == nil {
		return examine.ProofOptional, nil
	}
	v, set := s.cfg.Get("nwdes.gates.proof")
	return examine.ParseProofMode(strings.TrimSpace(v), set)
}

// displayRef is git config nwdes.displayRef ("" when unset): the notes
// ref every close also writes the brief into, for plain git log and forges.
func (s *session) displayRef() gitstore.RefName {
	if s.cfg == nil {
		return ""
	}
	v, _ := s.cfg.Get("nwdes.displayRef")
	return gitstore.RefName(strings.TrimSpace(v))
}

func (s *session) printResult(res *examine.Result) {
	s.printNotices(res.Notices)
	if res.Message != "" {
		fmt.Fprintln(s.env.Stdout, text.Terminal(res.Message))
	}
}

// printNotices prints notices on stderr, one line each, escaped: they
// quote contracts and records.
func (s *session) printNotices(notices []string) {
	for _, n := range notices {
		fmt.Fprintf(s.env.Stderr, "notice: %s\n", text.TerminalLine(n))
	}
}

// withExaminer runs one examiner verb and prints its result: the shape
// of every examine verb but close and show.
func (s *session) withExaminer(verb func(x *examine.Examiner) (*examine.Result, error)) error {
	x, err := s.examiner()
	if err != nil {
		return err
	}
	res, err := verb(x)
	if err != nil {
		return err
	}
	s.printResult(res)
	return nil
}

func (s *session) examineCmd() *cli.Command {
	cmd := &cli.Command{
		Name:  "examine",
		Usage: "record observations and verdicts, and close an examination",
		Description: `An examiner records what it observed, sets a verdict on every expectation
of the feature's contract citing those observations, and closes. nwdes
derives the outcome and publishes the acceptance brief as a note on the
candidate commit (git log --notes=nwdes).

EXAMPLES
   git nwdes examine open --feature greeting
   git nwdes examine observation add --feature greeting --text "greet prints Hello, Ada."
   git nwdes examine verdict set --feature greeting --expectation E1 --verdict met --observation O1
   git nwdes examine close --feature greeting --outcome accepted --diagnostic "judged from public behaviour"
` + exitStatusAll(),
		Subcommands: []*cli.Command{
			s.examineOpenCmd(),
			s.examineObservationCmd(),
			s.examineVerdictCmd(),
			s.examineCloseCmd(),
			s.examineShowCmd(),
		},
	}
	cmd.Subcommands = append(cmd.Subcommands, s.workspaceCmds()...)
	return cmd
}
