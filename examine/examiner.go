package examine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/nwdes/nwdes/gitstore/oid"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/refusal"
	"github.com/nwdes/nwdes/trust"
)

// DefaultContractPath is where a feature's contract is committed unless
// another path is named.
func DefaultContractPath(feature string) string { return ".nwave/features/" + feature + ".md" }

// Examiner records examinations in a store.
type Examiner struct {
	Store Store
	// Now stamps published examinations.
	Now func() time.Time
	// Sign, when set, signs each examination Close publishes (its
	// record's trust.Message); nil publishes unsigned ones. SignKey is
	// the fingerprint of the key Sign signs with.
	Sign    func(message []byte) ([]byte, error)
	SignKey string
	// DisplayRef, when set, is a notes ref plain git log and forges read
	// (refs/notes/commits): every close also writes the brief there, as
	// one block of the note (SyncDisplay).
	DisplayRef gitstore.RefName
	// Gates is the mode closes record (nwdes.gates): GatesBinding, the
	// default, refuses to publish a met verdict whose oracle is not MET at
	// the candidate; GatesAdvisory publishes it and records the mode.
	Gates GatesMode
	// By, when set, is the swarm worker that examines: every close
	// records it (ExaminedBy), and the judgment holds it to the rule that
	// nobody certifies their own work.
	By *ExaminedBy
	// Drafts is where the drafts are kept: DraftsRef when empty, or one
	// ref of the ReplayDrafts family, private to one replay of a worker's
	// journal (no draft of this clone's person is read or touched).
	Drafts gitstore.RefName
}

func (x *Examiner) drafts() gitstore.RefName {
	if x.Drafts != "" {
		return x.Drafts
	}
	return DraftsRef
}

// signedAlike reports whether prev carries the signature a close would
// give it now: none asked for, or a valid one by the same key.
func (x *Examiner) signedAlike(prev *Examination) bool {
	if x.Sign == nil {
		return true
	}
	pub, err := prev.Signer()
	return err == nil && pub != nil && trust.Fingerprint(pub) == x.SignKey
}

// Target names what a verb works on: a feature, the candidate commit (a
// revision, HEAD when empty) and the contract path (the default when empty).
type Target struct {
	Feature   string
	Candidate string
	Contract  string
}

// Candidate is a resolved target: the commit and the contract read from it.
type Candidate struct {
	Feature      string
	Commit       oid.ID
	ContractPath string
	ContractBlob oid.ID
	Contract     *Contract
}

// Load resolves the target's candidate commit and parses the contract
// committed there (never the work tree). An absent contract is MissingFact;
// a malformed one is ConfigurationMalformed.
func Load(st gitstore.CommitReader, t Target) (*Candidate, error) {
	commit, err := st.Resolve(t.Candidate)
	if err != nil {
		return nil, err
	}
	// Every verb reads contracts as status and the hook do: the same
	// look-alike, symlink and name checks, the same answer.
	features, err := Features(st, commit)
	if err != nil {
		return nil, err
	}
	if t.Feature == "" && t.Contract == "" {
		// The feature may be left out when the commit has one contract.
		switch len(features) {
		case 1:
			t.Feature = features[0]
		case 0:
			return nil, refusal.New(refusal.MissingFact, "commit a contract at .nwave/features/<feature>.md",
				"%s has no feature contract", commit.Short())
		default:
			return nil, refusal.New(refusal.MissingFact, "name one with --feature",
				"%s has %d feature contracts (%s): which one?", commit.Short(), len(features), strings.Join(features, ", "))
		}
	}
	if err := ValidFeature(t.Feature); err != nil {
		return nil, err
	}
	path := t.Contract
	if path == "" {
		path = DefaultContractPath(t.Feature)
	}
	f, err := st.ReadFile(commit, path)
	if errors.Is(err, gitstore.ErrNotFound) {
		remedy := fmt.Sprintf("commit the contract at %s, or name it with --contract PATH", path)
		if near := text.Nearest(t.Feature, features); near != "" && t.Contract == "" {
			remedy = fmt.Sprintf("did you mean --feature %s? (git nwdes features lists them)", near)
		}
		return nil, refusal.New(refusal.MissingFact, remedy,
			"feature %s has no contract %s at candidate %s", t.Feature, path, commit.Short())
	}
	if err != nil {
		return nil, err
	}
	if f.Mode != gitstore.ModeFile && f.Mode != gitstore.ModeExec {
		return nil, refusal.New(refusal.ConfigurationMalformed, "commit the contract as a plain file",
			"%s at %s is not a plain committed file (mode %o): a contract must be one", path, commit.Short(), f.Mode)
	}
	c, err := ParseContract(path, f.Data)
	if err != nil {
		return nil, err
	}
	return &Candidate{Feature: t.Feature, Commit: commit, ContractPath: path, ContractBlob: f.Blob, Contract: c}, nil
}

