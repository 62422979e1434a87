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
	Text   []byte        `json:"-"`
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
	Feature      string          `json:"feature"`
	NextID       int             `json:"next_id"`
	Observations []Observation   `json:"observations"`
	Verdicts     []VerdictRow    `json:"verdicts"`
	Rows         []ExpectationID `json:"rows"`
}

func draftPath(feature string) string { return "drafts/" + feature }

func loadDraft(tx *gitstore.Tx, feature string) (*Draft, error) {
	rec, err := tx.Get(draftPath(feature))
	if errors.Is(err, gitstore.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return draftFrom(draftPath(feature), rec)
}

// draftFrom decodes and validates a draft record read at path.
func draftFrom(path string, rec *gitstore.Record) (*Draft, error) {
	if rec.Kind != KindDraft || rec.V != 1 {
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

func saveDraft(tx *gitstore.Tx, d *Draft) error {
	sort.Slice(d.Verdicts, func(i, j int) bool { return d.Verdicts[i].Expectation.Num() < d.Verdicts[j].Expectation.Num() })
	if d.Observations == nil {
		d.Observations = []Observation{}
	}
	if d.Verdicts == nil {
		d.Verdicts = []VerdictRow{}
	}
	rec, err := gitstore.NewRecord(KindDraft, 1, d)
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

// add records a new observation and returns its issued ID.
func (d *Draft) add(src Source, text []byte) ObservationID {
	if d.NextID < 1 {
		d.NextID = 1
	}
	id := observationID(d.NextID)
	d.NextID++
	d.Observations = append(d.Observations, Observation{ID: id, Source: src, Text: text})
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
		return -1, refusal.New("MissingFact", "list the draft's observations with git nwdes examine show",
			"draft of %s has no observation %s", d.Feature, sel.ID)
	}
	if sel.At < 1 || sel.At > len(d.Observations) {
		return -1, refusal.New("MissingFact", "list the draft's observations with git nwdes examine show",
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
