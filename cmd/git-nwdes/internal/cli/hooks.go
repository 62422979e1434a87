package cli

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/hooks"
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

// hooksOptions are the flags of hooks install, uninstall and status.
type hooksOptions struct {
	Server bool // the server's hooks instead of pre-push
	JSON   bool
}

func hooksFlags(s *session, c *cli.Context) hooksOptions {
	return hooksOptions{Server: c.Bool("server"), JSON: s.wantJSON(c)}
}

// serverFlag picks the server's pre-receive hook instead of pre-push.
func serverFlag() cli.Flag {
	return &cli.BoolFlag{Name: "server", Usage: "the server's pre-receive hook (in the repository that receives pushes) instead of pre-push"}
}

func (s *session) hooksCmd() *cli.Command {
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
			s.hooksInstallCmd(),
			s.hooksUninstallCmd(),
			s.hooksStatusCmd(),
		},
	}
}

func (s *session) hooksInstallCmd() *cli.Command {
	return &cli.Command{
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
		Flags:  []cli.Flag{serverFlag(), jsonFlag()},
		Action: func(c *cli.Context) error { return s.hooksRun(c.Context, hooksFlags(s, c), hooks.Hook.Install) },
	}
}

func (s *session) hooksUninstallCmd() *cli.Command {
	return &cli.Command{
		Name:      "uninstall",
		Usage:     "remove the pre-push hook and put back the hook it kept",
		UsageText: "git nwdes hooks uninstall [--server] [--json]",
		Description: `Removes nwdes's hook and renames pre-push.nwdes-chained back to pre-push,
byte for byte. A hook that is not nwdes's is left alone.

EXAMPLES
   git nwdes hooks uninstall
` + exitStatus(),
		Flags:  []cli.Flag{serverFlag(), jsonFlag()},
		Action: func(c *cli.Context) error { return s.hooksRun(c.Context, hooksFlags(s, c), hooks.Hook.Uninstall) },
	}
}

func (s *session) hooksStatusCmd() *cli.Command {
	return &cli.Command{
		Name:      "status",
		Usage:     "say which pre-push hook is installed where",
		UsageText: "git nwdes hooks status [--server] [--json]",
		Description: `EXAMPLES
   git nwdes hooks status
` + exitStatus(),
		Flags:  []cli.Flag{serverFlag(), jsonFlag()},
		Action: func(c *cli.Context) error { return s.hooksRun(c.Context, hooksFlags(s, c), hooks.Hook.Status) },
	}
}

// hooksRun runs verb on the pre-push hook or, with --server, on each of
// the server's hooks in turn (pre-receive, then reference-transaction);
// --json then writes a list of their states.
func (s *session) hooksRun(ctx context.Context, o hooksOptions, verb func(h hooks.Hook, dir string) (*hooks.State, error)) error {
	_, set, err := s.hookSettings(ctx)
	if err != nil {
		return err
	}
	if !o.Server {
		st, err := verb(hooks.PrePushHook, set.Dir)
		if err != nil {
			return err
		}
		return s.renderHookState(o, st, set)
	}
	var states []*hooks.State
	for _, h := range hooks.ServerHooks {
		st, err := verb(h, set.Dir)
		if err != nil {
			return err
		}
		st.HooksPath = set.HooksPath
		states = append(states, st)
	}
	if o.JSON {
		return writeJSON(s.env.Stdout, states)
	}
	for _, st := range states {
		if err := s.renderHookState(o, st, set); err != nil {
			return err
		}
	}
	return nil
}

func (s *session) renderHookState(o hooksOptions, st *hooks.State, set *hooks.Settings) error {
	st.HooksPath = set.HooksPath
	if o.JSON {
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