// ErrNoDraft is what the MissingFact refusal for a feature without a draft
// unwraps to, for callers that must tell it from other missing facts.
var ErrNoDraft = errors.New("no draft")

// Result is what a recording verb did, for the CLI to print.
type Result struct {
	// Message is the verb's main output line (an issued ID, "opened", …).
	Message string
	// Notices are withdrawals and other things the user must know.
	Notices []string
	// Unchanged is set when the verb found nothing to do.
	Unchanged bool
}

func (x *Examiner) now() time.Time {
	if x.Now != nil {
		return x.Now()
	}
	return time.Now()
}

// edit loads the target, then runs fn on the feature's draft inside one
// compare-and-swap update, after withdrawing verdicts of expectations the
// contract dropped. fn may run again after a conflict.
func (x *Examiner) edit(ctx context.Context, t Target, msg string, needDraft bool, fn func(*Candidate, gitstore.Edit, **Draft, *Result) error) (*Result, error) {
	cand, err := Load(x.Store, t)
	if err != nil {
		return nil, err
	}
	t.Feature = cand.Feature // when it was left out
	var res *Result
	_, err = x.Store.Change(ctx, x.drafts(), msg+" "+t.Feature, func(tx gitstore.Edit) error {
		res = &Result{}
		d, err := x.loadDraft(tx, t.Feature)
		if err != nil {
			return err
		}
		if d == nil && needDraft {
			return refusal.New(refusal.MissingFact, fmt.Sprintf("open one: git nwdes examine open --feature %s", t.Feature),
				"feature %s has no draft examination", t.Feature).Wrap(ErrNoDraft)
		}
		if d != nil {
			res.Notices = d.syncRows(cand.Contract)
		}
		if err := fn(cand, tx, &d, res); err != nil {
			return err
		}
		if d != nil {
			return saveDraft(tx, d)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// Open starts a draft for the feature. On a feature that already has one it
// changes nothing and says so. With fromCurrent it replaces the draft with
// one rebuilt from the feature's last published examination.
func (x *Examiner) Open(ctx context.Context, t Target, fromCurrent bool) (*Result, error) {
	return x.edit(ctx, t, "open", false, func(c *Candidate, tx gitstore.Edit, d **Draft, res *Result) error {
		if !fromCurrent {
			if *d != nil {
				if err := (*d).boundTo(c); err != nil {
					return err
				}
				res.Message, res.Unchanged = fmt.Sprintf("feature %s already has a draft; nothing changed", c.Feature), true
				if len(res.Notices) > 0 {
					res.Message, res.Unchanged = fmt.Sprintf("feature %s already has a draft; withdrew the verdicts the contract no longer asks for", c.Feature), false
				}
				return nil
			}
			*d = newDraft(c.Feature, c.Commit.String(), c.Contract.IDs())
			res.Message = fmt.Sprintf("opened a draft examination of %s at %s", c.Feature, c.Commit.Short())
			return nil
		}
		pub, err := x.Store.Records(Ref)
		if err != nil {
			return err
		}
		ex, err := latestExamination(pub, c.Feature)
		if err != nil {
			return err
		}
		if ex == nil {
			return refusal.New(refusal.MissingFact, "close an examination first, or open without --from-current",
				"feature %s has no published examination to rebuild from", c.Feature)
		}
		if *d, err = rebuild(ex, c); err != nil {
			return err
		}
		res.Message = fmt.Sprintf("rebuilt the draft of %s from the examination of %s (%d observations)",
			c.Feature, ex.Candidate[:12], len((*d).Observations))
		return nil
	})
}

// rebuild makes a draft from a published examination: cited texts in
// first-citation order over E IDs in numeric order, identical texts
// coalesced, fresh O IDs, verdicts kept for E IDs the contract still has.
// The rebuilt draft replaces the old one whole, every observation record
// with it.
func rebuild(ex *Examination, cand *Candidate) (*Draft, error) {
	c := cand.Contract
	d := newDraft(ex.Feature, cand.Commit.String(), c.IDs())
	rows := append([]PublishedRow(nil), ex.Rows...)
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Expectation.Num() < rows[j].Expectation.Num() })
	byText := map[string]ObservationID{}
	for _, r := range rows {
		var cites []ObservationID
		for _, ti := range r.Cites {
			t := ex.Texts[ti]
			// Each text keeps the commit it was observed at: one from the
			// old candidate must be carried over before it is cited again.
			at := t.Commit
			if at == "" {
				at = ex.Candidate
			}
			key := string(t.Source) + "\x00" + at + "\x00" + string(t.Text)
			id, ok := byText[key]
			if !ok {
				var err error
				if id, err = d.addAs(t.ID, t.Source, at, t.Text); err != nil {
					return nil, err
				}
				byText[key] = id
			}
			cites = append(cites, id)
		}
		if _, ok := c.Criterion(r.Expectation); ok {
			d.Verdicts = append(d.Verdicts, VerdictRow{Expectation: r.Expectation, Verdict: r.Verdict, Class: r.Class, Reason: r.Reason, Observations: cites})
		}
	}
	return d, nil
}

// AddObservation records one observation, text kept byte for byte, and
// returns its issued ID in Result.Message.
func (x *Examiner) AddObservation(ctx context.Context, t Target, src Source, text []byte) (*Result, error) {
	return x.edit(ctx, t, "observe", true, func(c *Candidate, _ gitstore.Edit, d **Draft, res *Result) error {
		if err := (*d).boundTo(c); err != nil {
			return err
		}
		o, err := (*d).add(src, c.Commit.String(), text)
		if err != nil {
			return err
		}
		res.Message = string(o.ID)
		return nil
	})
}

// addGateObservation records a gate run's evidence as an observation.
func (x *Examiner) addGateObservation(ctx context.Context, t Target, ev *Evidence) (*Result, error) {
	return x.edit(ctx, t, "observe", true, func(c *Candidate, _ gitstore.Edit, d **Draft, res *Result) error {
		if err := (*d).boundTo(c); err != nil {
			return err
		}
		o, err := (*d).add(SourceGate, c.Commit.String(), ev.ObservationText())
		if err != nil {
			return err
		}
		o.Gate = &GateCitation{Expectation: ev.Expectation, State: ev.State, Evidence: ev.Location()}
		res.Message = string(o.ID)
		return nil
	})
}

// Retarget binds the feature's draft to the candidate: the examination
// from now on is of this commit. Observations keep the commit they were
// made at; one made elsewhere is cited only once carried over.
func (x *Examiner) Retarget(ctx context.Context, t Target) (*Result, error) {
	return x.edit(ctx, t, "retarget", true, func(c *Candidate, _ gitstore.Edit, d **Draft, res *Result) error {
		old := (*d).Candidate
		if old == c.Commit.String() {
			res.Message, res.Unchanged = fmt.Sprintf("the draft of %s already examines %s", c.Feature, old[:12]), true
			return nil
		}
		// How many observations were made elsewhere is counted over all.
		if err := (*d).readAll(); err != nil {
			return err
		}
		(*d).Candidate = c.Commit.String()
		elsewhere := 0
		for _, o := range (*d).Observations {
			if o.Commit != c.Commit.String() && !o.Carried {
				elsewhere++
			}
		}
		res.Message = fmt.Sprintf("the draft of %s now examines %s", c.Feature, c.Commit.Short())
		if elsewhere > 0 {
			res.Notices = append(res.Notices, fmt.Sprintf("%s made at another commit: cite them only after examine observation carry, or observe again", text.Plural(elsewhere, "observation was", "observations were")))
		}
		return nil
	})
}

// CarryObservation carries an observation the examiner made at another
// commit over to the draft's candidate, so that it may be cited; the brief
// says where it was observed. Gate evidence is never carried: it belongs
// to the commit it ran on.
func (x *Examiner) CarryObservation(ctx context.Context, t Target, sel Selector) (*Result, error) {
	return x.edit(ctx, t, "observation carry", true, func(c *Candidate, _ gitstore.Edit, d **Draft, res *Result) error {
		if err := (*d).boundTo(c); err != nil {
			return err
		}
		o, err := (*d).selectObservation(sel)
		if err != nil {
			return err
		}
		switch {
		case o.Source != SourceExaminer:
			return refusal.New(refusal.RoleNotAccepted, "run git nwdes gate run at this candidate for fresh evidence",
				"examine: %s is gate evidence of %s; it belongs to that commit and cannot be carried over", o.ID, shortOr(o.Commit))
		case o.Commit == c.Commit.String():
			res.Message, res.Unchanged = fmt.Sprintf("%s was made at this candidate; nothing to carry", o.ID), true
			return nil
		}
		o.Carried = true
		(*d).changed(o.ID)
		res.Message = fmt.Sprintf("%s carried over from %s", o.ID, shortOr(o.Commit))
		return nil
	})
}

func shortOr(commit string) string {
	if commit == "" {
		return "an unrecorded commit"
	}
	return commit[:12]
}

// SetObservation replaces an observation's text; its ID does not change.
func (x *Examiner) SetObservation(ctx context.Context, t Target, sel Selector, text []byte) (*Result, error) {
	return x.edit(ctx, t, "observation set", true, func(c *Candidate, _ gitstore.Edit, d **Draft, res *Result) error {
		if err := (*d).boundTo(c); err != nil {
			return err
		}
		o, err := (*d).selectObservation(sel)
		if err != nil {
			return err
		}
		if o.Source != SourceExaminer {
			return refusal.New(refusal.RoleNotAccepted,
				"record what you observed as a new observation with observation add; remove this one if it should not be cited",
				"examine: %s was recorded by a %s run and is evidence as recorded; the examiner cannot rewrite it", o.ID, o.Source)
		}
		// The new text is observed now, at this candidate.
		o.Text = text
		o.Commit, o.Carried = c.Commit.String(), false
		(*d).changed(o.ID)
		res.Message = string(o.ID)
		return nil
	})
}

// RemoveObservation removes an observation. Citations of it stay, so a
// close refuses them as dangling rather than silently changing a judgment.
func (x *Examiner) RemoveObservation(ctx context.Context, t Target, sel Selector) (*Result, error) {
	return x.edit(ctx, t, "observation remove", true, func(_ *Candidate, _ gitstore.Edit, d **Draft, res *Result) error {
		o, err := (*d).selectObservation(sel)
		if err != nil {
			return err
		}
		res.Message = string(o.ID)
		(*d).remove(o.ID)
		return nil
	})
}

// VerdictInput is what `verdict set` asks for.
type VerdictInput struct {
	Expectation  ExpectationID
	Verdict      Verdict
	Class        Class
	Reason       string
	Observations []ObservationID
}

func (in VerdictInput) check() error {
	switch in.Verdict {
	case Met, Unmet:
		if len(in.Observations) == 0 {
			return refusal.New(refusal.UncitedVerdict,
				"record what you observed with observation add, then cite its ID with --observation O<n>",
				"a %s verdict on %s cites no observation", in.Verdict, in.Expectation)
		}
		if in.Reason != "" {
			return refusal.New(refusal.PartInvalid, "drop --reason; a met or unmet verdict cites observations instead", "--reason is only for not_examined")
		}
		if in.Verdict == Unmet && !validClass(in.Class) {
			return refusal.New(refusal.PartInvalid, "pass --class with one of: "+classList(),
				"an unmet verdict on %s needs a class (got %q)", in.Expectation, in.Class)
		}
		if in.Verdict == Met && in.Class != "" {
			return refusal.New(refusal.PartInvalid, "drop --class; only unmet verdicts carry a class", "a met verdict carries no class")
		}
		for _, o := range in.Observations {
			if !obsID.MatchString(string(o)) {
				return refusal.New(refusal.PartInvalid, "cite the O<n> ID that observation add printed", "%q is not an observation ID", o)
			}
		}
	case NotExamined:
		if strings.TrimSpace(in.Reason) == "" {
			return refusal.New(refusal.PartInvalid, "say why with --reason TEXT", "a not_examined verdict on %s needs a reason", in.Expectation)
		}
		if len(in.Observations) > 0 || in.Class != "" {
			return refusal.New(refusal.PartInvalid, "drop --observation and --class; not_examined carries a reason instead",
				"a not_examined verdict cites nothing")
		}
	default:
		return refusal.New(refusal.PartInvalid, "use --verdict met, unmet or not_examined", "unknown verdict %q", in.Verdict)
	}
	return nil
}

// SetVerdict sets (or replaces) the verdict on one expectation of the
// current contract.
func (x *Examiner) SetVerdict(ctx context.Context, t Target, in VerdictInput) (*Result, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	return x.edit(ctx, t, "verdict", true, func(c *Candidate, _ gitstore.Edit, d **Draft, res *Result) error {
		if err := (*d).boundTo(c); err != nil {
			return err
		}
		// Citations are checked as they are written: an ID not issued yet
		// would otherwise bind to whatever text later receives it.
		row := VerdictRow{Expectation: in.Expectation, Verdict: in.Verdict, Observations: in.Observations}
		if err := (*d).checkCitations(c, row); err != nil {
			return err
		}
		if _, ok := c.Contract.Criterion(in.Expectation); !ok {
			return refusal.New(refusal.MissingFact, fmt.Sprintf("use one of the contract's IDs: %s", joinIDs(c.Contract.IDs())),
				"the contract %s has no expectation %s", c.ContractPath, in.Expectation)
		}
		row = VerdictRow{Expectation: in.Expectation, Verdict: in.Verdict, Class: in.Class, Reason: in.Reason, Observations: in.Observations}
		if i, ok := (*d).verdict(in.Expectation); ok {
			(*d).Verdicts[i] = row
		} else {
			(*d).Verdicts = append((*d).Verdicts, row)
		}
		res.Message = fmt.Sprintf("%s %s", in.Expectation, in.Verdict)
		return nil
	})
}

func joinIDs(ids []ExpectationID) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = string(id)
	}
	return strings.Join(s, ", ")
}

