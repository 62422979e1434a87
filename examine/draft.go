package examine

import (
	"errors"
	"fmt"
	"sort"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/refusal"
)

// Observation is one recorded piece of evidence in a draft.
type Observation struct {
	ID     ObservationID `json:"id"`
	Source Source        `json:"source"`
	// Commit is the candidate the observation was made at (draft v2).
	Commit string `json:"commit,omitempty"`
	// Carried is set when the examiner carried an observation made at
	// another commit over to the draft's candidate, explicitly.
	Carried bool `json:"carried,omitempty"`
	// Gate is what a gate observation records: its evidence and state.
	Gate *GateCitation `json:"gate,omitempty"`
	Text []byte        `json:"-"`
}

// GateCitation is the evidence a gate observation stands for.
type GateCitation struct {
	Expectation ExpectationID `json:"expectation"`
	State       GateState     `json:"state"`
	Evidence    string        `json:"evidence"`
}

// VerdictRow is the verdict set for one expectation.
type VerdictRow struct {
	Expectation  ExpectationID   `json:"expectation"`
	Verdict      Verdict         `json:"verdict"`
	Class        Class           `json:"class,omitempty"`
	Reason       string          `json:"reason,omitempty"`
	Observations []ObservationID `json:"observations,omitempty"`
}

// Draft is a feature's working examination. It is a record like any other:
// it survives processes and travels between clones. Observation texts are
// stored as payloads, not in the JSON, so that they are kept byte for byte
// whatever they hold.
type Draft struct {
	Feature string `json:"feature"`
	// Candidate is the commit the draft examines (draft v2; empty in v1,
	// which must be bound with examine open --retarget before it is used).
	Candidate    string          `json:"candidate,omitempty"`
	NextID       int             `json:"next_id"`
	Observations []Observation   `json:"observations"`
	Verdicts     []VerdictRow    `json:"verdicts"`
	Rows         []ExpectationID `json:"rows"`
}

func draftPath(feature string) string { return "drafts/" + feature }

