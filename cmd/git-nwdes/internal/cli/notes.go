package cli

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/refusal"
)

func (s *session) notesCmd() *cli.Command {
	return &cli.Command{
		Name:  "notes",
		Usage: "the display notes: the brief where plain git log and forges look",
		Subcommands: []*cli.Command{{
			Name:      "sync",
			Usage:     "write the nwdes block of each display note from the records",
			UsageText: "git nwdes notes sync [--commit REV ...]",
			Description: `With git config nwdes.displayRef set (refs/notes/commits, which plain git
log, git show and forges such as Gitea and Forgejo read), every close also
writes the acceptance brief there, as one block of the note between two
marker lines; text outside the block is never touched. notes sync writes
the block again from the records: for the commits named, or for every
commit with a brief (for a repository that turns the option on later).

EXAMPLES
   git config nwdes.displayRef refs/notes/commits
   git nwdes notes sync
   git nwdes notes sync --commit HEAD
` + exitStatus(),
			Flags: []cli.Flag{&cli.StringSliceFlag{Name: "commit", Usage: "a commit `REV` (repeatable; default: every commit with a brief)"}},
			Action: func(c *cli.Context) error {
				return s.notesSync(c.Context, notesSyncOptions{Commits: c.StringSlice("commit")})
			},
		}},
	}
}

// notesSyncOptions are notes sync's flags.
type notesSyncOptions struct {
	Commits []string // --commit REVs; none: every commit with a brief
}

func (s *session) notesSync(ctx context.Context, o notesSyncOptions) error {
	st, err := s.open()
	if err != nil {
		return err
	}
	ref := s.displayRef()
	if ref == "" {
		return refusal.New(refusal.MissingFact, "git config nwdes.displayRef refs/notes/commits",
			"no display notes ref is configured")
	}
	var commits []oid.ID
	for _, rev := range o.Commits {
		h, err := st.Resolve(rev)
		if err != nil {
			return err
		}
		commits = append(commits, h)
	}
	changed, left, err := examine.SyncDisplay(ctx, st, ref, commits)
	if err != nil {
		return err
	}
	for _, l := range left {
		fmt.Fprintf(s.env.Stderr, "left alone: the note on %s (fix its nwdes marker lines, or remove the block by hand)\n", l)
	}
	for _, h := range changed {
		fmt.Fprintf(s.env.Stdout, "wrote %s on %s\n", ref, h.Short())
	}
	fmt.Fprintf(s.env.Stdout, "%d display notes written\n", len(changed))
	return nil
}
