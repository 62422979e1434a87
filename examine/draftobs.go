package examine

import (
	"errors"
	"sort"
	"strconv"
	"strings"

	"github.com/nwdes/nwdes/gitstore"
)

// A v3 draft keeps each observation as a record of its own, beside its
// head record drafts/<feature>:
//
//	draftobs/<feature>/<n/100>/O<n>/record.json   examine.observation v1
//	draftobs/<feature>/<n/100>/O<n>/payload/text  its text, byte for byte
//
// so that an add writes one new record and the head, and reads neither
// the other observations nor a tree that grows with them: the records are
// grouped by hundreds, so the trees an add rewrites hold at most 100
// observations and one entry per hundred. Unchanged records keep their
// git ids from one version of the draft to the next, so fsck, which
// checks each tree and blob once per path, checks each observation once
// whatever the draft's history.
const (
	observationsTop = "draftobs"
	// observationsPerDir is how many observations one directory of a
	// draft's observations holds.
	observationsPerDir = 100
	// textPayload is the payload that holds an observation's text.
	textPayload = "text"
)

// KindObservation is one observation of a v3 draft (see above).
const KindObservation gitstore.Kind = "examine.observation"

func observationsDir(feature string) string { return observationsTop + "/" + feature }

func observationPath(feature string, id ObservationID) string {
	n, _ := observationNumber(id)
	return observationsDir(feature) + "/" + strconv.Itoa(n/observationsPerDir) + "/" + string(id)
}

func putObservation(tx gitstore.Edit, feature string, o *Observation) error {
	rec, err := gitstore.NewRecord(KindObservation, 1, o)
	if err != nil {
		return err
	}
	rec.Payloads = map[string][]byte{textPayload: o.Text}
	return tx.Put(observationPath(feature, o.ID), rec)
}

// readObservation reads one observation record; nil when there is none.
func readObservation(v gitstore.View, feature string, id ObservationID) (*Observation, error) {
	p := observationPath(feature, id)
	rec, err := v.Get(p)
	if errors.Is(err, gitstore.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return observationFrom(p, rec)
}

// observationFrom decodes and validates an observation record read at
// path.
func observationFrom(path string, rec *gitstore.Record) (*Observation, error) {
	if rec.Kind != KindObservation || rec.V != 1 {
		return nil, malformed(path, "a %s v%d record, not an observation", rec.Kind, rec.V)
	}
	o := &Observation{}
	if err := rec.Decode(o); err != nil {
		return nil, err
	}
	feature, ok := observationFeature(path)
	if _, valid := observationNumber(o.ID); !ok || !valid || path != observationPath(feature, o.ID) {
		return nil, malformed(path, "observation %q belongs at %s", o.ID, observationPath(feature, o.ID))
	}
	if p := o.problem(); p != "" {
		return nil, malformed(path, "%s", p)
	}
	t, ok := rec.Payloads[textPayload]
	if !ok || len(rec.Payloads) != 1 {
		return nil, malformed(path, "an observation holds one payload, its %s", textPayload)
	}
	o.Text = t
	return o, nil
}

// observationFeature reads the feature out of an observation's path.
func observationFeature(path string) (string, bool) {
	parts := strings.Split(path, "/")
	if len(parts) != 4 || parts[0] != observationsTop || ValidFeature(parts[1]) != nil {
		return "", false
	}
	return parts[1], true
}

// problem says what is wrong with one observation, or "".
func (o *Observation) problem() string {
	switch {
	case o.Source != SourceExaminer && o.Source != SourceGate:
		return string(o.ID) + " has source " + strconv.Quote(string(o.Source))
	case o.Commit != "" && !isFullID(o.Commit):
		return string(o.ID) + " was made at " + strconv.Quote(o.Commit) + ", which is not an object id"
	case o.Gate != nil && (o.Source != SourceGate || !validExpectation(o.Gate.Expectation) || (o.Gate.State != GateMet && o.Gate.State != GateNotMet)):
		return string(o.ID) + " has a malformed gate citation"
	}
	return ""
}

// listObservations returns the IDs of the observation records of a
// feature's draft, by number, from the names of its directories alone.
func listObservations(v gitstore.View, feature string) ([]ObservationID, error) {
	dir := observationsDir(feature)
	groups, err := v.List(dir)
	if err != nil {
		return nil, err
	}
	var out []ObservationID
	for _, g := range groups {
		names, err := v.List(dir + "/" + g)
		if err != nil {
			return nil, err
		}
		for _, name := range names {
			id := ObservationID(name)
			if _, ok := observationNumber(id); !ok || observationPath(feature, id) != dir+"/"+g+"/"+name {
				return nil, malformed(dir+"/"+g+"/"+name, "is not where a draft keeps an observation (%s)", dir+"/<n/100>/O<n>")
			}
			out = append(out, id)
		}
	}
	sortIDs(out)
	return out, nil
}

// highestObservation returns the number of the highest observation record
// of a feature's draft (0 when there is none), reading the list of its
// groups and the highest group alone.
func highestObservation(v gitstore.View, feature string) (int, error) {
	dir := observationsDir(feature)
	groups, err := v.List(dir)
	if err != nil {
		return 0, err
	}
	top := -1
	for _, g := range groups {
		k, err := strconv.Atoi(g)
		if err != nil || k < 0 || strconv.Itoa(k) != g {
			return 0, malformed(dir+"/"+g, "is not a group of a hundred observations (%s)", dir+"/<n/100>")
		}
		top = max(top, k)
	}
	if top < 0 {
		return 0, nil
	}
	names, err := v.List(dir + "/" + strconv.Itoa(top))
	if err != nil {
		return 0, err
	}
	high := 0
	for _, name := range names {
		n, ok := observationNumber(ObservationID(name))
		if !ok {
			return 0, malformed(dir+"/"+strconv.Itoa(top)+"/"+name, "is not an observation id")
		}
		high = max(high, n)
	}
	return high, nil
}

func sortIDs(ids []ObservationID) {
	sort.Slice(ids, func(i, j int) bool {
		a, _ := observationNumber(ids[i])
		b, _ := observationNumber(ids[j])
		return a < b
	})
}

// checkDraftHead is fsck's check of a v3 draft head beyond its own record:
// its next_id is above every observation it has issued. Only the highest
// group is read, so the check costs the same at every version of a draft.
func checkDraftHead(v gitstore.View, path string, d *Draft) error {
	high, err := highestObservation(v, d.Feature)
	if err != nil {
		return err
	}
	if high >= d.NextID {
		return malformed(path, "next_id %d is not above issued observation %s", d.NextID, observationID(high))
	}
	return nil
}

// checkObservation is fsck's check of an observation record: what a
// reader would refuse, and that a draft head beside it owns it.
func checkObservation(v gitstore.View, path string, rec *gitstore.Record) error {
	o, err := observationFrom(path, rec)
	if err != nil {
		return err
	}
	// The head is looked up, not read: its own check reads it, once per
	// version, where this one runs once per observation. (Records beside a
	// v1 or v2 head are not read by anything, and the next save removes
	// them.)
	feature, _ := observationFeature(path)
	if _, found, err := v.Lookup(draftPath(feature) + "/record.json"); err != nil {
		return err
	} else if !found {
		return malformed(path, "%s is an observation of no draft (%s is absent)", o.ID, draftPath(feature))
	}
	return nil
}