// loadDraft reads the feature's draft from tx, a view of x's drafts ref.
// A replay's private ref has only its own drafts; DraftsRef also reads
// loadDraft's legacy one.
func (x *Examiner) loadDraft(tx gitstore.View, feature string) (*Draft, error) {
	if x.drafts() != DraftsRef {
		rec, err := tx.Get(draftPath(feature))
		if errors.Is(err, gitstore.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return draftFrom(draftPath(feature), rec)
	}
	return loadDraft(x.Store, tx, feature)
}

// loadDraft reads the feature's draft from tx, a view of DraftsRef. A draft
// an earlier nwdes kept in Ref (where it travelled between clones) is read
// from there when this clone has none of its own yet; the next save keeps
// it locally.
func loadDraft(st Store, tx gitstore.View, feature string) (*Draft, error) {
	rec, err := tx.Get(draftPath(feature))
	if errors.Is(err, gitstore.ErrNotFound) {
		legacy, err := st.Records(Ref)
		if err != nil {
			return nil, err
		}
		rec, err = legacy.Get(draftPath(feature))
		if errors.Is(err, gitstore.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return draftFrom(draftPath(feature), rec)
	}
	if err != nil {
		return nil, err
	}
	return draftFrom(draftPath(feature), rec)
}

// draftFrom decodes and validates a draft record read at path.
func draftFrom(path string, rec *gitstore.Record) (*Draft, error) {
	if rec.Kind != KindDraft || (rec.V != 1 && rec.V != 2) {
		return nil, malformed(path, "a %s v%d record, not a draft", rec.Kind, rec.V)
	}
	d := &Draft{}
	if err := rec.Decode(d); err != nil {
		return nil, err
	}
	if err := d.validate(path); err != nil {
		return nil, err
	}
	for i := range d.Observations {
		t, ok := rec.Payloads[string(d.Observations[i].ID)]
		if !ok {
			return nil, malformed(path, "the text of %s is missing", d.Observations[i].ID)
		}
		d.Observations[i].Text = t
	}
	return d, nil
}

func saveDraft(tx gitstore.Edit, d *Draft) error {
	sort.Slice(d.Verdicts, func(i, j int) bool { return d.Verdicts[i].Expectation.Num() < d.Verdicts[j].Expectation.Num() })
	if d.Observations == nil {
		d.Observations = []Observation{}
	}
	if d.Verdicts == nil {
		d.Verdicts = []VerdictRow{}
	}
	rec, err := gitstore.NewRecord(KindDraft, 2, d)
	if err != nil {
		return err
	}
	rec.Payloads = map[string][]byte{}
	for _, o := range d.Observations {
		rec.Payloads[string(o.ID)] = o.Text
	}
	return tx.Put(draftPath(d.Feature), rec)
}

func (d *Draft) observation(id ObservationID) (int, bool) {
	for i, o := range d.Observations {
		if o.ID == id {
			return i, true
		}
	}
	return -1, false
}

func (d *Draft) verdict(id ExpectationID) (int, bool) {
	for i, v := range d.Verdicts {
		if v.Expectation == id {
			return i, true
		}
	}
	return -1, false
}

// addAs records an observation under the ID it had before (a draft rebuilt
// from a published examination keeps the IDs the examiner cited), or
// under a fresh one when it has none or that one is taken; the next fresh
// ID is always above every ID issued.
func (d *Draft) addAs(id ObservationID, src Source, commit string, text []byte) ObservationID {
	n, ok := observationNumber(id)
	if _, taken := d.observation(id); !ok || taken {
		return d.add(src, commit, text)
	}
	d.Observations = append(d.Observations, Observation{ID: id, Source: src, Commit: commit, Text: text})
	if n >= d.NextID {
		d.NextID = n + 1
	}
	return id
}

// add records a new observation made at commit and returns its issued ID.
func (d *Draft) add(src Source, commit string, text []byte) ObservationID {
	if d.NextID < 1 {
		d.NextID = 1
	}
	id := observationID(d.NextID)
	d.NextID++
	d.Observations = append(d.Observations, Observation{ID: id, Source: src, Commit: commit, Text: text})
	return id
}

// Selector picks one observation by ID or by 1-based position.
type Selector struct {
	ID ObservationID
	At int
}

func (d *Draft) selectObservation(sel Selector) (int, error) {
	if sel.ID != "" {
		if i, ok := d.observation(sel.ID); ok {
			return i, nil
		}
		return -1, refusal.New(refusal.MissingFact, "list the draft's observations with git nwdes examine show",
			"draft of %s has no observation %s", d.Feature, sel.ID)
	}
	if sel.At < 1 || sel.At > len(d.Observations) {
		return -1, refusal.New(refusal.MissingFact, "list the draft's observations with git nwdes examine show",
			"draft of %s has %d observations; there is none at position %d", d.Feature, len(d.Observations), sel.At)
	}
	return sel.At - 1, nil
}

// syncRows withdraws verdicts for expectations the contract no longer has,
// and returns a notice for each, naming the row as the draft last saw it.
// Verdicts of expectations still present are kept, whatever else changed.
func (d *Draft) syncRows(c *Contract) []string {
	present := map[ExpectationID]bool{}
	for _, id := range c.IDs() {
		present[id] = true
	}
	var notices []string
	kept := d.Verdicts[:0]
	for _, v := range d.Verdicts {
		if present[v.Expectation] {
			kept = append(kept, v)
			continue
		}
		row := -1
		for i, id := range d.Rows {
			if id == v.Expectation {
				row = i
			}
		}
		where := fmt.Sprintf("expectations.rows[%d] (%s)", row, v.Expectation)
		if row < 0 {
			where = fmt.Sprintf("expectations (%s)", v.Expectation)
		}
		notices = append(notices, fmt.Sprintf("examination.%s withdrawn: %s was withdrawn.", v.Expectation, where))
	}
	d.Verdicts = kept
	d.Rows = c.IDs()
	return notices
}

// boundTo refuses to work on a draft that examines another commit than
// the candidate: evidence belongs to the commit it was observed at.
func (d *Draft) boundTo(c *Candidate) error {
	here := c.Commit.String()
	switch d.Candidate {
	case here:
		return nil
	case "":
		return refusal.New(refusal.CandidateMoved,
			fmt.Sprintf("bind it to this candidate with git nwdes examine open --feature %s --retarget (its observations keep an unrecorded commit and must be observed again), or start over with --from-current", d.Feature),
			"the draft of %s was opened before drafts recorded their candidate, so it is not known to examine %s", d.Feature, here[:12])
	}
	return refusal.New(refusal.CandidateMoved,
		fmt.Sprintf("examine %s with git nwdes examine open --feature %s --retarget (observations keep the commit they were made at; carry over what still holds with examine observation carry), or examine %s with --candidate %s",
			here[:12], d.Feature, d.Candidate[:12], d.Candidate[:12]),
		"the draft of %s examines %s, not %s", d.Feature, d.Candidate[:12], here[:12])
}

// checkCitations refuses a verdict that cites an observation not issued,
// one made at another commit and not carried over, gate evidence of
// another commit, or, for met, gate evidence that is NOT-MET.
func (d *Draft) checkCitations(c *Candidate, v VerdictRow) error {
	here := c.Commit.String()
	for _, id := range v.Observations {
		i, ok := d.observation(id)
		if !ok {
			return refusal.New(refusal.DanglingReference, "cite an ID that observation add printed (git nwdes examine show lists them)",
				"%s cites %s, which the draft of %s has not issued", v.Expectation, id, d.Feature)
		}
		o := d.Observations[i]
		switch {
		case o.Source == SourceGate && o.Commit != here:
			return refusal.New(refusal.ObservationElsewhere, "run git nwdes gate run at this candidate and cite the new gate observation",
				"%s cites %s, gate evidence of %s; this examination is of %s", v.Expectation, id, shortOr(o.Commit), here[:12])
		case o.Commit != here && !o.Carried:
			return refusal.New(refusal.ObservationElsewhere,
				fmt.Sprintf("observe again at this candidate, or carry it over if it still holds: git nwdes examine observation carry --feature %s --id %s (the brief will say where it was observed)", d.Feature, id),
				"%s cites %s, observed at %s; this examination is of %s", v.Expectation, id, shortOr(o.Commit), here[:12])
		case v.Verdict == Met && o.Gate != nil && o.Gate.State != GateMet:
			return refusal.New(refusal.GateContradiction, "face it: set the verdict unmet (or not_examined with a reason), or fix the product and run the gate again",
				"%s is met citing %s, whose gate run of %s was %s", v.Expectation, id, o.Gate.Expectation, o.Gate.State)
		}
	}
	return nil
}
