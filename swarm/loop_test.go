package swarm

import (
	"strings"
	"testing"
)

// The loop's decision is read from records alone: each row is a set of
// queue, job and stop records and what comes next in lineage "fix".
func TestDecideReadsTheNextStepFromRecords(t *testing.T) {
	t.Parallel()
	h1, h2 := strings.Repeat("1", 40), strings.Repeat("2", 40)
	base := strings.Repeat("0", 40)
	card := func(label, base, extra string) Queued {
		t.Helper()
		c, err := ParseCard([]byte("RESULT: " + label + " sha=" + base[:12] + "\nBASE: " + base + "\nFEATURE: f\n" + extra + "\nDo it.\n"))
		if err != nil {
			t.Fatal(err)
		}
		return Queued{Card: c}
	}
	fix, r1 := card("fix", base, ""), card("fix-r1", h1, "REWORK-OF: fix 1\n")
	exam := func(producer Queued, head string) Queued {
		t.Helper()
		c, err := ParseCard([]byte(examineText(examineLabel(producer.Card), producer.Card, "fix", head)))
		if err != nil {
			t.Fatal(err)
		}
		return Queued{Card: c}
	}
	done := func(label, head string) Job {
		return Job{Label: label, Attempt: 1, End: EndDone, Result: VerdictOK, Head: head}
	}
	replayed := func(label string) Job {
		j := done(label, "")
		j.Journal = JournalReplayed
		return j
	}
	for _, tc := range []struct {
		name    string
		r       Records
		action  LoopAction
		card    string
		end     LineageEnd
		because string
	}{
		{"not run yet", Records{Queue: []Queued{fix}}, LoopWait, "fix", "", ""},
		{"a head: examine it", Records{Queue: []Queued{fix}, Jobs: []Job{done("fix", h1)}}, LoopExamine, "fix", "", ""},
		{"a job with no head", Records{Queue: []Queued{fix}, Jobs: []Job{{Label: "fix", Attempt: 1, End: EndFailed, Result: VerdictBlocked, Reason: "no-result"}}},
			LoopEnd, "fix", LineagePerson, "with no head to examine: no-result"},
		{"its examination runs", Records{Queue: []Queued{fix, exam(fix, h1)}, Jobs: []Job{done("fix", h1)}}, LoopWait, "fix", "", ""},
		{"examined: judge it", Records{Queue: []Queued{fix, exam(fix, h1)}, Jobs: []Job{done("fix", h1), replayed("fix-exam")}}, LoopJudge, "fix", "", ""},
		{"a journal refused", Records{Queue: []Queued{fix, exam(fix, h1)}, Jobs: []Job{done("fix", h1), {Label: "fix-exam", Attempt: 1, End: EndDone, Result: VerdictRefused, Journal: JournalRefused, Reason: "JournalInvalid"}}},
			LoopEnd, "fix", LineagePerson, "was not published (journal refused, result refused): JournalInvalid"},
		{"reworked: the rework is current", Records{Queue: []Queued{fix, exam(fix, h1), r1}, Jobs: []Job{done("fix", h1), replayed("fix-exam")}}, LoopWait, "fix-r1", "", ""},
		{"the rework's head", Records{Queue: []Queued{fix, exam(fix, h1), r1}, Jobs: []Job{done("fix", h1), replayed("fix-exam"), done("fix-r1", h2)}}, LoopExamine, "fix-r1", "", ""},
		{"a stop of every card", Records{Queue: []Queued{fix}, Stops: map[string]Stop{"all": {Card: "all", Reason: "quota"}}}, LoopEnd, "fix", LineageStopped, "stops every card: quota"},
		{"a stop of the rework", Records{Queue: []Queued{fix, exam(fix, h1), r1}, Jobs: []Job{done("fix", h1), replayed("fix-exam")}, Stops: map[string]Stop{"fix-r1": {Card: "fix-r1"}}},
			LoopEnd, "fix-r1", LineageStopped, "stops card fix-r1"},
		{"a stopped job is not finished: the stop ends it", Records{Queue: []Queued{fix}, Jobs: []Job{{Label: "fix", Attempt: 1, Stopped: true}}, Stops: map[string]Stop{"fix": {Card: "fix"}}},
			LoopEnd, "fix", LineageStopped, "stops card fix"},
		{"a dropped examine card", Records{Queue: []Queued{fix, exam(fix, h1)}, Jobs: []Job{done("fix", h1)}, Control: &Control{Dropped: map[string]Drop{"fix-exam": {Reason: "no"}}}},
			LoopEnd, "fix", LineageStopped, "card fix-exam was dropped: no"},
		{"a card not queued here", Records{}, LoopEnd, "", LineagePerson, "is not queued here"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := Decide("fix", tc.r)
			if d.Action != tc.action || d.End != tc.end || !strings.Contains(d.Reason, tc.because) {
				t.Fatalf("Decide = %s %q %q, want %s %q containing %q", d.Action, d.End, d.Reason, tc.action, tc.end, tc.because)
			}
			if got := ""; d.Card != nil {
				got = d.Card.Label
				if got != tc.card {
					t.Fatalf("current card %s, want %s", got, tc.card)
				}
			} else if tc.card != "" {
				t.Fatalf("no current card, want %s", tc.card)
			}
		})
	}
}

