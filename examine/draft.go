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

// Draft is a feature's working examination. It is kept in records like
// any other: it survives processes, in this clone's DraftsRef. Observation
// texts are stored as payloads, not in the JSON, so that they are kept
// byte for byte whatever they hold.
//
// Since v3 a draft is a head record (drafts/<feature>: the candidate, the
// next ID, the verdicts and the contract rows) and one record per
// observation (draftobs.go): an add reads the head and writes the head and
// one new record, whatever the draft holds. Observations are read as they
// are asked for; Observations holds those read so far, and every one once
// the draft is read whole (Show, and a v1 or v2 draft, which held them all
// in one record).
type Draft struct {
	Feature string `json:"feature"`
	// Candidate is the commit the draft examines (draft v2; empty in v1,
	// which must be bound with examine open --retarget before it is used).
	Candidate    string          `json:"candidate,omitempty"`
	NextID       int             `json:"next_id"`
	Observations []Observation   `json:"observations"`
	Verdicts     []VerdictRow    `json:"verdicts"`
	Rows         []ExpectationID `json:"rows"`

	// src is where the observations not yet in Observations are read
	// from (a v3 draft's view); whole is set once Observations holds
	// every one.
	src   gitstore.View
	whole bool
	// rewrite is set when the next save writes every observation record
	// afresh: a v1 or v2 draft upgraded, a draft opened or rebuilt.
	// Otherwise it writes the dirty ones and removes the gone ones.
	rewrite bool
	dirty   map[ObservationID]bool
	gone    map[ObservationID]bool
}

// draftHead is the body of a v3 draft's head record.
type draftHead struct {
	Feature   string          `json:"feature"`
	Candidate string          `json:"candidate,omitempty"`
	NextID    int             `json:"next_id"`
	Verdicts  []VerdictRow    `json:"verdicts"`
	Rows      []ExpectationID `json:"rows"`
}

func draftPath(feature string) string { return "drafts/" + feature }

// newDraft is a draft with no observations, to be written whole.
func newDraft(feature, candidate string, rows []ExpectationID) *Draft {
	return &Draft{Feature: feature, Candidate: candidate, NextID: 1, Rows: rows, whole: true, rewrite: true}
}

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
		return draftFrom(draftPath(feature), rec, tx)
	}
	return loadDraft(x.Store, tx, feature)
}

// loadDraft reads the feature's draft from tx, a view of DraftsRef: its
// head, and its observations only as they are asked for. A draft an
// earlier nwdes kept in Ref (where it travelled between clones) is read
// from there when this clone has none of its own yet; the next save keeps
// it locally, as v3.
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
		if rec.Kind == KindDraft && rec.V >= 3 {
			return nil, malformed(draftPath(feature), "a v%d draft in %s, where only drafts of v1 and v2 were ever kept", rec.V, Ref)
		}
		return draftFrom(draftPath(feature), rec, nil)
	}
	if err != nil {
		return nil, err
	}
	return draftFrom(draftPath(feature), rec, tx)
}

