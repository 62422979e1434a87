package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/hooks"
	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/refusal"
	reports "github.com/nwdes/nwdes/report"
	"github.com/nwdes/nwdes/trust"
)

func (s *session) evaluate(c *cli.Context) (*reports.Status, error) {
	st, err := s.open()
	if err != nil {
		return nil, err
	}
	commit, err := st.Resolve(c.String("commit"))
	if err != nil {
		return nil, err
	}
	rep, err := reports.Evaluate(st, commit)
	if err != nil || !c.Bool("require-signed") {
		return rep, err
	}
	return rep, s.requireSigned(c, st, rep)
}

// requireSigned holds every accepted feature of rep to the signing policy
// committed at --policy-from (the protected branch's tip, as the hooks
// read it): a feature whose examination is not signed as the policy asks
// is not accepted, with the refusal as its problem.
func (s *session) requireSigned(c *cli.Context, st *gitstore.Store, rep *reports.Status) error {
	from := c.String("policy-from")
	if from == "" {
		return usagef("--require-signed needs --policy-from REF: the protected branch whose policy applies (refs/remotes/origin/main, say)")
	}
	// A short name resolves to a tag before a remote-tracking branch, and
	// tags are not protected: only a full ref name or object id is taken.
	if _, err := oid.Parse(from); err != nil && !strings.HasPrefix(from, "refs/") {
		return usagef("--policy-from %q: give a full ref name (refs/remotes/origin/main) or a commit id, never a short name a tag could shadow", from)
	}
	at, err := st.Resolve(from)
	if err != nil {
		return err
	}
	policy, err := hooks.PolicyAt(st, at, fmt.Sprintf("%s at %s (%s)", trust.PolicyPath, from, at.Short()))
	if err != nil {
		return err
	}
	if policy == nil {
		return refusal.New(refusal.MissingFact, "commit a policy there first (git nwdes trust add), or drop --require-signed",
			"--require-signed: %s (%s) has no signing policy (%s)", from, at.Short(), trust.PolicyPath)
	}
	fmt.Fprintf(s.env.Stderr, "signing policy: %s at %s (%s)\n", trust.PolicyPath, text.TerminalLine(from), at.Short())
	rep.Accepted = true
	for i := range rep.Features {
		feat := &rep.Features[i]
		if ex := feat.Examination(); feat.Outcome == examine.Accepted && feat.Problem == "" && ex != nil {
			if err := ex.SignedAsRequired(policy, s.env.Now()); err != nil {
				feat.Outcome, feat.Problem = examine.Invalid, text.OneLine(err.Error())
			}
		}
		if feat.Outcome != examine.Accepted || feat.Problem != "" {
			rep.Accepted = false
		}
	}
	return nil
}

func commitFlag() cli.Flag {
	return &cli.StringFlag{Name: "commit", Usage: "the commit judged (`REV`, default HEAD)"}
}

func (s *session) statusCmd() *cli.Command {
	return &cli.Command{
		Name:      "status",
		Usage:     "say whether a commit is accepted: every feature's outcome, record, gates and verify",
		UsageText: "git nwdes status [--commit REV] [--require-signed --policy-from REF] [--json]",
		Description: `For every feature whose contract is at .nwave/features/<F>.md in the
commit's tree: the outcome of its newest published examination at that
commit (accepted, rejected, indeterminate, or none), the record it comes
from, its gate evidence state and its newest verify verdict. Reads the local
records only: in CI run git nwdes fetch first. The JSON fields are
documented in docs/ci.md.

Exit 0 only when every feature with a contract is accepted; this is the
check CI runs, since git push --no-verify skips any client hook.

With --require-signed, an accepted examination also has to be signed by a
key the signing policy committed at --policy-from allows for its feature
(docs/trust.md), as the hooks require on the protected branch.

EXAMPLES
   git nwdes status
   git nwdes status --commit origin/main --json
   git nwdes status --require-signed --policy-from refs/remotes/origin/main
` + exitStatus,
		Flags: []cli.Flag{commitFlag(), jsonFlag(),
			&cli.BoolFlag{Name: "require-signed", Usage: "accepted only when signed as the policy at --policy-from asks"},
			&cli.StringFlag{Name: "policy-from", Usage: "the full `REF` (or commit id) whose committed signing policy applies: the protected branch's tip before the change judged"},
		},
		Action: func(c *cli.Context) error {
			asJSON := s.wantJSON(c)
			rep, err := s.evaluate(c)
			if err != nil {
				return err
			}
			if asJSON {
				if err := writeJSON(s.env.Stdout, rep); err != nil {
					return err
				}
			} else {
				s.renderStatus(rep)
				s.hintFetch(rep)
			}
			if !rep.Accepted {
				return negative("not accepted")
			}
			return nil
		},
	}
}

// renderStatus prints rep for people. Names, problems, records and verify
// tokens come from commits and records: each is escaped as one value
// (text.TerminalLine), so it can neither act on the terminal nor start a
// line or a column of its own.
func (s *session) renderStatus(rep *reports.Status) {
	esc := text.TerminalLine
	w := s.env.Stdout
	fmt.Fprintf(w, "commit %s\n", esc(rep.Commit))
	if len(rep.Features) == 0 {
		fmt.Fprintln(w, "no feature contract (.nwave/features/*.md) at this commit")
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, f := range rep.Features {
		outcome := esc(string(f.Outcome))
		if f.Outcome == examine.None {
			outcome = "not examined"
		}
		var extra []string
		if f.Problem != "" {
			outcome = reports.ProblemLabel(&f)
			extra = append(extra, esc(f.Problem))
		}
		if f.Expectations != nil {
			extra = append(extra, fmt.Sprintf("%d met, %d unmet, %d not examined", f.Expectations.Met, f.Expectations.Unmet, f.Expectations.NotExamined))
		}
		if f.Gates != nil {
			extra = append(extra, "gates "+esc(f.Gates.State))
		}
		if f.Verify != nil {
			extra = append(extra, "verify "+esc(f.Verify.Verdict))
		}
		if f.Signature != "" {
			extra = append(extra, esc(f.Signature))
		}
		if f.Record != "" {
			extra = append(extra, esc(f.Record))
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", esc(f.Feature), outcome, strings.Join(extra, "; "))
	}
	tw.Flush()
	if rep.Accepted {
		fmt.Fprintln(w, "accepted")
		return
	}
	var names []string
	for _, f := range rep.Unaccepted() {
		names = append(names, esc(f.Feature))
	}
	verb := "lacks"
	if len(names) > 1 {
		verb = "lack"
	}
	fmt.Fprintf(w, "not accepted: %s %s an accepted examination at this commit\n", strings.Join(names, ", "), verb)
}

// hintFetch says, when a commit with contracts finds no examination at
// all in this clone, how to bring the records a remote may hold.
func (s *session) hintFetch(rep *reports.Status) {
	if rep.Accepted || len(rep.Features) == 0 {
		return
	}
	st, err := s.open()
	if err != nil {
		return
	}
	if tip, err := st.Tip(examine.Ref); err != nil || !tip.IsZero() {
		return
	}
	fmt.Fprintln(s.env.Stderr, "hint: this clone holds no nwdes examination; if a remote does: git nwdes remote setup, then git nwdes fetch")
}
