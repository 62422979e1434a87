package trial

import (
	"errors"
	"testing"

	"github.com/nwdes/nwdes/refusal"
)

func TestLedgerEventsCitesPreflightsAndRefusesWhatIsNoTrialEvent(t *testing.T) {
	for _, tc := range []struct {
		name   string
		event  string
		events int
		cites  int
		refuse bool
	}{
		{"a trial event is graded", `{"at":"2026-11-30T10:00:00Z","kind":"dispatch"}`, 1, 0, false},
		{"a preflight is cited", `{"at":"2026-11-30T10:00:00Z","kind":"preflight","readings":{}}`, 0, 1, false},
		{"a preflight without a time", `{"kind":"preflight"}`, 0, 0, true},
		{"a preflight whose time is not RFC 3339", `{"at":"yesterday","kind":"preflight"}`, 0, 0, true},
		{"KIND is not kind: no preflight, and no trial event", `{"at":"2026-11-30T10:00:00Z","KIND":"preflight"}`, 0, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			events, cites, err := LedgerEvents([]LedgerEntry{{Seq: 1, Digest: "d", Event: []byte(tc.event)}})
			var r *refusal.Error
			if got := errors.As(err, &r) && r.Name == refusal.TrialInvalid; got != tc.refuse {
				t.Fatalf("refused %v (%v), want %v", got, err, tc.refuse)
			}
			if len(events) != tc.events || len(cites) != tc.cites {
				t.Fatalf("%d events, %d cites; want %d, %d", len(events), len(cites), tc.events, tc.cites)
			}
		})
	}
}
