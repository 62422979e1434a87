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

// syncOptions are the git-facing options every verb that runs git shares.
func (s *session) syncOptions() gitstore.SyncOptions {
	var environ []string
	if s.env.Environ != nil {
		environ = s.env.Environ()
	}
	return gitstore.SyncOptions{Environ: environ}
}

// mergeOptions are syncOptions for push and fetch: after two clones'
// records merge, the briefs are rendered again from them.
func (s *session) mergeOptions(st *gitstore.Store) gitstore.SyncOptions {
	o := s.syncOptions()
	x := &examine.Examiner{Store: st, Now: s.env.Now}
	display := s.displayRef()
	o.AfterMerge = func(ctx context.Context) error {
		if err := x.RefreshBriefs(ctx); err != nil {
			return err
		}
		if display == "" {
			return nil
		}
		// Two clones' display notes were joined (a person's text kept);
		// nwdes's block is written again from the merged records.
		// A note whose block cannot be rewritten is left alone (fsck
		// names it); it does not stop the push or the fetch.
		_, _, err := examine.SyncDisplay(ctx, st, display, nil)
		return err
	}
	return o
}

// hookSettings reads core.hooksPath and nwdes.protect for the repository.
func (s *session) hookSettings(ctx context.Context) (gitrepo.Location, *hooks.Settings, error) {
	loc, err := gitrepo.Discover(s.dir, s.env.Getenv)
	if err != nil {
		return loc, nil, err
	}
	ask := func(key string) ([]string, error) {
		st, err := s.openAt(loc)
		if err != nil {
			return nil, err
		}
		return st.GitConfig(ctx, key, s.syncOptions())
	}
	cfg, err := s.config(loc)
	if err != nil {
		return loc, nil, err
	}
	set, err := hooks.SettingsFrom(loc, cfg, s.env.Getenv("HOME"), ask)
	return loc, set, err
}

func (s *session) hooksCmd() *cli.Command {
	render := func(c *cli.Context, st *hooks.State, set *hooks.Settings) error {
		st.HooksPath = set.HooksPath
		if s.wantJSON(c) {
			return writeJSON(s.env.Stdout, st)
		}
		for _, a := range st.Actions {
			fmt.Fprintln(s.env.Stdout, text.TerminalLine(a))
		}
		for _, l := range hooks.Describe(st) {
			fmt.Fprintln(s.env.Stdout, text.TerminalLine(l))
		}
		return nil
	}
	// --server picks the server's pre-receive hook instead of pre-push.
	serverFlag := &cli.BoolFlag{Name: "server", Usage: "the server's pre-receive hook (in the repository that receives pushes) instead of pre-push"}
	// With --server, each of the server's hooks in turn (pre-receive, then
	// reference-transaction); --json then writes a list of their states.
	run := func(fn func(h hooks.Hook, dir string) (*hooks.State, error)) cli.ActionFunc {
		return func(c *cli.Context) error {
			s.wantJSON(c)
			_, set, err := s.hookSettings(c.Context)
			if err != nil {
				return err
			}
			if !c.Bool("server") {
				st, err := fn(hooks.PrePushHook, set.Dir)
				if err != nil {
					return err
				}
				return render(c, st, set)
			}
			var states []*hooks.State
			for _, h := range hooks.ServerHooks {
				st, err := fn(h, set.Dir)
				if err != nil {
					return err
				}
				st.HooksPath = set.HooksPath
				states = append(states, st)
			}
			if s.wantJSON(c) {
				return writeJSON(s.env.Stdout, states)
			}
			for _, st := range states {
				if err := render(c, st, set); err != nil {
					return err
				}
			}
			return nil
		}
	}
	return &cli.Command{
		Name:  "hooks",
		Usage: "install, remove or inspect the pre-push hook that enforces acceptance",
		Description: `The pre-push hook refuses a push of a protected branch (main and master
unless git config nwdes.protect says otherwise) whose commit lacks an
accepted examination of every feature with a contract, and sends the
records that accept it to the remote before the branch (unless git config
nwdes.push.records=manual). It goes where git
runs hooks: core.hooksPath when set, else the hooks directory every linked
worktree shares. A hook already there is kept as pre-push.nwdes-chained
and still runs. See docs/hooks.md, also for lefthook, pre-commit and husky.

EXAMPLES
   git nwdes hooks install
   git nwdes hooks status --json
   git nwdes hooks uninstall
` + exitStatusAll(),
		Subcommands: []*cli.Command{
			{
				Name:      "install",
				Usage:     "install the pre-push hook, keeping and chaining any hook already there",
				UsageText: "git nwdes hooks install [--server] [--json]",
				Description: `Installing twice changes nothing; an older nwdes hook is upgraded. A hook
that is not nwdes's is renamed to pre-push.nwdes-chained (content and mode
kept) and runs after nwdes's check with the same arguments and input.

With --server, in the repository that receives pushes (a bare repository on
a server), it installs pre-receive and reference-transaction instead, which
run git nwdes hook pre-receive and hook reference-transaction: no client
option skips them, and every ref transaction in that repository is judged
(docs/hooks.md). Set git config nwdes.defaultBranch there too: a new
protected branch is judged against it.

EXAMPLES
   git nwdes hooks install
   git -c core.hooksPath=.githooks nwdes hooks install
   git -C /srv/git/project.git nwdes hooks install --server
` + exitStatus(),
				Flags:  []cli.Flag{serverFlag, jsonFlag()},
				Action: run(hooks.Hook.Install),
			},
			{
				Name:      "uninstall",
				Usage:     "remove the pre-push hook and put back the hook it kept",
				UsageText: "git nwdes hooks uninstall [--server] [--json]",
				Description: `Removes nwdes's hook and renames pre-push.nwdes-chained back to pre-push,
byte for byte. A hook that is not nwdes's is left alone.

EXAMPLES
   git nwdes hooks uninstall
` + exitStatus(),
				Flags:  []cli.Flag{serverFlag, jsonFlag()},
				Action: run(hooks.Hook.Uninstall),
			},
			{
				Name:      "status",
				Usage:     "say which pre-push hook is installed where",
				UsageText: "git nwdes hooks status [--server] [--json]",
				Description: `EXAMPLES
   git nwdes hooks status
` + exitStatus(),
				Flags:  []cli.Flag{serverFlag, jsonFlag()},
				Action: run(hooks.Hook.Status),
			},
		},
	}
}