// Close checks the draft against the whole current contract and publishes
// the examination with the outcome its verdicts derive. outcome must be
// "accepted" (the examiner's role); the draft is kept.
//
// The examination records, for each met expectation whose oracle the
// gates ran at a base, whether that oracle was proven or vacuous, and the
// brief says so; whether that is enough is the judging side's rule
// (nwdes.gates.proof), never the examiner's.
func (x *Examiner) Close(ctx context.Context, t Target, outcome, diagnostic string) (*Examination, []string, error) {
	// The draft is checked and the examination assembled from one snapshot
	// of the (local) draft; publishing is one compare-and-swap update of
	// the shared examinations ref.
	var ex *Examination
	res, err := x.edit(ctx, t, "close", true, func(c *Candidate, _ gitstore.Edit, d **Draft, res *Result) error {
		if err := (*d).boundTo(c); err != nil {
			return err
		}
		var err error
		ex, err = x.assemble(c, *d, diagnostic)
		if err != nil {
			return err
		}
		if outcome != string(Accepted) {
			return refusal.New(refusal.RoleNotAccepted,
				"close with --outcome accepted; nwdes publishes the outcome the verdicts derive, so change a verdict to change it",
				"examine: --outcome %q is not the examiner's to give; the verdicts derive %s", outcome, ex.Outcome)
		}
		ex.Gates = x.Gates
		// The rule the judgment applies, applied before publishing: an
		// acceptance the contract and its oracles do not back would never
		// hold where gates bind.
		rep, err := GateStatus(x.Store, Target{Feature: c.Feature, Candidate: c.Commit.String(), Contract: t.Contract})
		if err != nil {
			return err
		}
		if name, problem := Binding(ex, c.Contract, rep, x.Gates == GatesAdvisory, ProofOptional); name != "" {
			return refusal.New(name, "run the oracle (git nwdes gate run) until it is MET at this commit, or judge the expectation unmet; gates are advice only where git config nwdes.gates=advisory says so",
				"examine close: %s", problem)
		}
		recordProof(ex, rep)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	unchanged := false
	_, err = x.Store.Change(ctx, Ref, "close "+ex.Feature, func(tx gitstore.Edit) error {
		// The brief is rendered from every feature's examination of this
		// commit: if one cannot be read, refuse now, before anything is
		// published, rather than after.
		if err := readableAt(tx, ex.Candidate); err != nil {
			return err
		}
		prev, err := latestAt(tx, ex.Candidate, ex.Feature)
		if err != nil {
			return err
		}
		if prev != nil && sameJudgment(prev, ex) && x.signedAlike(prev) {
			// Closing again with nothing changed publishes nothing new
			// (a signature asked for where there was none, or by
			// another key, is a change).
			ex, unchanged = prev, true
			return nil
		}
		return publish(tx, ex, x.Sign)
	})
	if err != nil {
		return nil, nil, err
	}
	if unchanged {
		return ex, append(res.Notices, fmt.Sprintf("nothing changed since the examination closed at %s: nothing new published", ex.ClosedAt)), nil
	}
	if err := x.writeBrief(ctx, ex.Candidate); err != nil {
		return ex, res.Notices, fmt.Errorf("examination published, but the brief note was not written: %w (closing again rewrites it)", err)
	}
	if x.DisplayRef != "" {
		_, left, err := SyncDisplay(ctx, x.Store, x.DisplayRef, []oid.ID{oid.MustParse(ex.Candidate)})
		if err != nil {
			res.Notices = append(res.Notices, fmt.Sprintf("the brief was not written to %s: %v (git nwdes notes sync writes it)", x.DisplayRef, err))
		}
		for _, l := range left {
			res.Notices = append(res.Notices, fmt.Sprintf("the brief was not written to %s: the note on %s (fix its nwdes marker lines, or remove the block by hand)", x.DisplayRef, l))
		}
	}
	if ex.Outcome == Indeterminate {
		var open []string
		for _, r := range ex.Rows {
			if r.Verdict == NotExamined {
				open = append(open, fmt.Sprintf("%s (%s)", r.Expectation, text.OneLine(r.Reason)))
			}
		}
		res.Notices = append(res.Notices, "indeterminate: not examined: "+strings.Join(open, ", ")+"; judge them met or unmet and close again")
	}
	return ex, res.Notices, nil
}

// assemble validates a draft against the contract and builds the
// examination a close would publish.
func (x *Examiner) assemble(c *Candidate, d *Draft, diagnostic string) (*Examination, error) {
	var missing []string
	for _, id := range c.Contract.IDs() {
		if _, ok := d.verdict(id); !ok {
			missing = append(missing, string(id))
		}
	}
	if len(missing) > 0 {
		return nil, refusal.New(refusal.PartInvalid,
			"record observations and set a verdict on every expectation (git nwdes examine verdict set), then close again",
			"%s has no verdict on %s; close needs the whole current set", c.Feature, strings.Join(missing, ", "))
	}
	for _, v := range d.Verdicts {
		// verdict set checked these, but a draft can also arrive from
		// another clone or be rebuilt from an old examination: close
		// checks them again rather than publish an uncited verdict.
		in := VerdictInput{Expectation: v.Expectation, Verdict: v.Verdict, Class: v.Class, Reason: v.Reason, Observations: v.Observations}
		if err := in.check(); err != nil {
			return nil, err
		}
	}
	var dangling []string
	for _, v := range d.Verdicts {
		for _, id := range v.Observations {
			o, err := d.observation(id)
			if err != nil {
				return nil, err
			}
			if o == nil {
				dangling = append(dangling, fmt.Sprintf("%s cites %s", v.Expectation, id))
			}
		}
	}
	if len(dangling) > 0 {
		return nil, refusal.New(refusal.DanglingReference,
			"record the observation and cite its printed ID, or set the verdict again citing recorded observations",
			"%s: %s, which is not recorded in the draft", c.Feature, strings.Join(dangling, "; "))
	}
	for _, v := range d.Verdicts {
		if err := d.checkCitations(c, v); err != nil {
			return nil, err
		}
	}
	if strings.TrimSpace(diagnostic) == "" {
		return nil, refusal.New(refusal.PartInvalid, "say in --diagnostic what the examination found", "close needs a diagnostic")
	}
	ex := &Examination{
		Feature: c.Feature, Candidate: c.Commit.String(), ContractPath: c.ContractPath,
		ContractBlob: c.ContractBlob.String(), Diagnostic: diagnostic,
		ClosedAt: x.now().UTC().Format(closedLayout), By: x.By,
	}
	textIndex := map[string]int{}
	var verdicts []Verdict
	for _, cr := range c.Contract.Criteria {
		i, _ := d.verdict(cr.ID)
		v := d.Verdicts[i]
		row := PublishedRow{Expectation: cr.ID, Criterion: cr.Text, Verdict: v.Verdict, Class: v.Class, Reason: v.Reason, Cites: []int{}}
		for _, id := range v.Observations {
			obs, err := d.observation(id)
			if err != nil {
				return nil, err
			}
			carried := ""
			if obs.Commit != ex.Candidate {
				carried = obs.Commit
			}
			key := string(obs.Source) + "\x00" + carried + "\x00" + string(obs.Text)
			ti, ok := textIndex[key]
			if !ok {
				ti = len(ex.Texts)
				textIndex[key] = ti
				ex.Texts = append(ex.Texts, CitedText{ID: obs.ID, Source: obs.Source, Commit: carried, Text: obs.Text})
			}
			row.Cites = append(row.Cites, ti)
		}
		ex.Rows = append(ex.Rows, row)
		verdicts = append(verdicts, v.Verdict)
	}
	ex.Outcome = DeriveOutcome(verdicts)
	seen, err := projectionSeen(x.Store, c.Feature, ex.Candidate)
	if err != nil {
		return nil, err
	}
	ex.Projection = seen
	return ex, nil
}

// Show returns the feature's draft and its last published examination
// (either may be nil).
func (x *Examiner) Show(feature string) (*Draft, *Examination, error) {
	if err := ValidFeature(feature); err != nil {
		return nil, nil, err
	}
	dtx, err := x.Store.Records(x.drafts())
	if err != nil {
		return nil, nil, err
	}
	d, err := x.loadDraft(dtx, feature)
	if err != nil {
		return nil, nil, err
	}
	if d != nil {
		if err := d.readAll(); err != nil {
			return nil, nil, err
		}
	}
	tx, err := x.Store.Records(Ref)
	if err != nil {
		return nil, nil, err
	}
	ex, err := latestExamination(tx, feature)
	if err != nil {
		return nil, nil, err
	}
	return d, ex, nil
}

func contentID(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:6])
}

// recordProof copies into each met row the proof of its oracle's evidence
// at the candidate, where the gates ran it at a base.
func recordProof(ex *Examination, rep *GateReport) {
	proof := map[ExpectationID]*Evidence{}
	for _, r := range rep.Rows {
		if r.Evidence != nil && r.Evidence.Base != nil && r.Proof != "" {
			proof[r.Expectation] = r.Evidence
		}
	}
	for i := range ex.Rows {
		if ev := proof[ex.Rows[i].Expectation]; ev != nil && ex.Rows[i].Verdict == Met {
			ex.Rows[i].Proof, ex.Rows[i].ProofBase = ev.Proof(), ev.Base.Commit
		}
	}
}
