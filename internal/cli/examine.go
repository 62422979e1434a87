package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/examine/workspace"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/internal/boundedio"
	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/refusal"
	"github.com/nwdes/nwdes/trust"
)

func targetFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "feature", Usage: "the feature examined (its contract is .nwave/features/`NAME`.md; may be left out when the commit has one)"},
		&cli.StringFlag{Name: "candidate", Usage: "the candidate commit (`REV`, default HEAD)"},
		&cli.StringFlag{Name: "contract", Usage: "the committed contract `PATH` at the candidate"},
	}
}

func target(c *cli.Context) examine.Target {
	return examine.Target{Feature: c.String("feature"), Candidate: c.String("candidate"), Contract: c.String("contract")}
}

// signer is the signing function --sign or nwdes.sign asks for (nil when
// neither does): the SSH key git would sign with, loaded before anything
// is written so that an unusable key changes nothing.
func (s *session) signer(c *cli.Context) (func([]byte) ([]byte, error), string, error) {
	cfg := s.cfg
	if cfg == nil {
		return nil, "", nil
	}
	want, err := configBool(cfg, "nwdes.sign", false)
	if err != nil {
		return nil, "", err
	}
	if c.IsSet("sign") {
		want = c.Bool("sign")
	}
	if !want {
		return nil, "", nil
	}
	if f, _ := cfg.Get("gpg.format"); f != "ssh" {
		return nil, "", refusal.New(refusal.SigningKeyUnusable,
			"git config gpg.format ssh and user.signingKey to your SSH key (openpgp and x509 are not supported)",
			"gpg.format is %q: nwdes signs with SSH keys only", f)
	}
	key, _ := cfg.Get("user.signingkey")
	signer, err := trust.LoadSigner(key, s.env.Getenv)
	if err != nil {
		return nil, "", err
	}
	return func(m []byte) ([]byte, error) { return trust.Sign(signer, m) }, trust.Fingerprint(signer.PublicKey()), nil
}

func (s *session) examiner() (*examine.Examiner, error) {
	st, err := s.open()
	if err != nil {
		return nil, err
	}
	return s.examinerOn(st)
}

// examinerOn is the examiner the verbs use, on a store already open.
func (s *session) examinerOn(st examine.Store) (*examine.Examiner, error) {
	gates, err := s.gatesMode()
	if err != nil {
		return nil, err
	}
	return &examine.Examiner{Store: st, Now: s.env.Now, DisplayRef: s.displayRef(), Gates: gates}, nil
}

// gatesMode is git config nwdes.gates: binding unless it says advisory.
func (s *session) gatesMode() (examine.GatesMode, error) {
	if s.cfg == nil {
		return examine.GatesBinding, nil
	}
	v, set := s.cfg.Get("nwdes.gates")
	return examine.ParseGatesMode(strings.TrimSpace(v), set)
}

// proofMode is git config nwdes.gates.proof: optional unless it says
// required.
func (s *session) proofMode() (examine.ProofMode, error) {
	if s.cfg == nil {
		return examine.ProofOptional, nil
	}
	v, set := s.cfg.Get("nwdes.gates.proof")
	return examine.ParseProofMode(strings.TrimSpace(v), set)
}

// displayRef is git config nwdes.displayRef ("" when unset): the notes
// ref every close also writes the brief into, for plain git log and forges.
func (s *session) displayRef() gitstore.RefName {
	if s.cfg == nil {
		return ""
	}
	v, _ := s.cfg.Get("nwdes.displayRef")
	return gitstore.RefName(strings.TrimSpace(v))
}

