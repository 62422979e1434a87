package trial

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/nwdes/nwdes/refusal"
)

// A LedgerEntry is one entry of a trial's ledger as the grade reads it:
// trial does not import the ledger package, so the caller hands over each
// entry's sequence number, digest and event.
type LedgerEntry struct {
	Seq    int
	Digest string
	Event  []byte
}

// A PreflightCite is a preflight the ledger holds (kind "preflight"): the
// grade cites it, with its time, and does not grade it. The fields are in
// the order encoding/json writes a map's keys, so that the grade's JSON
// is what it was when the CLI built these as maps.
type PreflightCite struct {
	At string `json:"at"`
	// BeforeOpen says the preflight was taken before the window opened.
	BeforeOpen bool   `json:"beforeOpen"`
	Digest     string `json:"digest"`
	Seq        int    `json:"seq"`
}

// LedgerEvents splits a trial ledger's entries into the events the grade
// measures and the preflights it cites. A preflight without an RFC 3339
// time, or an entry that is not a trial event, is refused (TrialInvalid).
func LedgerEvents(entries []LedgerEntry) ([]Event, []PreflightCite, error) {
	var events []Event
	var cites []PreflightCite
	for _, e := range entries {
		// The kind by its exact key (encoding/json would also take
		// "KIND"): a preflight is cited, with its time, not graded.
		var fields map[string]json.RawMessage
		_ = json.Unmarshal(e.Event, &fields)
		if string(fields["kind"]) == `"preflight"` {
			var at string
			if json.Unmarshal(fields["at"], &at) != nil {
				return nil, nil, refusal.New(refusal.TrialInvalid, "append preflights with git nwdes trial preflight --ledger",
					"ledger-malformed (ledger entry %d): a preflight without a time", e.Seq)
			}
			if _, err := time.Parse(time.RFC3339Nano, at); err != nil {
				return nil, nil, refusal.New(refusal.TrialInvalid, "append preflights with git nwdes trial preflight --ledger",
					"ledger-malformed (ledger entry %d): the preflight's time %q is not RFC 3339", e.Seq, at)
			}
			cites = append(cites, PreflightCite{Seq: e.Seq, Digest: e.Digest, At: at})
			continue
		}
		var ev Event
		if err := json.Unmarshal(e.Event, &ev); err != nil {
			return nil, nil, refusal.New(refusal.TrialInvalid, "append only trial events to the trial's ledger",
				"ledger entry %d: %v", e.Seq, err)
		}
		ev.Line = e.Seq
		events = append(events, ev)
	}
	return events, cites, nil
}

// GradeCiting grades events as Grade does, after holding each preflight
// cited to the grading moment: one dated after it is refused
// (TrialInvalid), and each says whether it came before the window opened.
func GradeCiting(start *Start, events []Event, cites []PreflightCite, now time.Time) (*Report, error) {
	for i, ct := range cites {
		when, _ := time.Parse(time.RFC3339Nano, ct.At)
		if when.After(now) {
			return nil, refusal.New(refusal.TrialInvalid, "record the preflight before the dispatch, never after the grading moment",
				"line-after-grading (ledger entry %d): the preflight is dated %s, after the grading moment %s", ct.Seq, ct.At, now.UTC().Format(time.RFC3339Nano))
		}
		cites[i].BeforeOpen = when.Before(start.Window.OpensAt)
	}
	return Grade(start, events, now)
}

// RequestFor is the preflight request the start record's readings make,
// with the record's own window: the one the grade measures. A
// readings.window that says otherwise is refused (TrialInvalid).
func RequestFor(start *Start) (*Request, error) {
	req, err := ParseRequest(start.Readings)
	if err != nil {
		return nil, err
	}
	open, close := start.Window.OpensAt.UTC().Format(time.RFC3339Nano), start.Window.ClosesAt.UTC().Format(time.RFC3339Nano)
	for _, w := range []struct{ got, want string }{{req.Window.Open, open}, {req.Window.Close, close}} {
		if w.got == "" {
			continue
		}
		if t, err := time.Parse(time.RFC3339Nano, w.got); err != nil || t.UTC().Format(time.RFC3339Nano) != w.want {
			return nil, refusal.New(refusal.TrialInvalid, "leave readings.window out, or give it the record's window",
				"readings.window says %s, the record's window %s to %s", w.got, open, close)
		}
	}
	req.Window.Open, req.Window.Close = open, close
	return req, nil
}

// LedgerEvent is the ledger event that records these readings, taken at
// at (kind "preflight"), for the grade to cite.
func (r *Readings) LedgerEvent(at time.Time) []byte {
	return []byte(fmt.Sprintf(`{"at":%q,"kind":"preflight","readings":%s}`, at.UTC().Format(time.RFC3339Nano), r.JSON()))
}
