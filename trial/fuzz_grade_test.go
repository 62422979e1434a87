package trial_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nwdes/nwdes/refusal"
	"github.com/nwdes/nwdes/trial"
)

// wantTrialRefusal fails unless err is a TrialInvalid refusal carrying its
// rule.
func wantTrialRefusal(t *testing.T, err error) trial.Rule {
	t.Helper()
	var re *trial.RuleError
	if !refusal.Named(err, refusal.TrialInvalid) || !errors.As(err, &re) || re.Rule == "" {
		t.Fatalf("error is not a TrialInvalid refusal with a rule: %v", err)
	}
	return re.Rule
}

func FuzzParseStart(f *testing.F) {
	for _, s := range []string{baseStart, corroboratedStart, `{}`, `{"v":1}`, `{"v":1,"window":{"segment":"w","opensAt":"0000-01-01T00:00:00+01:00","closesAt":"9999-12-31T23:59:59-01:00"}}`,
		`{"v":1,"window":{"segment":"w","opensAt":"2026-03-02T10:00:00Z","closesAt":"2026-03-02T11:00:00Z"},"readings":{"a":[1,{"b":null}]}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := trial.ParseStart(b)
		if err != nil {
			wantTrialRefusal(t, err)
			return
		}
		w := s.Window
		if w.Segment == "" || !w.ClosesAt.After(w.OpensAt) {
			t.Fatalf("accepted a window without a segment or a duration: %+v", w)
		}
		switch s.Provenance() {
		case trial.Declared:
			if w.Corroboration != nil {
				t.Fatal("declared with a corroboration")
			}
		case trial.Corroborated:
			if !w.Corroboration.OpensAt.Equal(w.OpensAt) || !w.Corroboration.ClosesAt.Equal(w.ClosesAt) {
				t.Fatalf("corroborated by disagreeing times: %+v", w)
			}
		default:
			t.Fatalf("provenance %q", s.Provenance())
		}
		if s.Readings != nil && !json.Valid(s.Readings) {
			t.Fatalf("readings %q are not JSON", s.Readings)
		}
	})
}

func FuzzParseEvents(f *testing.F) {
	f.Add([]byte(strings.Join(base(), "\n")))
	f.Add([]byte(strings.Join(with(base(), intervention("10:30", "window")), "\r\n") + "\n\n"))
	f.Add([]byte(`{"at":"2026-03-02T12:30:00.5+02:00","kind":"intervention","actor":"user","target":"t","action":"a","segment":"s","claimed":"window"}`))
	f.Add([]byte(`{"at":"2026-03-02T09:00:00Z","kind":"dispatch","at":"2026-03-02T09:00:00Z"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		evs, err := trial.ParseEvents(b)
		if err != nil {
			wantTrialRefusal(t, err)
			return
		}
		lines := make([]string, len(evs))
		for i, e := range evs {
			if e.Line < 1 || (i > 0 && e.Line <= evs[i-1].Line) {
				t.Fatalf("line numbers %d after %d", e.Line, evs[max(i-1, 0)].Line)
			}
			c, err := json.Marshal(e)
			if err != nil {
				t.Fatalf("canonical JSON of %+v: %v", e, err)
			}
			lines[i] = string(c)
		}
		again, err := trial.ParseEvents([]byte(strings.Join(lines, "\n")))
		if err != nil {
			t.Fatalf("canonical JSON does not read back: %v\n%s", err, strings.Join(lines, "\n"))
		}
		for i, e := range again {
			o := evs[i]
			if !e.At.Equal(o.At) || e.Kind != o.Kind || e.Segment != o.Segment || e.Actor != o.Actor || e.Target != o.Target ||
				e.Action != o.Action || e.Claimed != o.Claimed {
				t.Fatalf("read back %+v as %+v", o, e)
			}
		}
	})
}

