package swarm

import (
	"strings"
	"testing"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/refusal"
)

const (
	candA = "0123456789abcdef0123456789abcdef01234567"
	candB = "89abcdef0123456789abcdef0123456789abcdef"
)

func validLanding() Landing {
	return Landing{Label: "fix", Candidate: candA, Event: LandLanded, Branch: "refs/heads/main", Remote: "origin",
		Onto: candB, At: "2026-01-01T00:00:00Z", By: "me"}
}

func rebasedLanding() Landing {
	l := validLanding()
	l.Event, l.Rebased = LandRebased, candB
	l.RebasedRef = string(RebasedRef(l.Label, oid.MustParse(candB)))
	return l
}

func TestALandingRecordIsReadOnlyWhenItHoldsTogether(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		edit func(*Landing)
		path string
		want string // "" when it is read
	}{
		{name: "a landed candidate", edit: func(*Landing) {}},
		{name: "a candidate that made its branch names no tip", edit: func(l *Landing) { l.Onto = "" }},
		{name: "a rebased candidate", edit: func(l *Landing) { *l = rebasedLanding() }},
		{name: "a label that is no card label", edit: func(l *Landing) { l.Label = "../x" }, path: "landings/../x/" + candA, want: "is not a card label"},
		{name: "a short candidate", edit: func(l *Landing) { l.Candidate = "0123" }, path: "landings/fix/0123", want: "not a full commit id"},
		{name: "a branch that is a tag", edit: func(l *Landing) { l.Branch = "refs/tags/v1" }, want: "is not refs/heads/"},
		{name: "no remote", edit: func(l *Landing) { l.Remote = "" }, want: "is not a remote name"},
		{name: "a time that is none", edit: func(l *Landing) { l.At = "yesterday" }, want: "is not a time"},
		{name: "an unknown event", edit: func(l *Landing) { l.Event = "forced" }, want: "is not landed or rebased"},
		{name: "a landed candidate naming a rebased one", edit: func(l *Landing) { l.Rebased = candB }, want: "names no rebased commit"},
		{name: "a rebased candidate naming no commit", edit: func(l *Landing) { *l = rebasedLanding(); l.Rebased = "" }, want: "names the commit it became"},
		{name: "a rebased candidate naming no tip", edit: func(l *Landing) { *l = rebasedLanding(); l.Onto = "" }, want: "names the commit it became"},
		{name: "a candidate rebased into itself", edit: func(l *Landing) {
			*l = rebasedLanding()
			l.Rebased, l.RebasedRef = candA, string(RebasedRef("fix", oid.MustParse(candA)))
		}, want: "not rebased into itself"},
		{name: "a rebased candidate kept elsewhere", edit: func(l *Landing) { *l = rebasedLanding(); l.RebasedRef = "refs/heads/x" }, want: "is kept by refs/nwdes/swarm/heads/fix/rebased-"},
		{name: "a record stored under another candidate", edit: func(*Landing) {}, path: "landings/fix/" + candB, want: "belongs under landings/fix/" + candA},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := validLanding()
			tc.edit(&l)
			path := tc.path
			if path == "" {
				path = landingPath(l.Label, l.Candidate)
			}
			rec, err := gitstore.NewRecord(KindLanding, landingVersion, l)
			if err != nil {
				t.Fatal(err)
			}
			got, err := landingFrom(path, rec)
			if tc.want == "" {
				if err != nil || *got != l {
					t.Fatalf("got %+v, %v; want %+v", got, err, l)
				}
				return
			}
			if !refusal.Named(err, refusal.RecordMalformed) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v; want RecordMalformed saying %q", err, tc.want)
			}
		})
	}
}

func TestALandingRecordOfAnotherKindVersionOrWithPayloadsIsRefused(t *testing.T) {
	t.Parallel()
	l := validLanding()
	path := landingPath(l.Label, l.Candidate)
	for name, edit := range map[string]func(*gitstore.Record){
		"another kind":  func(r *gitstore.Record) { r.Kind = KindDrop },
		"a newer one":   func(r *gitstore.Record) { r.V = landingVersion + 1 },
		"with payloads": func(r *gitstore.Record) { r.Payloads = map[string][]byte{"x": []byte("y")} },
	} {
		rec, err := gitstore.NewRecord(KindLanding, landingVersion, l)
		if err != nil {
			t.Fatal(err)
		}
		edit(rec)
		if _, err := landingFrom(path, rec); !refusal.Named(err, refusal.RecordMalformed) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestAChainOfLandingsEndsAtTheCandidateStillToLandOrRefusesALandedOne(t *testing.T) {
	t.Parallel()
	card := &Card{Label: "fix", Branch: "refs/heads/main"}
	head := oid.MustParse(candA)
	rebased := rebasedLanding()
	if got, err := followChain(card, head, map[string]Landing{}); err != nil || got != head {
		t.Fatalf("no records: %v, %v", got, err)
	}
	if got, err := followChain(card, head, map[string]Landing{candA: rebased}); err != nil || got.String() != candB {
		t.Fatalf("rebased: %v, %v", got, err)
	}
	landed := validLanding()
	landed.Candidate = candB
	if _, err := followChain(card, head, map[string]Landing{candA: rebased, candB: landed}); !refusal.Named(err, refusal.AlreadyLanded) {
		t.Fatalf("landed: %v", err)
	}
	elsewhere := rebased
	elsewhere.Branch = "refs/heads/other"
	if _, err := followChain(card, head, map[string]Landing{candA: elsewhere}); !refusal.Named(err, refusal.NeedsPerson) {
		t.Fatalf("another branch: %v", err)
	}
	loop := rebasedLanding()
	back := rebasedLanding()
	back.Candidate, back.Rebased = candB, candA
	if _, err := followChain(card, head, map[string]Landing{candA: loop, candB: back}); !refusal.Named(err, refusal.RecordMalformed) {
		t.Fatalf("a loop: %v", err)
	}
}
