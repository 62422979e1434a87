package report_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"github.com/nwdes/nwdes/gitstore/oid"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/memstore"
	"github.com/nwdes/nwdes/judge"
	"github.com/nwdes/nwdes/refusal"
	"github.com/nwdes/nwdes/report"
)

const contract = "# REQUEST\nr\n# ACCEPTANCE CRITERIA\nE1. greets by name\nE2. prints usage\n  CHECK: ./greet\n  EXPECT: usage\nE3. documented\n"

type fixture struct {
	st                   *memstore.Store
	x                    *examine.Examiner
	mixed, accepted, bad oid.ID
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	// A contract is never deleted (that is refused): the accepted commit
	// holds greet, the mixed one adds login on top, and the bad one adds
	// a broken contract to the accepted one. Nothing here is about git:
	// the records and the candidates are kept in memory.
	st, err := memstore.New(memstore.Options{Registry: gitstore.MustRegistry(examine.Register)})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{st: st}
	commit := func(files map[string]string, parents ...oid.ID) oid.ID {
		t.Helper()
		c := memstore.Commit{Files: map[string][]byte{}, Parents: parents}
		for p, body := range files {
			c.Files[p] = []byte(body)
		}
		id, err := st.AddCommit(c)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	f.accepted = commit(map[string]string{".nwave/features/greet.md": contract})
	f.mixed = commit(map[string]string{".nwave/features/greet.md": contract,
		".nwave/features/login.md": "# REQUEST\nr\n# ACCEPTANCE CRITERIA\nE1. logs in\n"}, f.accepted)
	f.bad = commit(map[string]string{".nwave/features/greet.md": contract, ".nwave/features/broken.md": "nonsense\n"}, f.accepted)
	clock := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	f.x = &examine.Examiner{Store: f.st, Now: func() time.Time { clock = clock.Add(time.Second); return clock }, Gates: examine.GatesAdvisory}
	f.examine(t, f.mixed, examine.Unmet, examine.NotExamined)
	f.examine(t, f.accepted, examine.Met, examine.Met)
	f.examine(t, f.bad, examine.Met, examine.Met)
	return f
}

func (f *fixture) examine(t *testing.T, commit oid.ID, e2, e3 examine.Verdict) {
	t.Helper()
	ctx := context.Background()
	tg := examine.Target{Feature: "greet", Candidate: commit.String()}
	if _, err := f.x.Open(ctx, tg, false); refusal.Named(err, "CandidateMoved") {
		// The feature's draft examines another commit: move it here.
		if _, err := f.x.Retarget(ctx, tg); err != nil {
			t.Fatal(err)
		}
	} else if err != nil {
		t.Fatal(err)
	}
	o1, _ := f.x.AddObservation(ctx, tg, examine.SourceExaminer, []byte("Hello, Ada. <&> \x01"))
	o2, _ := f.x.AddObservation(ctx, tg, examine.SourceExaminer, []byte("greet: missing name"))
	set := func(id string, v examine.Verdict, obs string) {
		in := examine.VerdictInput{Expectation: examine.ExpectationID(id), Verdict: v}
		switch v {
		case examine.Met:
			in.Observations = []examine.ObservationID{examine.ObservationID(obs)}
		case examine.Unmet:
			in.Observations, in.Class = []examine.ObservationID{examine.ObservationID(obs)}, "product_violation"
		default:
			in.Reason = "needs a terminal"
		}
		if _, err := f.x.SetVerdict(ctx, tg, in); err != nil {
			t.Fatal(err)
		}
	}
	set("E1", examine.Met, o1.Message)
	set("E2", e2, o2.Message)
	set("E3", e3, o1.Message)
	if _, _, err := f.x.Close(ctx, tg, "accepted", "judged from the outside"); err != nil {
		t.Fatal(err)
	}
}

func TestStatusNamesEveryFeatureWithAContractAndItsOutcome(t *testing.T) {
	f := newFixture(t)
	s, err := report.Evaluate(f.st, judge.Question{Commit: f.mixed, Gates: examine.GatesAdvisory})
	if err != nil {
		t.Fatal(err)
	}
	if s.Commit != f.mixed.String() || s.Accepted || len(s.Features) != 2 {
		t.Fatalf("status %+v", s)
	}
	g, l := s.Features[0], s.Features[1]
	if g.Feature != "greet" || g.Outcome != examine.Rejected || !strings.HasPrefix(g.Record, "published/") ||
		*g.Expectations != (report.Counts{Met: 1, Unmet: 1, NotExamined: 1}) {
		t.Fatalf("greet: %+v", g)
	}
	if g.Gates == nil || g.Gates.State != "pending" || len(g.Gates.Rows) != 1 || g.Gates.Rows[0].Expectation != "E2" {
		t.Fatalf("greet gates: %+v", g.Gates)
	}
	if l.Feature != "login" || l.Outcome != examine.None || l.Record != "" || l.Gates != nil {
		t.Fatalf("login: %+v", l)
	}
	ok, err := report.Evaluate(f.st, judge.Question{Commit: f.accepted, Gates: examine.GatesAdvisory})
	if err != nil || !ok.Accepted || len(ok.Features) != 1 {
		t.Fatalf("accepted commit: %+v %v", ok, err)
	}
	bad, err := report.Evaluate(f.st, judge.Question{Commit: f.bad, Gates: examine.GatesAdvisory})
	if err != nil || bad.Accepted || bad.Features[0].Feature != "broken" || !strings.Contains(bad.Features[0].Problem, "ConfigurationMalformed") {
		t.Fatalf("a malformed contract is never accepted: %+v %v", bad, err)
	}
	var doc map[string]any
	b, _ := json.Marshal(s)
	json.Unmarshal(b, &doc)
	feats := doc["features"].([]any)
	first := feats[0].(map[string]any)
	for _, k := range []string{"feature", "outcome", "record", "contract", "expectations", "gates"} {
		if _, ok := first[k]; !ok {
			t.Fatalf("status JSON lacks %q: %s", k, b)
		}
	}
	if doc["commit"] != f.mixed.String() || doc["v"] != float64(1) {
		t.Fatalf("status JSON: %s", b)
	}
}

type junitDoc struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Errors   int `xml:"errors,attr"`
	Suites   []struct {
		Name  string `xml:"name,attr"`
		Cases []struct {
			Name    string `xml:"name,attr"`
			Failure *struct {
				Type    string `xml:"type,attr"`
				Message string `xml:"message,attr"`
			} `xml:"failure"`
			Out string `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func TestJUnitHasOneTestCasePerExpectation(t *testing.T) {
	f := newFixture(t)
	s, _ := report.Evaluate(f.st, judge.Question{Commit: f.mixed, Gates: examine.GatesAdvisory})
	var buf bytes.Buffer
	if err := report.Export(&buf, s, report.JUnit, report.Options{}); err != nil {
		t.Fatal(err)
	}
	var doc junitDoc
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, buf.String())
	}
	if doc.Tests != 4 || doc.Failures != 3 || len(doc.Suites) != 2 {
		t.Fatalf("tests %d failures %d suites %d\n%s", doc.Tests, doc.Failures, len(doc.Suites), buf.String())
	}
	greet := doc.Suites[0]
	if greet.Cases[0].Name != "E1: greets by name" || greet.Cases[0].Failure != nil || !strings.Contains(greet.Cases[0].Out, `Hello, Ada. <&> \x01`) {
		t.Fatalf("E1: %+v", greet.Cases[0])
	}
	if greet.Cases[1].Failure == nil || greet.Cases[1].Failure.Type != "product_violation" {
		t.Fatalf("E2: %+v", greet.Cases[1])
	}
	if greet.Cases[2].Failure == nil || greet.Cases[2].Failure.Type != "not_examined" {
		t.Fatalf("E3: %+v", greet.Cases[2])
	}
	login := doc.Suites[1]
	if len(login.Cases) != 1 || login.Cases[0].Failure == nil || login.Cases[0].Failure.Type != "not_examined_at_commit" {
		t.Fatalf("login: %+v", login)
	}
}

func TestMarkdownSummarisesAndCarriesTheBriefs(t *testing.T) {
	f := newFixture(t)
	s, _ := report.Evaluate(f.st, judge.Question{Commit: f.mixed, Gates: examine.GatesAdvisory})
	var buf bytes.Buffer
	if err := report.Export(&buf, s, report.Markdown, report.Options{}); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{
		"## nwdes acceptance of `" + f.mixed.String()[:12] + "`: **not accepted**",
		"| greet | **rejected** | 1 met, 1 unmet, 1 not examined | pending |",
		"| login | **not examined** |",
		"<details><summary>greet: rejected</summary>",
		"## nwdes acceptance brief: greet: rejected",
		"<details><summary>login: not examined at this commit</summary>",
	} {
		if !strings.Contains(md, want) {
			t.Fatalf("markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestTheInTotoStatementIsAboutTheCommitAndCarriesTheBrief(t *testing.T) {
	f := newFixture(t)
	s, _ := report.Evaluate(f.st, judge.Question{Commit: f.accepted, Gates: examine.GatesAdvisory})
	var buf bytes.Buffer
	if err := report.Export(&buf, s, report.InToto, report.Options{}); err != nil {
		t.Fatal(err)
	}
	var st struct {
		Type    string `json:"_type"`
		Subject []struct {
			Name   string            `json:"name"`
			Digest map[string]string `json:"digest"`
		} `json:"subject"`
		PredicateType string `json:"predicateType"`
		Predicate     struct {
			Commit   string `json:"commit"`
			Accepted bool   `json:"accepted"`
			Features []struct {
				Feature  string `json:"feature"`
				Outcome  string `json:"outcome"`
				Brief    string `json:"brief"`
				Contract struct {
					Path, Blob string
				} `json:"contract"`
				Rows []map[string]any `json:"rows"`
			} `json:"features"`
		} `json:"predicate"`
	}
	if err := json.Unmarshal(buf.Bytes(), &st); err != nil {
		t.Fatal(err)
	}
	if st.Type != "https://in-toto.io/Statement/v1" || len(st.Subject) != 1 || st.Subject[0].Digest["gitCommit"] != f.accepted.String() ||
		!strings.HasPrefix(st.PredicateType, "https://nwdes.dev/") {
		t.Fatalf("statement: %s", buf.String())
	}
	p := st.Predicate
	if !p.Accepted || p.Commit != f.accepted.String() || len(p.Features) != 1 || p.Features[0].Outcome != "accepted" ||
		!strings.Contains(p.Features[0].Brief, "## nwdes acceptance brief: greet: accepted") || len(p.Features[0].Rows) != 3 ||
		len(p.Features[0].Contract.Blob) != 40 {
		t.Fatalf("predicate: %s", buf.String())
	}
}
