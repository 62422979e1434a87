package hooks

import (
	"context"
	"errors"
	"testing"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/refusal"
)

func TestRecordsAreSentOnlyForAnAcceptedPushUnlessManual(t *testing.T) {
	accepted := &Report{Refs: []RefResult{{Verdict: Accepted}, {Verdict: Pass}}}
	refused := &Report{Refs: []RefResult{{Verdict: Accepted}, {Verdict: Refused}}}
	passed := &Report{Refs: []RefResult{{Verdict: Pass, Why: "not protected"}}}
	for _, tc := range []struct {
		name     string
		mode     RecordsMode
		rep      *Report
		sendErr  error
		wantSent bool
		notice   bool
		refusal  string
	}{
		{name: "an accepted push sends them", rep: accepted, wantSent: true},
		{name: "manual sends nothing", mode: RecordsManual, rep: accepted},
		{name: "a refused push sends nothing", rep: refused},
		{name: "a push nothing protected depends on sends nothing", rep: passed},
		{name: "a URL that is not a named remote is a notice, not a refusal", rep: accepted,
			sendErr: refusal.New(refusal.MissingFact, "add it", "there is no remote named %q", "/srv/x.git"), notice: true},
		{name: "a failure to send refuses the push, naming the remedy", rep: accepted,
			sendErr: refusal.NewUnavailable(refusal.RemoteFailed, "r", "git push failed"), refusal: refusal.RemoteFailed},
		{name: "any other failure too", rep: accepted, sendErr: errors.New("disk full"), refusal: refusal.RemoteFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			called := false
			sent, err := SendRecords(context.Background(), Policy{Records: tc.mode}, tc.rep, "origin",
				func(ctx context.Context, remote string) (*gitstore.SyncReport, error) {
					called = true
					if tc.sendErr != nil {
						return nil, tc.sendErr
					}
					return &gitstore.SyncReport{Remote: remote}, nil
				})
			if tc.refusal != "" {
				rf, ok := refusal.As(err)
				if !ok || rf.Name != tc.refusal || rf.Remedy == "" || !called {
					t.Fatalf("err %v, want %s with a remedy", err, tc.refusal)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if called != (tc.wantSent || tc.notice) || (sent.Report != nil) != tc.wantSent || (sent.Notice != "") != tc.notice {
				t.Fatalf("called %v, sent %+v", called, sent)
			}
		})
	}
}

func TestRecordsModeIsAutoOrManualAndNothingElse(t *testing.T) {
	for v, want := range map[string]RecordsMode{"auto": RecordsAuto, "manual": RecordsManual} {
		if got, err := ParseRecordsMode(v, true); err != nil || got != want {
			t.Fatalf("%q: %q, %v", v, got, err)
		}
	}
	if got, err := ParseRecordsMode("", false); err != nil || got != RecordsAuto {
		t.Fatalf("unset: %q, %v", got, err)
	}
	for _, v := range []string{"", "Manual", "off", "true"} {
		if _, err := ParseRecordsMode(v, true); err == nil {
			t.Fatalf("%q was taken", v)
		}
	}
}
