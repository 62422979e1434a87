package cli

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/swarm"
)

func (s *session) swarmLandCmd() *cli.Command {
	return &cli.Command{
		Name:      "land",
		Usage:     "push a card's accepted head to the branch it names, fast-forward only, through the hooks",
		UsageText: "git nwdes swarm land [--remote R] [--attempt N] [--json] LABEL",
		Description: `Takes the card's harvested head (its newest attempt that harvested one, or
--attempt N's), or the newest candidate an earlier land rebased it into,
and asks the one judgment (as status and the hooks ask it: the candidate,
for the card's BRANCH, against the branch's tip on the remote) whether it
is accepted. First it fetches the remote's records (as git nwdes fetch),
so that what another clone landed is seen, and reads the branch's tip.

When the tip is an ancestor of the candidate, it runs git push R
<candidate>:<BRANCH>: no --force, no --no-verify, so nwdes's pre-push
hook sends the records the branch depends on and the server's hook
judges it again. The branch then names exactly the commit that was
judged. A landing record (refs/nwdes/swarm/landings) says so and is sent
to the remote: a candidate never lands twice.

When the branch moved elsewhere, nothing is pushed: the candidate's
change is made again on the new tip (per path; a path both sides changed
is refused NeedsPerson), kept under refs/nwdes/swarm/heads/<label>/
rebased-<commit>, and recorded as the candidate's successor. That is a
new candidate: gate and examine it as it is, then land the card again
(swarm run --rework --land does those steps itself). The worker that
produced the head may not examine its rebase.

Refused: a card with no BRANCH (BranchMissing), no harvested head
(HeadMissing), a candidate not accepted (NotAccepted, naming each
feature's outcome), or one that landed or is on the branch already
(AlreadyLanded). See docs/swarm.md (Landing).

EXAMPLES
   git nwdes swarm land fix-typo
   git nwdes swarm land --remote upstream --attempt 2 --json fix-typo
` + exitStatus(judges("the branch had moved: the candidate was rebased into a new candidate, which must be gated and examined before it lands")),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "remote", Value: "origin", Usage: "the git remote `NAME` whose branch it lands on"},
			intFlag("attempt", "land the head of attempt `N` (default: the newest that harvested one)", 0),
			jsonFlag(),
		},
		Action: func(c *cli.Context) error {
			o := landOptions{Remote: c.String("remote"), JSON: s.wantJSON(c)} // --json first: it shapes a refusal too
			var err error
			if o.Label, o.Attempt, err = labelAndAttempt(c); err != nil {
				return err
			}
			return s.swarmLand(c, o)
		},
	}
}

// landOptions are swarm land's LABEL and flags.
type landOptions struct {
	Label, Remote string
	Attempt       int
	JSON          bool
}

func (s *session) swarmLand(c *cli.Context, lo landOptions) error {
	st, err := s.open()
	if err != nil {
		return err
	}
	o := swarm.LandOptions{Store: st, Label: lo.Label, Remote: lo.Remote, Attempt: lo.Attempt,
		Sync: s.mergeOptions(st), Stderr: s.env.Stderr, By: s.owner(), Now: s.env.Now}
	if o.Gates, err = s.gatesMode(); err != nil {
		return err
	}
	if o.Proof, err = s.proofMode(); err != nil {
		return err
	}
	res, err := swarm.Land(c.Context, o)
	if err != nil {
		return err
	}
	if res.Notice != "" {
		fmt.Fprintf(s.env.Stderr, "warning: %s\n", text.TerminalLine(res.Notice))
	}
	if lo.JSON {
		err = writeJSON(s.env.Stdout, res)
	} else {
		s.renderLanding(res)
	}
	if err == nil && res.Event == swarm.LandRebased {
		return negative("not landed: rebased into a new candidate")
	}
	return err
}

// labelAndAttempt are a swarm verb's card LABEL and --attempt (0 when
// not given: the verb's default attempt).
func labelAndAttempt(c *cli.Context) (string, int, error) {
	label, err := oneLabel(c)
	if err != nil {
		return "", 0, err
	}
	if c.Int("attempt") < 0 {
		return "", 0, usagef("--attempt is a positive attempt number")
	}
	return label, c.Int("attempt"), nil
}

func (s *session) renderLanding(r *swarm.LandResult) {
	esc := text.TerminalLine
	w := s.env.Stdout
	switch r.Event {
	case swarm.LandLanded:
		fmt.Fprintf(w, "landed %s: %s is at %s on %s\n", esc(r.Label), esc(r.Branch), r.Candidate, esc(r.Remote))
	case swarm.LandRebased:
		fmt.Fprintf(w, "not landed %s: %s on %s moved to %s; rebased %s into a new candidate %s (%s)\n",
			esc(r.Label), esc(r.Branch), esc(r.Remote), text.Short(r.Onto), text.Short(r.Candidate), r.Rebased, esc(r.RebasedRef))
		fmt.Fprintf(w, "next: gate and examine %s as it is (git nwdes gate run --feature F --candidate %s --base %s; git nwdes examine open --feature F --candidate %s), then git nwdes swarm land %s\n",
			text.Short(r.Rebased), r.Rebased, r.Onto, r.Rebased, esc(r.Label))
	}
}
