package swarm

import (
	"strings"
	"testing"
)

// The loop's decision is read from records alone: each row is a set of
// queue, job and stop records and what comes next in lineage "fix".
func TestDecideReadsTheNextStepFromRecords(t *testing.T) {
	t.Parallel()
	h1, h2, h3, h4 := strings.Repeat("1", 40), strings.Repeat("2", 40), strings.Repeat("3", 40), strings.Repeat("4", 40)
	tip, tip2 := strings.Repeat("5", 40), strings.Repeat("6", 40)
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
	examN := func(producer Queued, head, cand string, rebases int) Queued {
		t.Helper()
		d := Decision{Lineage: "fix", Card: producer.Card, Head: head, Candidate: cand, Onto: tip, Rebases: rebases}
		c, err := ParseCard([]byte(examineText(examineLabel(producer.Card, rebases), d)))
		if err != nil {
			t.Fatal(err)
		}
		return Queued{Card: c}
	}
	exam := func(producer Queued, head string) Queued { return examN(producer, head, head, 0) }
	// Landing records of card fix: h1 rebased onto tip as h3, h3 onto
	// tip2 as h4, h4 landed; and one of another card naming h1.
	rebased := func(cand, onto, next string) Landing {
		return Landing{Label: "fix", Candidate: cand, Event: LandRebased, Branch: "refs/heads/main", Remote: "origin", Onto: onto, Rebased: next}
	}
	landed := func(cand, onto string) Landing {
		return Landing{Label: "fix", Candidate: cand, Event: LandLanded, Branch: "refs/heads/main", Remote: "origin", Onto: onto, At: "2026-01-02T03:04:05Z"}
	}
	once := map[string]Landing{h1: rebased(h1, tip, h3)}
	twice := map[string]Landing{h1: rebased(h1, tip, h3), h3: rebased(h3, tip2, h4)}
	done := func(label, head string) Job {
		return Job{Label: label, Attempt: 1, End: EndDone, Result: VerdictOK, Head: head}
	}
	replayed := func(label string) Job {
		j := done(label, "")
		j.Journal = JournalReplayed
		return j
	}
	headExamined := []Job{done("fix", h1), replayed("fix-exam")}
	rebExam := examN(fix, h1, h3, 1)
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
		{"the head landed", Records{Queue: []Queued{fix, exam(fix, h1)}, Jobs: headExamined, Landings: map[string]Landing{h1: landed(h1, tip)}},
			LoopEnd, "fix", LineageAccepted, "card fix's candidate 111111111111 landed on origin's refs/heads/main (over 555555555555)"},
		{"rebased: gate and examine the new candidate", Records{Queue: []Queued{fix, exam(fix, h1)}, Jobs: headExamined, Landings: once}, LoopGate, "fix", "", ""},
		{"another card's landing of the head is not this lineage's", Records{Queue: []Queued{fix, exam(fix, h1)}, Jobs: headExamined,
			Landings: map[string]Landing{h1: {Label: "other", Candidate: h1, Event: LandLanded}}}, LoopJudge, "fix", "", ""},
		{"the rebased candidate's examination runs", Records{Queue: []Queued{fix, exam(fix, h1), rebExam}, Jobs: headExamined, Landings: once}, LoopWait, "fix", "", ""},
		{"the rebased candidate examined: judge it", Records{Queue: []Queued{fix, exam(fix, h1), rebExam}, Jobs: append(headExamined, replayed("fix-rebase1-exam")), Landings: once},
			LoopJudge, "fix", "", ""},
		{"the rebased candidate's journal refused", Records{Queue: []Queued{fix, exam(fix, h1), rebExam}, Landings: once,
			Jobs: append(headExamined, Job{Label: "fix-rebase1-exam", Attempt: 1, End: EndDone, Result: VerdictRefused, Journal: JournalRefused})},
			LoopEnd, "fix", LineagePerson, "the examination of 333333333333 by card fix-rebase1-exam's job #1 was not published"},
		{"a stop of the rebased candidate's examine card", Records{Queue: []Queued{fix, exam(fix, h1), rebExam}, Jobs: headExamined, Landings: once, Stops: map[string]Stop{"fix-rebase1-exam": {Card: "fix-rebase1-exam"}}},
			LoopEnd, "fix", LineageStopped, "stops card fix-rebase1-exam"},
		{"rebased twice: the newest candidate is gated", Records{Queue: []Queued{fix, exam(fix, h1), rebExam}, Jobs: append(headExamined, replayed("fix-rebase1-exam")), Landings: twice},
			LoopGate, "fix", "", ""},
		{"the rebased candidate landed", Records{Queue: []Queued{fix, exam(fix, h1), rebExam}, Jobs: append(headExamined, replayed("fix-rebase1-exam")),
			Landings: map[string]Landing{h1: rebased(h1, tip, h3), h3: landed(h3, tip)}}, LoopEnd, "fix", LineageAccepted, "card fix's candidate 333333333333 landed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := Decide("fix", tc.r)
			if d.Action != tc.action || d.End != tc.end || !strings.Contains(d.Reason, tc.because) {
				t.Fatalf("Decide = %s %q %q, want %s %q containing %q", d.Action, d.End, d.Reason, tc.action, tc.end, tc.because)
			}
			if d.Action == LoopGate && (d.Head != h1 || d.Rebases == 0 || d.Candidate != map[int]string{1: h3, 2: h4}[d.Rebases] || d.Onto != map[int]string{1: tip, 2: tip2}[d.Rebases]) {
				t.Fatalf("gate %s (head %s) onto %s after %d rebases", d.Candidate, d.Head, d.Onto, d.Rebases)
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
	c, err := ParseCard([]byte(examineText(examineLabel(p, 0), Decision{Lineage: "fix", Card: p, Head: head, Candidate: head})))
	if err != nil {
		t.Fatal(err)
	}
	if c.Label != "fix-exam" || c.Kind != KindExamine || c.Base != head || c.Candidate != head || c.Feature != "g" || c.Deadline.String() != "3m0s" {
		t.Fatalf("examine card %+v", c)
	}
	// A rebased candidate's card examines the candidate, not the head.
	cand := strings.Repeat("b", 40)
	c, err = ParseCard([]byte(examineText(examineLabel(p, 2), Decision{Lineage: "fix", Card: p, Head: head, Candidate: cand, Onto: strings.Repeat("c", 40), Rebases: 2})))
	if err != nil {
		t.Fatal(err)
	}
	if c.Label != "fix-rebase2-exam" || c.Kind != KindExamine || c.Base != cand || c.Candidate != cand || c.Feature != "g" {
		t.Fatalf("examine card of a rebased candidate %+v", c)
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

// The rule that nobody certifies their own work is asked back along the
// landing records, from a rebased candidate to the harvested head; a
// chain that loops is followed no further than its bound.
func TestRebasedFromFollowsTheLandingRecordsBack(t *testing.T) {
	t.Parallel()
	h, r1, r2 := strings.Repeat("1", 40), strings.Repeat("2", 40), strings.Repeat("3", 40)
	l := map[string]Landing{
		h:  {Label: "fix", Candidate: h, Event: LandRebased, Rebased: r1},
		r1: {Label: "fix", Candidate: r1, Event: LandRebased, Rebased: r2},
	}
	if got := strings.Join(rebasedFrom(r2, l), " "); got != r2+" "+r1+" "+h {
		t.Fatalf("rebasedFrom(r2) = %s", got)
	}
	if got := rebasedFrom(h, l); len(got) != 1 || got[0] != h {
		t.Fatalf("a harvested head is its own: %v", got)
	}
	l[r2] = Landing{Label: "fix", Candidate: r2, Event: LandRebased, Rebased: h}
	if got := rebasedFrom(r2, l); len(got) != maxChain+1 {
		t.Fatalf("a looping chain: %d commits, want the bound %d", len(got), maxChain+1)
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
