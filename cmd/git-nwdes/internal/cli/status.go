package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/judge"
	reports "github.com/nwdes/nwdes/report"
)

// judgingOptions are the flags that name a judgment's question besides
// the commit: --against and --require-signed.
type judgingOptions struct {
	Against       string
	RequireSigned bool
}

func judgingFlags(c *cli.Context) judgingOptions {
	return judgingOptions{Against: c.String("against"), RequireSigned: c.Bool("require-signed")}
}

// statusOptions are status's flags.
type statusOptions struct {
	Commit string
	judgingOptions
	JSON bool
}

func (s *session) evaluate(o statusOptions) (*reports.Status, error) {
	st, err := s.open()
	if err != nil {
		return nil, err
	}
	q, err := s.question(st, o)
	if err != nil {
		return nil, err
	}
	rep, err := reports.Evaluate(st, q)
	if err == nil && rep.Policy != "" {
		fmt.Fprintf(s.env.Stderr, "signing policy: %s\n", text.TerminalLine(rep.Policy))
	}
	return rep, err
}

// question is the judgment's question as the flags name it: --commit,
// --against (the protected branch's tip before the change: its contracts
// and its signing policy, as the hooks read them) and --require-signed.
func (s *session) question(st *gitstore.Store, o statusOptions) (judge.Question, error) {
	commit, err := st.Resolve(o.Commit)
	if err != nil {
		return judge.Question{}, err
	}
	q := judge.Question{Commit: commit, RequireSigned: o.RequireSigned, Now: s.now()}
	if q.Proof, err = s.proofMode(); err != nil {
		return judge.Question{}, err
	}
	if q.Gates, err = s.gatesMode(); err != nil {
		return q, err
	}
	q.Against, q.AgainstName, err = s.against(st, o.judgingOptions, true)
	return q, err
}

// against resolves --against (zero when not given; a line on stderr says
// what is then not checked). --require-signed needs it.
func (s *session) against(st *gitstore.Store, o judgingOptions, note bool) (oid.ID, string, error) {
	from := o.Against
	if from == "" {
		if o.RequireSigned {
			return oid.Zero, "", usagef("--require-signed needs --against REF: the protected branch whose policy applies (refs/remotes/origin/main, say)")
		}
		if note {
			fmt.Fprintln(s.env.Stderr, "nwdes: judged against no protected branch: its removed contracts and its signing policy are not checked (pass --against refs/remotes/origin/main; docs/ci.md)")
		}
		return oid.Zero, "", nil
	}
	// A short name resolves to a tag before a remote-tracking branch, and
	// tags are not protected: only a full ref name or object id is taken.
	if _, err := oid.Parse(from); err != nil && !strings.HasPrefix(from, "refs/") {
		return oid.Zero, "", usagef("--against %q: give a full ref name (refs/remotes/origin/main) or a commit id, never a short name a tag could shadow", from)
	}
	at, err := st.Resolve(from)
	if err != nil {
		return oid.Zero, "", err
	}
	return at, from, nil
}

func againstFlag() cli.Flag {
	return &cli.StringFlag{Name: "against", Aliases: []string{"policy-from"},
		Usage: "judge against the protected branch's tip `REF` (a full ref name or commit id): its contracts must remain, its signing policy applies"}
}

func commitFlag() cli.Flag {
	return &cli.StringFlag{Name: "commit", Usage: "the commit judged (`REV`, default HEAD)"}
}

func (s *session) statusCmd() *cli.Command {
	return &cli.Command{
		Name:      "status",
		Usage:     "say whether a commit is accepted: every feature's outcome, record, gates and verify",
		UsageText: "git nwdes status [--commit REV] [--against REF [--require-signed]] [--json]",
		Description: `For every feature whose contract is at .nwave/features/<F>.md in the
commit's tree: the outcome of its newest published examination at that
commit (accepted, rejected, indeterminate, or none), the record it comes
from, its gate evidence state and its newest verify verdict. Reads the local
records only: in CI run git nwdes fetch first. The JSON fields are
documented in docs/ci.md.

Exit 0 only when every feature with a contract is accepted; this is the
check CI runs, since git push --no-verify skips any client hook.

--against names the protected branch's tip before the change, as the
hooks judge: every contract it holds must still be in the commit, and the
signing policy it commits applies (an accepted examination must be signed
by a key it allows, which is neither the key that signed the commit nor its
author's). Without it, a contract a parent commit held must still be
there, and no policy applies; a line on stderr says so. --require-signed
also refuses when no policy is in force. This is the same judgment, in the
same code, as both hooks (docs/security.md).

EXAMPLES
   git nwdes status
   git nwdes status --commit origin/main --json
   git nwdes status --against refs/remotes/origin/main --json
   git nwdes status --against refs/remotes/origin/main --require-signed
` + exitStatus(judges("some feature with a contract is not accepted")),
		Flags: []cli.Flag{commitFlag(), jsonFlag(),
			againstFlag(),
			&cli.BoolFlag{Name: "require-signed", Usage: "refuse when no signing policy is in force at --against"},
		},
		Action: func(c *cli.Context) error {
			return s.status(statusOptions{Commit: c.String("commit"), judgingOptions: judgingFlags(c), JSON: s.wantJSON(c)})
		},
	}
}

func (s *session) status(o statusOptions) error {
	rep, err := s.evaluate(o)
	if err != nil {
		return err
	}
	if o.JSON {
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
