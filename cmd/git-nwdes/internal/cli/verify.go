package cli

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/judge"
)

// verifyOptions are verify's flags.
type verifyOptions struct {
	Input examine.VerifyInput
	judgingOptions
	JSON bool
}

func (s *session) verifyCmd() *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "judge a diff against a feature's contract from recorded evidence (runs nothing)",
		UsageText: "git nwdes verify --feature F --diff BASE...HEAD [--contract PATH] [--against REF [--require-signed]] [--json]",
		Description: `Prints the verifier's block for the contract committed at HEAD:

   VERIFY — VERDICT: CONFORME | ECARTS(n) | ABANDONED(n) | ERROR(<reason>)
   CONTRACT: <path>
   CRITERIA:
     E<n>. <criterion> — MET | NOT-MET | UNVERIFIABLE | ABANDONED — <evidence or reason>
   SCOPE: in-scope <n> files; out-of-scope: <list | none>
   PROOF: read <n> files, ran nothing, checked <n>/<n> criteria

A criterion with an oracle is judged from HEAD's gate evidence (pending or
stale is NOT-MET); one without takes the verdict of HEAD's published
examination, else it is UNVERIFIABLE; an examination's unmet counts against
an oracle that passed (an oracle_gap). The examination counts only where
the judgment lets it (docs/security.md): with --against, it must be signed
as the protected branch's policy asks, by someone other than the
candidate's author. Every file touched between the base
and HEAD must match a FILE SCOPE glob. First match wins: ERROR (contract
missing or unreadable), ECARTS(n) with n = NOT-MET + UNVERIFIABLE +
out-of-scope files, ABANDONED(n), CONFORME. BASE...HEAD diffs from the
merge base, BASE..HEAD from BASE. The result is recorded in
refs/nwdes/gates.

EXAMPLES
   git nwdes verify --feature greeting --diff main...HEAD
   git nwdes verify --feature greeting --diff HEAD~3..HEAD --json
` + exitStatus(judges("ECARTS or ABANDONED"), decides("ERROR")),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "feature", Usage: "the feature (its contract is .nwave/features/`NAME`.md)", Required: true},
			&cli.StringFlag{Name: "diff", Usage: "the range `BASE...HEAD` or BASE..HEAD", Required: true},
			&cli.StringFlag{Name: "contract", Usage: "the committed contract `PATH` at HEAD"},
			againstFlag(),
			&cli.BoolFlag{Name: "require-signed", Usage: "refuse when no signing policy is in force at --against"},
			jsonFlag(),
		},
		Action: func(c *cli.Context) error {
			return s.verify(c.Context, verifyOptions{Input: examine.VerifyInput{Feature: c.String("feature"), Diff: c.String("diff"), Contract: c.String("contract")},
				judgingOptions: judgingFlags(c), JSON: s.wantJSON(c)})
		},
	}
}

// renderVerify prints the verify block. examine renders it with the
// contract's criteria, paths and reasons as they are; the block is
// escaped here as it is written (text.Terminal keeps its lines), and the
// record and --json keep the exact text.
func (s *session) renderVerify(r *examine.VerifyResult) {
	fmt.Fprint(s.env.Stdout, text.Terminal(r.Render()))
}

func (s *session) verify(ctx context.Context, o verifyOptions) error {
	st, err := s.open()
	if err != nil {
		return err
	}
	at, name, err := s.against(st, o.judgingOptions, false)
	if err != nil {
		return err
	}
	q := judge.Question{Against: at, AgainstName: name, RequireSigned: o.RequireSigned, Now: s.now()}
	if q.Gates, err = s.gatesMode(); err != nil {
		return err
	}
	if q.Proof, err = s.proofMode(); err != nil {
		return err
	}
	// The examination verify weighs is held to the rules status and the
	// hooks hold it to: one judgment, asked of judge.
	rules, err := judge.RulesFor(st, q)
	if err != nil {
		return err
	}
	v := &examine.Verifier{Store: st, Now: s.env.Now, Rules: rules}
	r, err := v.Verify(ctx, o.Input)
	if err != nil {
		return err
	}
	if o.JSON {
		writeJSON(s.env.Stdout, map[string]any{"result": r, "token": r.Token(), "report": r.Render(), "record": r.Location()})
	} else {
		s.renderVerify(r)
	}
	switch r.Verdict {
	case examine.VerdictConforme:
		return nil
	case examine.VerdictError:
		return undecided(r.Token())
	}
	return negative(r.Token())
}