// readText takes --text or --text-file (read byte for byte, relative to -C).
func (s *session) readText(c *cli.Context) ([]byte, error) {
	hasText, hasFile := c.IsSet("text"), c.IsSet("text-file")
	if hasText == hasFile {
		return nil, usagef("give exactly one of --text and --text-file")
	}
	if hasText {
		return []byte(c.String("text")), nil
	}
	// Read at most one byte more than a record may hold: a huge or endless
	// file (/dev/zero) is refused after that, not read whole into memory.
	limit := gitstore.DefaultMaxRecordBytes
	if s.cfg != nil {
		if o, err := storeOptions(s.cfg, nil); err == nil && o.MaxRecordBytes > 0 {
			limit = o.MaxRecordBytes
		}
	}
	return s.readFileArg(c.String("text-file"), boundedio.Limit{Bytes: int64(limit), Of: "one record",
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

func selector(c *cli.Context) (examine.Selector, error) {
	if c.IsSet("id") == c.IsSet("at") {
		return examine.Selector{}, usagef("give exactly one of --id and --at")
	}
	return examine.Selector{ID: examine.ObservationID(c.String("id")), At: c.Int("at")}, nil
}

func (s *session) printResult(res *examine.Result) {
	s.printNotices(res.Notices)
	if res.Message != "" {
		fmt.Fprintln(s.env.Stdout, text.Terminal(res.Message))
	}
}

// printNotices prints notices on stderr, one line each, escaped: they
// quote contracts and records.
func (s *session) printNotices(notices []string) {
	for _, n := range notices {
		fmt.Fprintf(s.env.Stderr, "notice: %s\n", text.TerminalLine(n))
	}
}

func (s *session) examineCmd() *cli.Command {
	run := func(fn func(c *cli.Context, x *examine.Examiner) (*examine.Result, error)) cli.ActionFunc {
		return func(c *cli.Context) error {
			x, err := s.examiner()
			if err != nil {
				return err
			}
			res, err := fn(c, x)
			if err != nil {
				return err
			}
			s.printResult(res)
			return nil
		}
	}
	cmd := &cli.Command{
		Name:  "examine",
		Usage: "record observations and verdicts, and close an examination",
		Description: `An examiner records what it observed, sets a verdict on every expectation
of the feature's contract citing those observations, and closes. nwdes
derives the outcome and publishes the acceptance brief as a note on the
candidate commit (git log --notes=nwdes).

EXAMPLES
   git nwdes examine open --feature greeting
   git nwdes examine observation add --feature greeting --text "greet prints Hello, Ada."
   git nwdes examine verdict set --feature greeting --expectation E1 --verdict met --observation O1
   git nwdes examine close --feature greeting --outcome accepted --diagnostic "judged from public behaviour"
` + exitStatusAll(),
		Subcommands: []*cli.Command{
			{
				Name:      "open",
				Usage:     "start a draft examination of a feature",
				UsageText: "git nwdes examine open --feature F [--from-current | --retarget] [--candidate REV] [--contract PATH]",
				Description: `Starts a draft of the candidate commit (HEAD unless --candidate): the
draft records which commit it examines, and every observation the commit
it was made at. A feature that already has a draft of this candidate is
left as it is (exit 0); one whose draft examines another commit is refused
(CandidateMoved), since evidence belongs to the commit it was observed at.
--retarget moves the draft to this candidate: observations keep the commit
they were made at, and one made elsewhere is cited only after
examine observation carry (the brief then says where it was observed).
--from-current replaces the draft with one rebuilt from the feature's last
published examination: its cited texts as observations of the commit they
were made at, its verdicts kept for expectations the contract still has.

EXAMPLES
   git nwdes examine open --feature greeting
   git nwdes examine open --feature greeting --retarget
   git nwdes examine open --feature greeting --from-current
` + exitStatus(),
				Flags: append(targetFlags(),
					&cli.BoolFlag{Name: "from-current", Usage: "rebuild the draft from the last published examination"},
					&cli.BoolFlag{Name: "retarget", Usage: "move the draft to this candidate"}),
				Action: run(func(c *cli.Context, x *examine.Examiner) (*examine.Result, error) {
					if c.Bool("retarget") {
						if c.Bool("from-current") {
							return nil, usagef("give one of --from-current and --retarget")
						}
						return x.Retarget(c.Context, target(c))
					}
					return x.Open(c.Context, target(c), c.Bool("from-current"))
				}),
			},
			{
				Name:  "observation",
				Usage: "add, replace or remove an observation",
				Description: `EXAMPLES
   git nwdes examine observation add --feature greeting --text-file out.txt
   git nwdes examine observation set --feature greeting --id O2 --text "corrected"
   git nwdes examine observation remove --feature greeting --at 1
` + exitStatusAll(),
				Subcommands: []*cli.Command{
					{
						Name:      "add",
						Usage:     "record one observation and print its issued ID",
						UsageText: "git nwdes examine observation add --feature F (--text T | --text-file PATH)",
						Description: `Prints the issued ID (O1, O2, …): cite that ID, never an invented one.
The text is kept byte for byte (CRLF, trailing newlines, backticks, empty).

EXAMPLES
   git nwdes examine observation add --feature greeting --text "greet Ada prints Hello, Ada."
` + exitStatus(),
						Flags: append(targetFlags(), textFlags()...),
						Action: run(func(c *cli.Context, x *examine.Examiner) (*examine.Result, error) {
							text, err := s.readText(c)
							if err != nil {
								return nil, err
							}
							return x.AddObservation(c.Context, target(c), examine.SourceExaminer, text)
						}),
					},
					{
						Name:      "set",
						Usage:     "replace an observation's text, keeping its ID",
						UsageText: "git nwdes examine observation set --feature F (--id O<n> | --at N) (--text T | --text-file PATH)",
						Description: `EXAMPLES
   git nwdes examine observation set --feature greeting --id O1 --text "greet Ada prints Hello, Ada!"
` + exitStatus(),
						Flags: append(append(targetFlags(), selectorFlags()...), textFlags()...),
						Action: run(func(c *cli.Context, x *examine.Examiner) (*examine.Result, error) {
							sel, err := selector(c)
							if err != nil {
								return nil, err
							}
							text, err := s.readText(c)
							if err != nil {
								return nil, err
							}
							return x.SetObservation(c.Context, target(c), sel, text)
						}),
					},
					{
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
						Flags:  append(targetFlags(), selectorFlags()...),
						Action: run(bySelector((*examine.Examiner).CarryObservation)),
					},
					{
						Name:      "remove",
						Usage:     "remove an observation (citations of it stay and make close refuse)",
						UsageText: "git nwdes examine observation remove --feature F (--id O<n> | --at N)",
						Description: `Removed IDs are never issued again in this draft.

EXAMPLES
   git nwdes examine observation remove --feature greeting --id O2
` + exitStatus(),
						Flags:  append(targetFlags(), selectorFlags()...),
						Action: run(bySelector((*examine.Examiner).RemoveObservation)),
					},
				},
			},
			{
				Name:  "verdict",
				Usage: "set the verdict on an expectation",
				Subcommands: []*cli.Command{{
					Name:      "set",
					Usage:     "set (or replace) the verdict on one expectation",
					UsageText: "git nwdes examine verdict set --feature F --expectation E<n> --verdict met|unmet|not_examined [--class C] [--reason R] [--observation O<n> ...]",
					Description: `met and unmet cite at least one recorded observation; unmet also takes
--class (oracle_gap, product_violation, expectation_defect, observation_gap,
unstable); not_examined takes --reason and cites nothing.

EXAMPLES
   git nwdes examine verdict set --feature greeting --expectation E1 --verdict met --observation O1
   git nwdes examine verdict set --feature greeting --expectation E2 --verdict unmet --class product_violation --observation O2
   git nwdes examine verdict set --feature greeting --expectation E3 --verdict not_examined --reason "needs a network"
` + exitStatus(),
					Flags: append(targetFlags(),
						&cli.StringFlag{Name: "expectation", Usage: "the expectation `E<n>`", Required: true},
						&cli.StringFlag{Name: "verdict", Usage: "met, unmet or not_examined", Required: true},
						&cli.StringFlag{Name: "class", Usage: "why unmet: oracle_gap, product_violation, expectation_defect, observation_gap, unstable"},
						&cli.StringFlag{Name: "reason", Usage: "why not examined"},
						&cli.StringSliceFlag{Name: "observation", Usage: "cite observation `O<n>` (repeatable)"},
					),
					Action: run(func(c *cli.Context, x *examine.Examiner) (*examine.Result, error) {
						var obs []examine.ObservationID
						for _, o := range c.StringSlice("observation") {
							obs = append(obs, examine.ObservationID(o))
						}
						return x.SetVerdict(c.Context, target(c), examine.VerdictInput{
							Expectation: examine.ExpectationID(c.String("expectation")), Verdict: examine.Verdict(c.String("verdict")),
							Class: examine.Class(c.String("class")), Reason: c.String("reason"), Observations: obs,
						})
					}),
				}},
			},
			{
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
					asJSON := s.wantJSON(c)
					x, err := s.examiner()
					if err != nil {
						return err
					}
					if x.Sign, x.SignKey, err = s.signer(c); err != nil {
						return err
					}
					ex, notices, err := x.Close(c.Context, target(c), c.String("outcome"), c.String("diagnostic"))
					s.printNotices(notices)
					if err != nil {
						return err
					}
					// Only a close that published removes workspaces: a
					// refused one returned above, keeping them for the retry.
					swept, err := s.sweepWorkspaces(c, ex.Feature)
					if err != nil {
						// The examination is published: what could not be
						// swept is said, not turned into a failed close.
						s.printNotices([]string{"workspaces not removed: " + err.Error()})
						swept = &workspace.Swept{}
					}
					if asJSON {
						out := examinationJSON(ex).(map[string]any)
						out["workspaces"] = map[string][]string{"removed": nonNil(swept.Removed), "kept": nonNil(swept.Kept), "elsewhere": nonNil(swept.Elsewhere)}
						writeJSON(s.env.Stdout, out)
					} else {
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
					if ex.Outcome != examine.Accepted {
						return negative(string(ex.Outcome))
					}
					return nil
				},
			},
			{
				Name:      "show",
				Usage:     "show the draft and the last published examination",
				UsageText: "git nwdes examine show [--feature F] [--json]",
				Description: `EXAMPLES
   git nwdes examine show --feature greeting
   git nwdes examine show --feature greeting --json
` + exitStatus(),
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "feature", Usage: "the feature `NAME` (may be left out when HEAD has one contract)"},
					jsonFlag(),
				},
				Action: func(c *cli.Context) error {
					asJSON := s.wantJSON(c)
					x, err := s.examiner()
					if err != nil {
						return err
					}
					feature := c.String("feature")
					if feature == "" {
						cand, err := examine.Load(x.Store, examine.Target{})
						if err != nil {
							return err
						}
						feature = cand.Feature
					}
					c.Set("feature", feature)
					d, ex, err := x.Show(feature)
					if err != nil {
						return err
					}
					if d == nil && ex == nil {
						return refusal.New(refusal.MissingFact, fmt.Sprintf("open one: git nwdes examine open --feature %s", c.String("feature")),
							"feature %s has no draft and no published examination", c.String("feature"))
					}
					if asJSON {
						return writeJSON(s.env.Stdout, map[string]any{"draft": draftJSON(d), "published": examinationJSON(ex)})
					}
					s.withPager(false, func(w io.Writer) { s.renderShowTo(w, feature, d, ex) })
					return nil
				},
			},
		},
	}
	cmd.Subcommands = append(cmd.Subcommands, s.workspaceCmds()...)
	return cmd
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// renderShowTo prints the draft and the published examination for people.
// Every text from a record is escaped: one-line values with
// text.TerminalLine, observations quoted (%q escapes as TerminalLine
// does), and the brief, which keeps its lines, with text.Terminal.
func (s *session) renderShowTo(w io.Writer, feature string, d *examine.Draft, ex *examine.Examination) {
	s.renderDraftTo(w, feature, d)
	if ex == nil {
		fmt.Fprintln(w, "\nno published examination")
		return
	}
	fmt.Fprintf(w, "\npublished: %s\n\n%s", text.TerminalLine(ex.Path), text.Terminal(examine.RenderBrief(ex)))
}

func (s *session) renderDraftTo(w io.Writer, feature string, d *examine.Draft) {
	esc := text.TerminalLine
	if d == nil {
		fmt.Fprintf(w, "feature %s has no draft\n", esc(feature))
		return
	}
	at := ""
	if d.Candidate != "" {
		at = " at " + text.Short(d.Candidate)
	}
	fmt.Fprintf(w, "draft of %s%s: %s, %s\n", esc(feature), at,
		text.Plural(len(d.Observations), "observation", "observations"), text.Plural(len(d.Verdicts), "verdict", "verdicts"))
	for _, o := range d.Observations {
		where := ""
		if o.Commit != d.Candidate {
			// Made at another commit: cited only once carried over.
			where = " at " + text.Short(o.Commit)
			if o.Commit == "" {
				where = " at an unrecorded commit"
			}
			if o.Carried {
				where += ", carried over"
			}
		}
		fmt.Fprintf(w, "  %s (%s%s) %q\n", esc(string(o.ID)), esc(string(o.Source)), where, text.Truncate(string(o.Text), 70))
	}
	for _, v := range d.Verdicts {
		extra := string(v.Class)
		if v.Reason != "" {
			extra = "reason: " + v.Reason
		}
		var cites []string
		for _, o := range v.Observations {
			cites = append(cites, string(o))
		}
		fmt.Fprintf(w, "  %s %s %s cites [%s]\n", esc(string(v.Expectation)), esc(string(v.Verdict)), esc(extra), esc(strings.Join(cites, " ")))
	}
	if open := unjudged(d); len(open) > 0 {
		fmt.Fprintf(w, "  not yet judged: %s\n", esc(strings.Join(open, ", ")))
	}
}

// unjudged lists the expectations of the draft's contract that have no
// verdict yet.
func unjudged(d *examine.Draft) []string {
	has := map[examine.ExpectationID]bool{}
	for _, v := range d.Verdicts {
		has[v.Expectation] = true
	}
	out := []string{}
	for _, r := range d.Rows {
		if !has[r] {
			out = append(out, string(r))
		}
	}
	return out
}

type observationJSON struct {
	ID      examine.ObservationID `json:"id"`
	Source  examine.Source        `json:"source"`
	Commit  string                `json:"commit,omitempty"`
	Carried bool                  `json:"carried,omitempty"`
	Gate    *examine.GateCitation `json:"gate,omitempty"`
	Text    string                `json:"text"`
}

func draftJSON(d *examine.Draft) any {
	if d == nil {
		return nil
	}
	obs := []observationJSON{}
	for _, o := range d.Observations {
		obs = append(obs, observationJSON{o.ID, o.Source, o.Commit, o.Carried, o.Gate, string(o.Text)})
	}
	return map[string]any{"feature": d.Feature, "candidate": d.Candidate, "observations": obs, "verdicts": d.Verdicts,
		"rows": d.Rows, "unjudged": unjudged(d)}
}

func examinationJSON(ex *examine.Examination) any {
	if ex == nil {
		return nil
	}
	texts := []map[string]string{}
	for _, t := range ex.Texts {
		texts = append(texts, map[string]string{"source": string(t.Source), "text": string(t.Text)})
	}
	out := map[string]any{
		"feature": ex.Feature, "candidate": ex.Candidate, "contract_path": ex.ContractPath,
		"contract_blob": ex.ContractBlob, "outcome": ex.Outcome, "diagnostic": ex.Diagnostic,
		"closed_at": ex.ClosedAt, "rows": ex.Rows, "texts": texts, "record": ex.Path,
	}
	if s := examine.SignedBy(ex); s != "" {
		out["signature"] = s
	}
	return out
}

// bySelector adapts an examiner verb that acts on one observation, chosen
// by --id or --at, to a command action.
func bySelector(verb func(*examine.Examiner, context.Context, examine.Target, examine.Selector) (*examine.Result, error)) func(*cli.Context, *examine.Examiner) (*examine.Result, error) {
	return func(c *cli.Context, x *examine.Examiner) (*examine.Result, error) {
		sel, err := selector(c)
		if err != nil {
			return nil, err
		}
		return verb(x, c.Context, target(c), sel)
	}
}