// compactLedger reads b as a ledger of four bytes an event (kind, minutes
// after 09:00, segment, action and claim), so that the fuzzer reaches
// ledgers that grade far more often than through JSON.
func compactLedger(b []byte) []trial.Event {
	kinds := []trial.Kind{trial.KindDispatch, trial.KindSegmentStart, trial.KindSegmentEnd, trial.KindWindowOpen,
		trial.KindWindowClose, trial.KindIntervention}
	segments := []string{"window", "a", "b", "c"}
	actions := []string{"failed", "succeeded", "", "done"}
	claims := []trial.Claim{"", trial.ClaimPreparation, trial.ClaimWindow, ""}
	var evs []trial.Event
	for i := 0; i+4 <= len(b); i += 4 {
		evs = append(evs, trial.Event{
			Kind:    kinds[int(b[i])%len(kinds)],
			At:      clock("09:00").Add(time.Duration(b[i+1]) * time.Minute),
			Segment: segments[int(b[i+2])%len(segments)],
			Action:  actions[int(b[i+3])%len(actions)],
			Claimed: claims[int(b[i+3]>>2)%len(claims)],
		})
	}
	return evs
}

// FuzzGrade grades any record and ledger at any moment: it refuses with a
// rule or reports, never panics, reports the same bytes and refuses by the
// same rule whatever the order of the lines, and a report's counts add up
// to the ledger's interventions, classified by time alone.
func FuzzGrade(f *testing.F) {
	noon := clock("12:00").Unix()
	for _, l := range [][]string{
		base(),
		with(base(), intervention("10:30", "window")),
		with(base(), intervention("10:00", ""), intervention("09:20", ""), intervention("11:00:01", "")),
		with(base(), segStart("09:05", "doctor"), segEnd("09:15", "doctor", "succeeded")),
		with(base(), dispatch("10:00")),
		without(base(), lStandbyEnd),
	} {
		f.Add([]byte(baseStart), []byte(strings.Join(l, "\n")), noon)
		f.Add([]byte(corroboratedStart), []byte(strings.Join(l, "\n")), noon)
	}
	f.Add([]byte(baseStart), []byte(strings.Join(base(), "\n")), clock("10:30").Unix())
	f.Add([]byte(baseStart), []byte{1, 0, 1, 1, 2, 20, 1, 1, 5, 10, 0, 0, 0, 60, 0, 0, 3, 60, 0, 0, 4, 120, 0, 0, 5, 90, 0, 8}, noon)
	f.Fuzz(func(t *testing.T, startBytes, ledger []byte, nowUnix int64) {
		s, err := trial.ParseStart(startBytes)
		if err != nil {
			return
		}
		evs, err := trial.ParseEvents(ledger)
		if err != nil {
			evs = compactLedger(ledger)
		}
		now := time.Unix(nowUnix, 0).UTC()
		r, err := trial.Grade(s, evs, now)
		reversed := slices.Clone(evs)
		slices.Reverse(reversed)
		r2, err2 := trial.Grade(s, reversed, now)
		if err != nil {
			rule := wantTrialRefusal(t, err)
			if err2 == nil || wantTrialRefusal(t, err2) != rule {
				t.Fatalf("refused by %s in one order and by %v in the other", rule, err2)
			}
			return
		}
		if err2 != nil {
			t.Fatalf("graded in one order and refused in the other: %v", err2)
		}
		if !bytes.Equal(r.JSON(), r2.JSON()) || r.Text() != r2.Text() {
			t.Fatalf("the order of lines changed the report:\n%s\n%s", r.JSON(), r2.JSON())
		}
		if !json.Valid(r.JSON()) {
			t.Fatalf("report is not JSON: %s", r.JSON())
		}
		if r.Clean() != r.WindowIsClean || r.Clean() != (r.WindowInterventions == 0) {
			t.Fatalf("clean %v with %d window interventions", r.Clean(), r.WindowInterventions)
		}
		inWindow, outside := 0, 0
		for _, e := range evs {
			if e.Kind != trial.KindIntervention {
				continue
			}
			if !e.At.Before(s.Window.OpensAt) && !e.At.After(s.Window.ClosesAt) {
				inWindow++
			} else {
				outside++
			}
		}
		sum, failed := r.Segments.InterventionsOutside, 0
		for _, seg := range r.Segments.Intervals {
			sum += seg.Interventions
			if seg.Outcome == trial.Failed {
				failed++
			}
		}
		if r.WindowInterventions != inWindow || r.PreparationInterventions != outside || sum != outside {
			t.Fatalf("counts %d in the window, %d outside (%d by segment) for %d and %d", r.WindowInterventions,
				r.PreparationInterventions, sum, inWindow, outside)
		}
		if r.Segments.Count != len(r.Segments.Intervals) || len(r.Segments.Failed) != failed {
			t.Fatalf("segments %+v", r.Segments)
		}
	})
}