func (s *session) hookCmd() *cli.Command {
	return &cli.Command{
		Name:  "hook",
		Usage: "run a hook's check (called by the installed hook, or by a hook manager)",
		Description: `EXAMPLES
   git nwdes hook pre-push origin https://example.com/repo.git < updates
` + exitStatusAll(),
		Subcommands: []*cli.Command{{
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
				remote := c.Args().First()
				var sent *hooks.Sent
				check := func(open func() (*gitstore.Store, error), p hooks.Policy, u []hooks.Update) (*hooks.Report, error) {
					if remote == "" {
						return hooks.Check(open, p, u)
					}
					rep, snt, err := hooks.CheckAndSend(c.Context, open, p, u, remote, func(ctx context.Context, st *gitstore.Store, remote string) (*gitstore.SyncReport, error) {
						return gitremote.New(st).Push(ctx, remote, s.mergeOptions(st))
					})
					sent = snt
					return rep, err
				}
				rep, loc, err := s.runCheck(c, updates, hooks.NeedsStore, check, hooks.Explain)
				if err != nil || rep == nil {
					return err
				}
				s.renderSent(sent)
				if rep.OK() && remote != "" && (sent == nil || sent.Report == nil) {
					s.remindPush(loc, remote)
				}
				if !rep.OK() {
					return negative("push refused")
				}
				return nil
			},
		}, {
			Name:      "pre-receive",
			Usage:     "check a push on the server: protected branches only to accepted commits, nwdes records append-only",
			UsageText: "git nwdes hook pre-receive < pre-receive input",
			Description: `Run by a server's pre-receive hook (or a forge's server hook) in the
receiving repository. Reads git's pre-receive input on stdin, one line per ref:
"<old oid> <new oid> <ref>". The pushed objects are read from git's quarantine.

A protected branch (nwdes.protect, default main and master) may only move to a
commit whose every feature has an accepted examination in the records as they
will be after this push (the ones pushed with it, else the server's) — and,
when the branch's current tip holds a signing policy
(.nwave/trust/allowed_signers), signed by a key it allows (docs/trust.md).
nwdes's records are append-only here: refs/nwdes/* and the notes move only
forward, never deleted or forced; leases (swap refs) move freely; an
undeclared refs/nwdes/ ref is refused, and so is any ref under refs/nwdes-local/,
refs/nwdes-remotes/ or another refs/nwdes-* (RefNeverTravels). A name is
judged as the ref it moves (a symbolic ref on the server is followed). A new
protected branch is judged against git config nwdes.defaultBranch and every
protected branch whose tip it contains; with none it is refused
(BranchUnsourced). Unlike the client's pre-push hook, no --no-verify skips
this. Exit 1 refuses the whole push.

EXAMPLES
   # hooks/pre-receive of a bare repository
   #!/bin/sh
   exec git nwdes hook pre-receive
` + exitStatus(judges("the push is refused")),
			Action: func(c *cli.Context) error {
				if c.NArg() > 0 {
					return usagef("pre-receive takes no arguments, got %d", c.NArg())
				}
				in := boundedio.NewReader(s.env.Stdin, "the pre-receive hook's stdin", hookInputLimit)
				updates, err := hooks.ParseReceive(in)
				if err := in.Err(); err != nil {
					return err
				}
				if err != nil {
					return err
				}
				if len(updates) == 0 {
					return nil
				}
				rep, err := s.runServerCheck(c, updates, nil, false)
				if err != nil {
					return err
				}
				if !rep.OK() {
					return negative("push refused")
				}
				return nil
			},
		}, {
			Name:      hooks.ReferenceTransaction,
			Usage:     "check a ref transaction on the server before git writes it: the pre-receive rules, with the records as they will be",
			UsageText: "git nwdes hook reference-transaction STATE < reference-transaction input",
			Description: `Run by the server's reference-transaction hook (installed with hooks install
--server), which git runs for every ref transaction in the repository. In the
state "prepared" — every ref of the transaction locked and its old value
checked, none written — it reads git's lines on stdin ("<old value> <new
value> <ref>") and applies pre-receive's rules to them again, with the records
as they will be once the transaction commits: those it writes, else the
server's as they are now. git writes the refs of a push that is not --atomic
one transaction each, after pre-receive has run: this is what keeps a
protected branch from landing when the records that accepted it do not. In
any other state it does nothing. Exit 1 makes git abort the transaction; git's
receive-pack then stops the push ("ref updates aborted by hook").

EXAMPLES
   # hooks/reference-transaction of a bare repository
   #!/bin/sh
   [ "$1" = prepared ] || exit 0
   exec git nwdes hook reference-transaction "$@"
` + exitStatus(judges("the ref update is refused")),
			Action: func(c *cli.Context) error {
				if c.NArg() != 1 {
					return usagef("reference-transaction takes the transaction's state, got %d arguments", c.NArg())
				}
				if c.Args().First() != "prepared" {
					return nil
				}
				updates, syms, err := hooks.ParseTransaction(s.env.Stdin)
				if err != nil {
					return err
				}
				if len(updates) == 0 && len(syms) == 0 {
					return nil
				}
				rep, err := s.runServerCheck(c, updates, syms, true)
				if err != nil {
					return err
				}
				if !rep.OK() {
					return negative("ref update refused")
				}
				return nil
			},
		}},
	}
}

