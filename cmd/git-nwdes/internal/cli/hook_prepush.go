package cli

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	gitremote "github.com/nwdes/nwdes/gitstore/remote"
	"github.com/nwdes/nwdes/hooks"
	"github.com/nwdes/nwdes/internal/boundedio"
	"github.com/nwdes/nwdes/internal/text"
)

func (s *session) hookCmd() *cli.Command {
	return &cli.Command{
		Name:  "hook",
		Usage: "run a hook's check (called by the installed hook, or by a hook manager)",
		Description: `EXAMPLES
   git nwdes hook pre-push origin https://example.com/repo.git < updates
` + exitStatusAll(),
		Subcommands: []*cli.Command{
			s.hookPrePushCmd(),
			s.hookPreReceiveCmd(),
			s.hookTransactionCmd(),
		},
	}
}

// prePushOptions are hook pre-push's arguments: the remote git pushes
// to ("" when git named none).
type prePushOptions struct {
	Remote string
}

func (s *session) hookPrePushCmd() *cli.Command {
	return &cli.Command{
		Name:      "pre-push",
		Usage:     "check a push: protected refs may only move to accepted commits",
		UsageText: "git nwdes hook pre-push [REMOTE [URL]] < pre-push input",
		Description: `Reads git's pre-push input on stdin, one line per ref:
"<local ref> <local oid> <remote ref> <remote oid>". For each protected remote
ref (git config nwdes.protect, default main and master) that is not deleted,
the pushed commit (a tag is peeled) must carry an accepted published
examination of every feature whose contract is at .nwave/features/<F>.md in
its tree. Deletions, unprotected refs and nwdes's own refs pass. A refusal
names the commit, each feature and its outcome, and the remedy. When the
records cannot be read the push is refused (StoreUnreadable).

When it accepts a protected ref, it first sends the records (git nwdes
push REMOTE: every nwdes ref and the notes, merged with the remote's) to
the same remote, so that a server that judges the branch holds them before
git pushes it; when that merge brought newer records, it checks again. A
failure to send refuses the push (RemoteFailed). git config
nwdes.push.records=manual turns this off (docs/hooks.md).

EXAMPLES
   printf 'refs/heads/main %s refs/heads/main %s\n' $(git rev-parse HEAD) $(git rev-parse origin/main) | git nwdes hook pre-push origin
` + exitStatus(judges("the push is refused")),
		Action: func(c *cli.Context) error {
			if c.NArg() > 2 {
				return usagef("pre-push takes at most REMOTE and URL, got %d arguments", c.NArg())
			}
			return s.hookPrePush(c.Context, prePushOptions{Remote: c.Args().First()})
		},
	}
}

func (s *session) hookPrePush(ctx context.Context, o prePushOptions) error {
	in := boundedio.NewReader(s.env.Stdin, "the pre-push hook's stdin", hookInputLimit)
	updates, err := hooks.ParseUpdates(in)
	if err := in.Err(); err != nil {
		return err
	}
	if err != nil {
		return err
	}
	if len(updates) == 0 {
		return nil
	}
	var sent *hooks.Sent
	check := func(open func() (*gitstore.Store, error), p hooks.Policy, u []hooks.Update) (*hooks.Report, error) {
		if o.Remote == "" {
			return hooks.Check(open, p, u)
		}
		rep, snt, err := hooks.CheckAndSend(ctx, open, p, u, o.Remote, func(ctx context.Context, st *gitstore.Store, remote string) (*gitstore.SyncReport, error) {
			return gitremote.New(st).Push(ctx, remote, s.mergeOptions(st))
		})
		sent = snt
		return rep, err
	}
	rep, loc, err := s.runCheck(ctx, updates, hooks.NeedsStore, check, hooks.Explain)
	if err != nil || rep == nil {
		return err
	}
	s.renderSent(sent)
	if rep.OK() && o.Remote != "" && (sent == nil || sent.Report == nil) {
		s.remindPush(loc, o.Remote)
	}
	if !rep.OK() {
		return negative("push refused")
	}
	return nil
}

// runCheck runs a hook's check of updates with the repository's hook
// settings and prints each ref's result on stderr, which git shows the
// pusher (escaped: the explanations quote ref and feature names); explain
// renders a refused ref. A nil report: nothing needed checking.
func (s *session) runCheck(ctx context.Context, updates []hooks.Update, needs func(hooks.Policy, []hooks.Update) bool,
	check func(func() (*gitstore.Store, error), hooks.Policy, []hooks.Update) (*hooks.Report, error),
	explain func(hooks.RefResult) string) (*hooks.Report, gitrepo.Location, error) {
	loc, set, err := s.hookSettings(ctx)
	if err != nil {
		return nil, loc, hooks.FailClosed("the push", err)
	}
	if !needs(set.Policy, updates) {
		return nil, loc, nil
	}
	set.Policy.Now = s.env.Now
	rep, err := check(func() (*gitstore.Store, error) { return s.hookStore(loc) }, set.Policy, updates)
	if err != nil {
		return nil, loc, err
	}
	for _, r := range rep.Refs {
		switch r.Verdict {
		case hooks.Refused:
			fmt.Fprint(s.env.Stderr, text.Terminal(explain(r)))
		case hooks.Accepted:
			fmt.Fprint(s.env.Stderr, text.Terminal(hooks.Summary(r)))
		}
	}
	return rep, loc, nil
}

// renderSent says on stderr which records the pre-push hook sent before
// the branch, or why it could not.
func (s *session) renderSent(sent *hooks.Sent) {
	if sent == nil {
		return
	}
	if sent.Notice != "" {
		fmt.Fprintf(s.env.Stderr, "nwdes: %s\n", text.TerminalLine(sent.Notice))
	}
	if sent.Report == nil {
		return
	}
	for _, r := range sent.Report.Pushed {
		fmt.Fprintln(s.env.Stderr, text.TerminalLine(fmt.Sprintf("nwdes: sent %s to %s before the branch (%s..%s)", r.Ref, sent.Report.Remote, abbrevOr(r.Before, "new"), text.Short(r.After))))
	}
}

// remindPush says, after an accepted check that sent no records (git
// config nwdes.push.records=manual, or no remote named), when the records
// that accept it are not on the remote yet (as last fetched): a server
// that judges the branch refuses it, and a clone that pulls the commit
// finds it unexamined, until they are pushed.
func (s *session) remindPush(loc gitrepo.Location, remote string) {
	st, err := s.hookStore(loc)
	if err != nil {
		return
	}
	local, err := st.Tip(examine.Ref)
	if err != nil || local.IsZero() {
		return
	}
	tracked, err := st.Tip(gitstore.TrackingRef(remote, examine.Ref))
	if err != nil || tracked == local {
		return
	}
	fmt.Fprintf(s.env.Stderr, "hint: the examinations are not on %s yet, and a server that judges the branch refuses it until they are: send them with git nwdes push %s (then push the branch again if it was refused)\n", text.TerminalLine(remote), text.TerminalLine(remote))
}