// draftFrom decodes and validates a draft record read at path: a v1 or v2
// draft whole, a v3 draft's head (its observations to be read from src).
func draftFrom(path string, rec *gitstore.Record, src gitstore.View) (*Draft, error) {
	if rec.Kind != KindDraft || rec.V < 1 || rec.V > 3 {
		return nil, malformed(path, "a %s v%d record, not a draft", rec.Kind, rec.V)
	}
	if rec.V == 3 {
		var h draftHead
		if err := rec.Decode(&h); err != nil {
			return nil, err
		}
		if len(rec.Payloads) > 0 {
			return nil, malformed(path, "a v3 draft holds no texts (its observations are records of their own)")
		}
		d := &Draft{Feature: h.Feature, Candidate: h.Candidate, NextID: h.NextID, Verdicts: h.Verdicts, Rows: h.Rows, src: src}
		if src == nil {
			// Read as a record alone (fuzzing): nothing to read from.
			d.whole = true
		}
		return d, d.validate(path)
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
	// Held whole, and written as v3 (every observation a record) on the
	// next save.
	d.whole, d.rewrite = true, true
	return d, nil
}

// saveDraft writes d as v3: its head, and the observation records that
// changed (every one, when d is to be rewritten).
func saveDraft(tx gitstore.Edit, d *Draft) error {
	sort.Slice(d.Verdicts, func(i, j int) bool { return d.Verdicts[i].Expectation.Num() < d.Verdicts[j].Expectation.Num() })
	h := draftHead{Feature: d.Feature, Candidate: d.Candidate, NextID: d.NextID, Verdicts: d.Verdicts, Rows: d.Rows}
	if h.Verdicts == nil {
		h.Verdicts = []VerdictRow{}
	}
	if h.Rows == nil {
		h.Rows = []ExpectationID{}
	}
	rec, err := gitstore.NewRecord(KindDraft, 3, h)
	if err != nil {
		return err
	}
	if err := tx.Put(draftPath(d.Feature), rec); err != nil {
		return err
	}
	if d.rewrite {
		if err := tx.Remove(observationsDir(d.Feature)); err != nil {
			return err
		}
		for i := range d.Observations {
			if err := putObservation(tx, d.Feature, &d.Observations[i]); err != nil {
				return err
			}
		}
		return nil
	}
	for id := range d.gone {
		if err := tx.Remove(observationPath(d.Feature, id)); err != nil {
			return err
		}
	}
	for i := range d.Observations {
		if d.dirty[d.Observations[i].ID] {
			if err := putObservation(tx, d.Feature, &d.Observations[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// observation returns the observation id names, reading it when it has
// not been read yet; nil when the draft has none.
func (d *Draft) observation(id ObservationID) (*Observation, error) {
	for i := range d.Observations {
		if d.Observations[i].ID == id {
			return &d.Observations[i], nil
		}
	}
	if d.whole || d.gone[id] {
		return nil, nil
	}
	n, ok := observationNumber(id)
	if !ok {
		return nil, nil
	}
	o, err := readObservation(d.src, d.Feature, id)
	if o == nil || err != nil {
		return nil, err
	}
	if n >= d.NextID {
		// The next add would issue this id again, and overwrite cited
		// evidence.
		return nil, malformed(draftPath(d.Feature), "next_id %d is not above issued observation %s", d.NextID, id)
	}
	d.Observations = append(d.Observations, *o)
	return &d.Observations[len(d.Observations)-1], nil
}

func (d *Draft) verdict(id ExpectationID) (int, bool) {
	for i, v := range d.Verdicts {
		if v.Expectation == id {
			return i, true
		}
	}
	return -1, false
}

// ids returns the IDs of every observation in the draft, in the order
// positions count them: a v3 draft's by number, read from the names of
// its records (not the records themselves).
func (d *Draft) ids() ([]ObservationID, error) {
	var out []ObservationID
	if d.whole {
		for _, o := range d.Observations {
			out = append(out, o.ID)
		}
		return out, nil
	}
	stored, err := listObservations(d.src, d.Feature)
	if err != nil {
		return nil, err
	}
	have := map[ObservationID]bool{}
	for _, id := range stored {
		if !d.gone[id] {
			have[id] = true
		}
	}
	for _, o := range d.Observations {
		have[o.ID] = true
	}
	for id := range have {
		out = append(out, id)
	}
	sortIDs(out)
	return out, nil
}

// readAll reads every observation of the draft, for what needs them all:
// show, and retarget's count of those made elsewhere.
func (d *Draft) readAll() error {
	if d.whole {
		return nil
	}
	ids, err := d.ids()
	if err != nil {
		return err
	}
	for _, id := range ids {
		if _, err := d.observation(id); err != nil {
			return err
		}
	}
	sort.Slice(d.Observations, func(i, j int) bool {
		a, _ := observationNumber(d.Observations[i].ID)
		b, _ := observationNumber(d.Observations[j].ID)
		return a < b
	})
	d.whole = true
	return nil
}

// changed marks an observation to be written on save.
func (d *Draft) changed(id ObservationID) {
	if d.dirty == nil {
		d.dirty = map[ObservationID]bool{}
	}
	d.dirty[id] = true
}

// remove drops an observation; save removes its record.
func (d *Draft) remove(id ObservationID) {
	for i := range d.Observations {
		if d.Observations[i].ID == id {
			d.Observations = append(d.Observations[:i], d.Observations[i+1:]...)
			break
		}
	}
	if d.gone == nil {
		d.gone = map[ObservationID]bool{}
	}
	d.gone[id] = true
	delete(d.dirty, id)
}

// addAs records an observation under the ID it had before (a draft rebuilt
// from a published examination keeps the IDs the examiner cited), or
// under a fresh one when it has none or that one is taken; the next fresh
// ID is always above every ID issued. It is used on a draft being built
// whole in memory.
func (d *Draft) addAs(id ObservationID, src Source, commit string, text []byte) (ObservationID, error) {
	n, ok := observationNumber(id)
	taken, err := d.observation(id)
	if err != nil {
		return "", err
	}
	if !ok || taken != nil {
		o, err := d.add(src, commit, text)
		if err != nil {
			return "", err
		}
		return o.ID, nil
	}
	d.Observations = append(d.Observations, Observation{ID: id, Source: src, Commit: commit, Text: text})
	d.changed(id)
	if n >= d.NextID {
		d.NextID = n + 1
	}
	return id, nil
}

// add records a new observation made at commit and returns it, issued its
// ID. An ID already on record is refused rather than overwritten: only a
// head whose next_id was set back would issue one.
func (d *Draft) add(src Source, commit string, text []byte) (*Observation, error) {
	if d.NextID < 1 {
		d.NextID = 1
	}
	id := observationID(d.NextID)
	if !d.whole {
		if _, found, err := d.src.Lookup(observationPath(d.Feature, id)); err != nil {
			return nil, err
		} else if found {
			return nil, malformed(draftPath(d.Feature), "next_id %d is not above issued observation %s", d.NextID, id)
		}
	}
	d.NextID++
	d.Observations = append(d.Observations, Observation{ID: id, Source: src, Commit: commit, Text: text})
	d.changed(id)
	return &d.Observations[len(d.Observations)-1], nil
}

// Selector picks one observation by ID or by 1-based position.
type Selector struct {
	ID ObservationID
	At int
}

func (d *Draft) selectObservation(sel Selector) (*Observation, error) {
	if sel.ID != "" {
		o, err := d.observation(sel.ID)
		if o != nil || err != nil {
			return o, err
		}
		return nil, refusal.New(refusal.MissingFact, "list the draft's observations with git nwdes examine show",
			"draft of %s has no observation %s", d.Feature, sel.ID)
	}
	ids, err := d.ids()
	if err != nil {
		return nil, err
	}
	if sel.At < 1 || sel.At > len(ids) {
		return nil, refusal.New(refusal.MissingFact, "list the draft's observations with git nwdes examine show",
			"draft of %s has %d observations; there is none at position %d", d.Feature, len(ids), sel.At)
	}
	o, err := d.observation(ids[sel.At-1])
	if err == nil && o == nil {
		err = malformed(observationPath(d.Feature, ids[sel.At-1]), "listed, but not readable as an observation")
	}
	return o, err
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
		o, err := d.observation(id)
		if err != nil {
			return err
		}
		if o == nil {
			return refusal.New(refusal.DanglingReference, "cite an ID that observation add printed (git nwdes examine show lists them)",
				"%s cites %s, which the draft of %s has not issued", v.Expectation, id, d.Feature)
		}
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
