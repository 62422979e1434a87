package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/gitstore"
	gitremote "github.com/nwdes/nwdes/gitstore/remote"
	"github.com/nwdes/nwdes/internal/text"
)

func remoteArg(c *cli.Context) (string, error) {
	switch c.NArg() {
	case 0:
		return "origin", nil
	case 1:
		return c.Args().First(), nil
	}
	return "", usagef("takes at most one REMOTE, got %d arguments", c.NArg())
}

// remoteOptions are the flags and REMOTE of remote setup, fetch and push.
type remoteOptions struct {
	Remote string
	JSON   bool
}

func (s *session) remoteCmd() *cli.Command {
	return &cli.Command{
		Name:  "remote",
		Usage: "configure a remote so that git fetch brings nwdes refs and notes",
		Description: `EXAMPLES
   git nwdes remote setup
   git nwdes remote setup upstream
` + exitStatusAll(),
		Subcommands: []*cli.Command{{
			Name:      "setup",
			Usage:     "add fetch refspecs for refs/nwdes/* and refs/notes/nwdes into a tracking namespace",
			UsageText: "git nwdes remote setup [REMOTE] [--json]",
			Description: `Adds to remote.<REMOTE>.fetch (default origin), once each:

   +refs/nwdes/*:refs/nwdes-remotes/<REMOTE>/nwdes/*
   +refs/notes/nwdes*:refs/nwdes-remotes/<REMOTE>/notes/nwdes*

so that a plain git fetch brings the remote's records into a tracking
namespace; git nwdes fetch (or push) merges them into the local refs. It
never writes remote.<REMOTE>.push (a bare git push would then push only
those refs) and never fetches onto the local refs, which would drop local
records not yet pushed; it warns about configured refspecs that do.

EXAMPLES
   git nwdes remote setup
   git fetch && git nwdes fetch
` + exitStatus(),
			Flags: []cli.Flag{jsonFlag()},
			Action: func(c *cli.Context) error {
				o := remoteOptions{JSON: s.wantJSON(c)}
				var err error
				if o.Remote, err = remoteArg(c); err != nil {
					return err
				}
				return s.remoteSetup(c.Context, o)
			},
		}},
	}
}

func (s *session) remoteSetup(ctx context.Context, o remoteOptions) error {
	st, err := s.open()
	if err != nil {
		return err
	}
	res, err := gitremote.New(st).SetupRemote(ctx, o.Remote, s.syncOptions())
	if err != nil {
		return err
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(s.env.Stderr, "warning: %s\n", text.TerminalLine(w))
	}
	if o.JSON {
		return writeJSON(s.env.Stdout, res)
	}
	for _, a := range res.Added {
		fmt.Fprintf(s.env.Stdout, "added remote.%s.fetch %s\n", text.TerminalLine(o.Remote), text.TerminalLine(a))
	}
	if len(res.Added) == 0 {
		fmt.Fprintf(s.env.Stdout, "remote %s already fetches nwdes refs and notes; nothing changed\n", text.TerminalLine(o.Remote))
	}
	return nil
}

func (s *session) syncCmd(name string) *cli.Command {
	var usage, desc string
	switch name {
	case "fetch":
		usage = "fetch a remote's nwdes refs and notes and merge them into the local ones"
		desc = `Fetches refs/nwdes/* and refs/notes/nwdes from REMOTE (default origin)
into refs/nwdes-remotes/<REMOTE>/ through the git binary (your SSH config and
credential helpers apply), then merges each into the local ref: a
fast-forward when local is behind, nothing when it is ahead, otherwise a
merge commit whose tree is the union of both sides. Records both sides
changed are decided by a fixed rule (the later examination index); a note
both changed keeps both texts, and then every note is rendered again from
the merged examinations. Drafts stay in this clone (refs/nwdes-local/).
Nothing local is ever dropped.

EXAMPLES
   git nwdes fetch
   git nwdes fetch upstream --json
`
	case "push":
		usage = "push local nwdes refs and notes to a remote, merging what it has first"
		desc = `Fetches and merges (as git nwdes fetch), then pushes every nwdes ref and
the notes in one atomic git push --no-verify, each with --force-with-lease
set to the value just fetched: a remote update not yet seen is never
overwritten. When the remote moved in between, nothing is written and the
round repeats (at most 8 times). --no-verify keeps pre-push hooks, nwdes's
included, out of nwdes's own pushes.

EXAMPLES
   git nwdes push
   git nwdes push upstream
`
	}
	return &cli.Command{
		Name:        name,
		Usage:       usage,
		UsageText:   "git nwdes " + name + " [REMOTE] [--json]",
		Description: desc + exitStatus(),
		Flags:       []cli.Flag{jsonFlag()},
		Action: func(c *cli.Context) error {
			o := remoteOptions{JSON: s.wantJSON(c)}
			var err error
			if o.Remote, err = remoteArg(c); err != nil {
				return err
			}
			return s.sync(c.Context, name, o)
		},
	}
}

// sync is fetch or push (name), with REMOTE's records merged into ours.
func (s *session) sync(ctx context.Context, name string, o remoteOptions) error {
	st, err := s.open()
	if err != nil {
		return err
	}
	var rep *gitstore.SyncReport
	if name == "push" {
		rep, err = gitremote.New(st).Push(ctx, o.Remote, s.mergeOptions(st))
	} else {
		rep, err = gitremote.New(st).Fetch(ctx, o.Remote, s.mergeOptions(st))
	}
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(s.env.Stdout, rep)
	}
	s.renderSync(name, rep)
	return nil
}

// renderSync prints what fetch or push did. Ref names and record paths
// come from the remote: each line is escaped as one value.
func (s *session) renderSync(verb string, rep *gitstore.SyncReport) {
	w := s.env.Stdout
	esc := text.TerminalLine
	for _, r := range rep.Merged {
		line := fmt.Sprintf("%s: %s", r.Ref, r.Action)
		switch r.Action {
		case gitstore.SyncFastForward, gitstore.SyncMerged:
			line += fmt.Sprintf(" (%s..%s)", text.Short(r.Before), text.Short(r.After))
		}
		if n := len(r.Resolved); n > 0 {
			line += fmt.Sprintf("; both sides had changed %d path(s): %s", n, strings.Join(r.Resolved, ", "))
		}
		fmt.Fprintln(w, esc(line))
	}
	for _, r := range rep.Pushed {
		fmt.Fprintln(w, esc(fmt.Sprintf("pushed %s to %s (%s..%s)", r.Ref, rep.Remote, abbrevOr(r.Before, "new"), text.Short(r.After))))
	}
	switch {
	case verb == "push" && len(rep.Pushed) == 0:
		fmt.Fprintf(w, "nothing to push: %s has every local nwdes ref\n", esc(rep.Remote))
	case verb == "fetch" && len(rep.Merged) == 0:
		fmt.Fprintf(w, "%s has no nwdes refs\n", esc(rep.Remote))
	}
}

func abbrevOr(h, none string) string {
	if h == "" {
		return none
	}
	return text.Short(h)
}
