package cli

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/internal/boundedio"
	"github.com/nwdes/nwdes/refusal"
)

// observationOptions are the flags of the examine observation verbs:
// the draft's target, the observation chosen (set, carry, remove) and its
// text (add, set).
type observationOptions struct {
	Target examine.Target
	Select selectorOptions
	Text   textOptions
}

// selectorOptions are --id and --at, as given.
type selectorOptions struct {
	ID, At  bool // set
	IDValue string
	AtValue int
}

// textOptions are --text and --text-file, as given.
type textOptions struct {
	Text, File      bool // set
	TextValue, Path string
}

func observationFlags(c *cli.Context) observationOptions {
	return observationOptions{
		Target: target(c),
		Select: selectorOptions{ID: c.IsSet("id"), At: c.IsSet("at"), IDValue: c.String("id"), AtValue: c.Int("at")},
		Text:   textOptions{Text: c.IsSet("text"), File: c.IsSet("text-file"), TextValue: c.String("text"), Path: c.String("text-file")},
	}
}

func (s *session) examineObservationCmd() *cli.Command {
	return &cli.Command{
		Name:  "observation",
		Usage: "add, replace or remove an observation",
		Description: `EXAMPLES
   git nwdes examine observation add --feature greeting --text-file out.txt
   git nwdes examine observation set --feature greeting --id O2 --text "corrected"
   git nwdes examine observation remove --feature greeting --at 1
` + exitStatusAll(),
		Subcommands: []*cli.Command{
			s.observationAddCmd(),
			s.observationSetCmd(),
			s.observationCarryCmd(),
			s.observationRemoveCmd(),
		},
	}
}

func (s *session) observationAddCmd() *cli.Command {
	return &cli.Command{
		Name:      "add",
		Usage:     "record one observation and print its issued ID",
		UsageText: "git nwdes examine observation add --feature F (--text T | --text-file PATH)",
		Description: `Prints the issued ID (O1, O2, …): cite that ID, never an invented one.
The text is kept byte for byte (CRLF, trailing newlines, backticks, empty).

EXAMPLES
   git nwdes examine observation add --feature greeting --text "greet Ada prints Hello, Ada."
` + exitStatus(),
		Flags:  append(targetFlags(), textFlags()...),
		Action: func(c *cli.Context) error { return s.observationAdd(c.Context, observationFlags(c)) },
	}
}

func (s *session) observationSetCmd() *cli.Command {
	return &cli.Command{
		Name:      "set",
		Usage:     "replace an observation's text, keeping its ID",
		UsageText: "git nwdes examine observation set --feature F (--id O<n> | --at N) (--text T | --text-file PATH)",
		Description: `EXAMPLES
   git nwdes examine observation set --feature greeting --id O1 --text "greet Ada prints Hello, Ada!"
` + exitStatus(),
		Flags:  append(append(targetFlags(), selectorFlags()...), textFlags()...),
		Action: func(c *cli.Context) error { return s.observationSet(c.Context, observationFlags(c)) },
	}
}

func (s *session) observationCarryCmd() *cli.Command {
	return &cli.Command{
		Name:      "carry",
		Usage:     "carry an observation made at another commit over to the draft's candidate",
		UsageText: "git nwdes examine observation carry --feature F (--id O<n> | --at N)",
		Description: `An observation cites the commit it was made at; after examine open
--retarget, one made at the old candidate can be cited for the new one only
once carried over, and the brief then says from which commit it came. Gate
evidence is never carried: run git nwdes gate run at the new candidate.

EXAMPLES
   git nwdes examine observation carry --feature greeting --id O2
` + exitStatus(),
		Flags: append(targetFlags(), selectorFlags()...),
		Action: func(c *cli.Context) error {
			return s.observationBySelector(c.Context, observationFlags(c), (*examine.Examiner).CarryObservation)
		},
	}
}

func (s *session) observationRemoveCmd() *cli.Command {
	return &cli.Command{
		Name:      "remove",
		Usage:     "remove an observation (citations of it stay and make close refuse)",
		UsageText: "git nwdes examine observation remove --feature F (--id O<n> | --at N)",
		Description: `Removed IDs are never issued again in this draft.

EXAMPLES
   git nwdes examine observation remove --feature greeting --id O2
` + exitStatus(),
		Flags: append(targetFlags(), selectorFlags()...),
		Action: func(c *cli.Context) error {
			return s.observationBySelector(c.Context, observationFlags(c), (*examine.Examiner).RemoveObservation)
		},
	}
}

func (s *session) observationAdd(ctx context.Context, o observationOptions) error {
	return s.withExaminer(func(x *examine.Examiner) (*examine.Result, error) {
		text, err := s.readText(o.Text)
		if err != nil {
			return nil, err
		}
		return x.AddObservation(ctx, o.Target, examine.SourceExaminer, text)
	})
}

func (s *session) observationSet(ctx context.Context, o observationOptions) error {
	return s.withExaminer(func(x *examine.Examiner) (*examine.Result, error) {
		sel, err := o.Select.selector()
		if err != nil {
			return nil, err
		}
		text, err := s.readText(o.Text)
		if err != nil {
			return nil, err
		}
		return x.SetObservation(ctx, o.Target, sel, text)
	})
}

// observationBySelector runs an examiner verb that acts on one
// observation, chosen by --id or --at.
func (s *session) observationBySelector(ctx context.Context, o observationOptions, verb func(*examine.Examiner, context.Context, examine.Target, examine.Selector) (*examine.Result, error)) error {
	return s.withExaminer(func(x *examine.Examiner) (*examine.Result, error) {
		sel, err := o.Select.selector()
		if err != nil {
			return nil, err
		}
		return verb(x, ctx, o.Target, sel)
	})
}

// readText takes --text or --text-file (read byte for byte, relative to -C).
func (s *session) readText(o textOptions) ([]byte, error) {
	if o.Text == o.File {
		return nil, usagef("give exactly one of --text and --text-file")
	}
	if o.Text {
		return []byte(o.TextValue), nil
	}
	// Read at most one byte more than a record may hold: a huge or endless
	// file (/dev/zero) is refused after that, not read whole into memory.
	limit := gitstore.DefaultMaxRecordBytes
	if s.cfg != nil {
		if o, err := storeOptions(s.cfg, nil); err == nil && o.MaxRecordBytes > 0 {
			limit = o.MaxRecordBytes
		}
	}
	return s.readFileArg(o.Path, boundedio.Limit{Bytes: int64(limit), Of: "one record",
		Remedy: "observe less (an excerpt, a digest), or raise git config nwdes.maxRecordBytes", Refusal: refusal.RecordTooLarge})
}

func textFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "text", Usage: "the observation `TEXT`, kept byte for byte"},
		&cli.StringFlag{Name: "text-file", Usage: "read the observation from `PATH`, byte for byte"},
	}
}

func selectorFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "id", Usage: "the observation `O<n>`"},
		intFlag("at", "the observation at 1-based position `N`", 0),
	}
}

func (o selectorOptions) selector() (examine.Selector, error) {
	if o.ID == o.At {
		return examine.Selector{}, usagef("give exactly one of --id and --at")
	}
	return examine.Selector{ID: examine.ObservationID(o.IDValue), At: o.AtValue}, nil
}