// runServerCheck runs the server's check (hooks.Receive) of updates, as
// pre-receive or, written, as reference-transaction, and prints each
// ref's result and the notes on how it was judged on stderr (git shows
// pre-receive's to the pusher; reference-transaction's reach the pusher
// only where receive-pack's own stderr does: file://, ssh).
func (s *session) runServerCheck(c *cli.Context, updates []hooks.Update, syms []hooks.SymbolicUpdate, written bool) (*hooks.Report, error) {
	loc, set, err := s.hookSettings(c.Context)
	if err != nil {
		return nil, hooks.FailClosed("the push", err)
	}
	set.Policy.Now = s.env.Now
	rc := hooks.Receive{Policy: set.Policy, DefaultBranch: set.DefaultBranch, Written: written}
	rep, err := rc.Check(func() (*gitstore.Store, error) { return s.openAt(loc) }, updates)
	if err != nil {
		return nil, err
	}
	rep.Refs = append(rep.Refs, rc.CheckSymbolic(syms)...)
	for _, r := range rep.Refs {
		if r.Verdict == hooks.Pass {
			continue
		}
		for _, n := range r.Notes {
			fmt.Fprint(s.env.Stderr, text.Terminal("nwdes: "+n+"\n"))
		}
		switch {
		case r.Verdict == hooks.Accepted:
			fmt.Fprint(s.env.Stderr, text.Terminal(hooks.Summary(r)))
		case written:
			fmt.Fprint(s.env.Stderr, text.Terminal(hooks.ExplainWritten(r)))
		default:
			fmt.Fprint(s.env.Stderr, text.Terminal(hooks.ExplainOnServer(r)))
		}
	}
	return rep, nil
}

// runCheck runs a hook's check of updates with the repository's hook
// settings and prints each ref's result on stderr, which git shows the
// pusher (escaped: the explanations quote ref and feature names); explain
// renders a refused ref. A nil report: nothing needed checking.
func (s *session) runCheck(c *cli.Context, updates []hooks.Update, needs func(hooks.Policy, []hooks.Update) bool,
	check func(func() (*gitstore.Store, error), hooks.Policy, []hooks.Update) (*hooks.Report, error),
	explain func(hooks.RefResult) string) (*hooks.Report, gitrepo.Location, error) {
	loc, set, err := s.hookSettings(c.Context)
	if err != nil {
		return nil, loc, hooks.FailClosed("the push", err)
	}
	if !needs(set.Policy, updates) {
		return nil, loc, nil
	}
	set.Policy.Now = s.env.Now
	rep, err := check(func() (*gitstore.Store, error) { return s.openAt(loc) }, set.Policy, updates)
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
	st, err := s.openAt(loc)
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