// The examine card the loop queues is a valid examine card of the head:
// BASE and CANDIDATE the head, the producer's feature and deadline.
func TestTheLoopsExamineCardExaminesTheHead(t *testing.T) {
	t.Parallel()
	head := strings.Repeat("a", 40)
	p, err := ParseCard([]byte("RESULT: fix sha=000000000000\nBASE: " + strings.Repeat("0", 40) + "\nTEST: g E2\nDEADLINE: 3m\n\nDo it.\n"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseCard([]byte(examineText(examineLabel(p), p, "fix", head)))
	if err != nil {
		t.Fatal(err)
	}
	if c.Label != "fix-exam" || c.Kind != KindExamine || c.Base != head || c.Candidate != head || c.Feature != "g" || c.Deadline.String() != "3m0s" {
		t.Fatalf("examine card %+v", c)
	}
}

// Lineages are followed through REWORK-OF both ways.
func TestLineageChainAndRoot(t *testing.T) {
	t.Parallel()
	var q []Queued
	for _, s := range []string{"fix", "fix-r1 fix 1", "fix-r2 fix-r1 2", "other"} {
		f := strings.Fields(s)
		c := &Card{Label: f[0]}
		if len(f) == 3 {
			c.ReworkOf = &ReworkRef{Card: f[1], N: int(f[2][0] - '0')}
		}
		q = append(q, Queued{Card: c})
	}
	var labels []string
	for _, c := range lineageChain("fix", q) {
		labels = append(labels, c.Label)
	}
	if strings.Join(labels, " ") != "fix fix-r1 fix-r2" {
		t.Fatalf("chain %v", labels)
	}
	if r := lineageOf("fix-r2", q); r != "fix" {
		t.Fatalf("root of fix-r2 is %s", r)
	}
	if r := lineageOf("other", q); r != "other" {
		t.Fatalf("root of other is %s", r)
	}
}

// TestAReworkIsProvenAgainstItsLineagesFirstBase: the base a rework's
// head is gated against is the BASE of the lineage's first card, followed
// through REWORK-OF; a card not queued here keeps its own.
func TestAReworkIsProvenAgainstItsLineagesFirstBase(t *testing.T) {
	t.Parallel()
	card := func(label, base string, of *ReworkRef) Queued {
		return Queued{Card: &Card{Label: label, Base: base, ReworkOf: of}}
	}
	queue := []Queued{
		card("fix", "b0", nil),
		card("fix-r1", "b1", &ReworkRef{Card: "fix", N: 1}),
		card("fix-r2", "b2", &ReworkRef{Card: "fix-r1", N: 2}),
		card("orphan-r1", "b3", &ReworkRef{Card: "gone", N: 1}),
	}
	for label, want := range map[string]string{"fix": "b0", "fix-r1": "b0", "fix-r2": "b0", "orphan-r1": "b3"} {
		var c *Card
		for _, q := range queue {
			if q.Card.Label == label {
				c = q.Card
			}
		}
		if got := lineageBase(c, queue); got != want {
			t.Errorf("lineageBase(%s) = %s, want %s", label, got, want)
		}
	}
	if got := lineageBase(&Card{Label: "elsewhere", Base: "b9", ReworkOf: &ReworkRef{Card: "fix", N: 1}}, queue); got != "b9" {
		t.Errorf("a card not queued here: %s, want its own base", got)
	}
}
