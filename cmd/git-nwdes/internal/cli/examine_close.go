package cli

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/examine/workspace"
	"github.com/nwdes/nwdes/internal/text"
)

// examineCloseOptions are examine close's flags.
type examineCloseOptions struct {
	Target     examine.Target
	Outcome    string
	Diagnostic string
	Sign       signOption
	JSON       bool
}

func (s *session) examineCloseCmd() *cli.Command {
	return &cli.Command{
		Name:      "close",
		Usage:     "check the draft and publish the examination and its brief",
		UsageText: "git nwdes examine close --feature F --outcome accepted --diagnostic TEXT [--sign] [--candidate REV] [--json]",
		Description: `Checks every expectation of the current contract at once, publishes the
examination with the outcome the verdicts derive (accepted when all are met,
rejected when any is unmet, indeterminate otherwise), writes the brief note,
and prints the outcome as the last line. The draft is kept. Exit 0 when
accepted, 1 when the published outcome is rejected or indeterminate.

With --sign (or git config nwdes.sign true) the examination is signed with
the SSH key git signs with (gpg.format=ssh, user.signingKey: a private key
file, or a public key whose private half ssh-agent holds); the brief names
the signer. See docs/trust.md.

EXAMPLES
   git nwdes examine close --feature greeting --outcome accepted --diagnostic "every expectation judged from public behaviour"
   git nwdes examine close --feature greeting --outcome accepted --diagnostic "judged" --sign
` + exitStatus(judges("the published outcome is rejected or indeterminate")),
		Flags: append(targetFlags(),
			&cli.StringFlag{Name: "outcome", Usage: "always accepted: nwdes derives the published outcome", Required: true},
			&cli.StringFlag{Name: "diagnostic", Usage: "what the examination found", Required: true},
			&cli.BoolFlag{Name: "sign", Usage: "sign the examination with your SSH signing key (default: git config nwdes.sign)"},
			jsonFlag(),
		),
		Action: func(c *cli.Context) error {
			return s.examineClose(c.Context, examineCloseOptions{Target: target(c), Outcome: c.String("outcome"), Diagnostic: c.String("diagnostic"),
				Sign: signFlag(c), JSON: s.wantJSON(c)})
		},
	}
}

func (s *session) examineClose(ctx context.Context, o examineCloseOptions) error {
	x, err := s.examiner()
	if err != nil {
		return err
	}
	if x.Sign, x.SignKey, err = s.signerFor(o.Sign); err != nil {
		return err
	}
	ex, notices, err := x.Close(ctx, o.Target, o.Outcome, o.Diagnostic)
	s.printNotices(notices)
	if err != nil {
		return err
	}
	// Only a close that published removes workspaces: a
	// refused one returned above, keeping them for the retry.
	swept, err := s.sweepWorkspaces(ctx, ex.Feature)
	if err != nil {
		// The examination is published: what could not be
		// swept is said, not turned into a failed close.
		s.printNotices([]string{"workspaces not removed: " + err.Error()})
		swept = &workspace.Swept{}
	}
	if o.JSON {
		out := examinationJSON(ex).(map[string]any)
		out["workspaces"] = map[string][]string{"removed": nonNil(swept.Removed), "kept": nonNil(swept.Kept), "elsewhere": nonNil(swept.Elsewhere)}
		writeJSON(s.env.Stdout, out)
	} else {
		s.renderClose(ex, swept)
	}
	if ex.Outcome != examine.Accepted {
		return negative(string(ex.Outcome))
	}
	return nil
}

func (s *session) renderClose(ex *examine.Examination, swept *workspace.Swept) {
	esc := text.TerminalLine
	fmt.Fprintf(s.env.Stdout, "published %s at %s\nbrief: git log -1 --notes=nwdes %s\n",
		esc(ex.Feature), esc(text.Short(ex.Candidate)), esc(text.Short(ex.Candidate)))
	for _, w := range swept.Removed {
		fmt.Fprintf(s.env.Stdout, "removed workspace %s\n", esc(w))
	}
	for _, w := range swept.Kept {
		fmt.Fprintf(s.env.Stdout, "kept workspace %s\n", esc(w))
	}
	for _, w := range swept.Elsewhere {
		fmt.Fprintf(s.env.Stdout, "not removed: workspace %s was made from another checkout; close there to remove it\n", esc(w))
	}
	fmt.Fprintf(s.env.Stdout, "%s\n", esc(string(ex.Outcome)))
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
