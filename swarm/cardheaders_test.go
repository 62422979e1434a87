package swarm

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestTheTypedHeadersOfACardAreRead(t *testing.T) {
	t.Parallel()
	text := testLine1 + "\nBASE: " + testBase + "\nPATHS: swarm/ docs/*.md\nDEPENDS-ON: a b.2\nTEST: greeting E2\nBUDGET: tokens=1000 cost_usd=1.5 turns=20\n\nDo it.\n"
	c, err := ParseCard([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.Paths, []string{"swarm/", "docs/*.md"}) || !reflect.DeepEqual(c.DependsOn, []string{"a", "b.2"}) {
		t.Fatalf("paths %q, depends-on %q", c.Paths, c.DependsOn)
	}
	if c.Test == nil || *c.Test != (TestRef{Feature: "greeting", Criterion: "E2"}) {
		t.Fatalf("test %+v", c.Test)
	}
	if c.Budget != (Budget{Tokens: 1000, CostMicros: 1_500_000, Turns: 20}) || c.Budget.String() != "tokens=1000 cost_usd=1.5 turns=20" {
		t.Fatalf("budget %+v %q", c.Budget, c.Budget)
	}
}

func TestEveryProblemOfTheTypedHeadersIsNamedAtOnce(t *testing.T) {
	t.Parallel()
	text := testLine1 + "\nBASE: " + testBase + "\nPATHS: /etc ../up ok  x\nDEPENDS-ON: fix-lease.1 bad/label\nTEST: greeting\nBUDGET: tokens=-3 cost_usd=0.1234567 nap=1\nDEPEND-ON: x\n\nDo it.\n"
	_, err := ParseCard([]byte(text))
	got := strings.Join(cardProblems(t, err), "\n")
	for _, want := range []string{
		`line 3: PATHS glob "/etc" is not a path inside the tree`,
		`line 3: PATHS glob "../up" is not a path inside the tree`,
		`line 3: PATHS separates its globs by single spaces`,
		`line 4: DEPENDS-ON names the card itself (a cycle)`,
		`line 4: DEPENDS-ON "bad/label" is not a card label`,
		"line 5: TEST \"greeting\" is not `<feature> E<n>`",
		`line 6: BUDGET tokens "-3" is not a whole number`,
		`line 6: BUDGET cost_usd "0.1234567" is not a decimal number with at most 6 digits after the point`,
		`line 6: BUDGET "nap" is not tokens, cost_usd or turns`,
		`line 7: the header DEPEND-ON is not one nwdes reads; did you mean DEPENDS-ON?`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the problems lack %q:\n%s", want, got)
		}
	}
}

func TestASpentReadingIsReadStrictly(t *testing.T) {
	t.Parallel()
	s, why := ParseSpent([]byte(`{"tokens": 1200, "cost_usd": 0.0305, "turns": 3}`))
	if why != "" || s != (Spent{Tokens: 1200, CostMicros: 30500, Turns: 3}) {
		t.Fatalf("%+v %q", s, why)
	}
	for doc, want := range map[string]string{
		`[]`:                              "not a JSON object",
		`{}`:                              "names none of tokens, cost_usd and turns",
		`{"tokens": 1, "tokens": 2}`:      `"tokens" is given twice`,
		`{"tokens": -1}`:                  `tokens "-1" is not a whole number`,
		`{"tokens": 1.5}`:                 `tokens "1.5" is not a whole number`,
		`{"cost_usd": 1e3}`:               `cost_usd "1e3" is not a decimal number`,
		`{"cost_usd": "1"}`:               `cost_usd "\"1\"" is not a decimal number`,
		`{"dollars": 1}`:                  `"dollars" is not tokens, cost_usd or turns`,
		`{"turns": 1} {}`:                 "data follows the object",
		`{"turns": 1`:                     "not valid JSON",
		`{"turns": 10000000000000000000}`: `turns "10000000000000000000" is not a whole number`,
	} {
		if _, why := ParseSpent([]byte(doc)); !strings.Contains(why, want) {
			t.Errorf("ParseSpent(%s) = %q, want %q", doc, why, want)
		}
	}
}

func TestABudgetIsPassedOnlyByAReadingOverOneOfItsBounds(t *testing.T) {
	t.Parallel()
	b := Budget{Tokens: 100, CostMicros: 2_000_000}
	if why := b.Passed(Spent{Tokens: 100, CostMicros: 2_000_000, Turns: 99}); why != "" {
		t.Fatalf("a reading at the budget passed it: %s", why)
	}
	if why := b.Passed(Spent{Tokens: 101}); why != "101 tokens, over the budget's 100" {
		t.Fatalf("got %q", why)
	}
	if got := b.Tighter(Budget{Tokens: 500, Turns: 3}); got != (Budget{Tokens: 100, CostMicros: 2_000_000, Turns: 3}) {
		t.Fatalf("tighter %+v", got)
	}
}

func TestABudgetWatchEndsAJobOverItsBudgetOrWhoseReadingsStop(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w := &spendWatch{budget: Budget{Tokens: 100}, within: time.Minute}
	if c, _ := w.look(dir, t0); c != notStopped {
		t.Fatal("no reading ended the job")
	}
	writeSpent(t, dir, `{"tokens": 10}`)
	if c, _ := w.look(dir, t0.Add(time.Second)); c != notStopped || w.spent == nil || w.spent.Tokens != 10 {
		t.Fatalf("cause %v, spent %+v", c, w.spent)
	}
	if c, why := w.look(dir, t0.Add(61*time.Second)); c != stopUnverifiable || !strings.Contains(why, "no new reading of spent.json for 1m0s") {
		t.Fatalf("cause %v: %s", c, why)
	}
	writeSpent(t, dir, `{"tokens": 101}`)
	if c, why := w.look(dir, t0.Add(62*time.Second)); c != stopBudget || why != "budget: 101 tokens, over the budget's 100" {
		t.Fatalf("cause %v: %s", c, why)
	}
}

func TestASpentFileThatIsALinkIsNotFollowedAndNamed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeSpent(t, t.TempDir(), `{"tokens": 1}`)
	if err := osSymlink("/etc/passwd", dir+"/"+SpentName); err != nil {
		t.Fatal(err)
	}
	w := &spendWatch{within: time.Minute}
	w.look(dir, time.Now())
	if w.spent != nil || w.problem != "spent.json is a symbolic link (not followed)" {
		t.Fatalf("spent %+v, problem %q", w.spent, w.problem)
	}
}

func TestTheRetryBackoffDoublesUpToItsBoundAndIsJittered(t *testing.T) {
	t.Parallel()
	p := RetryPolicy{Backoff: time.Second, MaxBackoff: 5 * time.Second}.policy()
	for _, c := range []struct {
		n    int
		r    float64
		want time.Duration
	}{{1, 0.5, time.Second}, {2, 0.5, 2 * time.Second}, {3, 0.5, 4 * time.Second}, {4, 0.5, 5 * time.Second}, {1, 0, 500 * time.Millisecond}, {2, 0.999, 2998 * time.Millisecond}} {
		if got := p.wait(c.n, c.r); got != c.want {
			t.Errorf("wait(%d, %v) = %v, want %v", c.n, c.r, got, c.want)
		}
	}
}

func TestARetryIsDecidedOnTheInjectedClockAndRandomSource(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := &Supervisor{Now: func() time.Time { return t0 }, Rand: func() float64 { return 0.25 },
		Retry: RetryPolicy{Attempts: 2, Backoff: 4 * time.Second}}
	rec := &Job{Attempt: 1}
	s.retry(rec, sandboxStartFailed(), false)
	if !rec.Retry || rec.RetryAfter != t0.Add(3*time.Second).Format(stamp) || !strings.Contains(rec.Reason, "it did not start; retried after 3s (attempt 2 of 2)") {
		t.Fatalf("%+v", rec)
	}
	last := &Job{Attempt: 2}
	s.retry(last, sandboxStartFailed(), false)
	if last.Retry || !strings.Contains(last.Reason, "not retried: attempt 2 was the last of 2") {
		t.Fatalf("%+v", last)
	}
	slow := &Job{Attempt: 1}
	s.retry(slow, sandboxExit(1), false)
	if slow.Retry || slow.Reason != "" {
		t.Fatalf("a harness that ran past the launch grace was retried: %+v", slow)
	}
}

func TestACardWaitsForItsDependenciesAndIsBlockedByOneThatFailed(t *testing.T) {
	t.Parallel()
	card := func(label string, deps ...string) Queued { return Queued{Card: &Card{Label: label, DependsOn: deps}} }
	queue := []Queued{card("a"), card("b", "a"), card("c", "b"), card("d", "gone")}
	ok := Job{Label: "a", Attempt: 1, End: EndDone, Result: VerdictOK}
	if got := Blocked(queue, nil, nil); !reflect.DeepEqual(got, map[string]string{"d": "it depends on gone, which is not queued"}) {
		t.Fatalf("blocked %v", got)
	}
	if why, wait := dependencies(queue[1].Card, map[string]bool{"a": true}, map[string]*Job{}, nil); why != "" || !wait {
		t.Fatalf("b before a finished: %q, wait %v", why, wait)
	}
	if why, wait := dependencies(queue[1].Card, map[string]bool{"a": true}, map[string]*Job{"a": &ok}, nil); why != "" || wait {
		t.Fatalf("b after a ok: %q, wait %v", why, wait)
	}
	failed := Job{Label: "b", Attempt: 2, End: EndFailed, Result: VerdictBlocked}
	got := Blocked(queue, []Job{ok, failed}, nil)
	if got["c"] != "it depends on b, whose attempt 2 ended failed with result blocked" {
		t.Fatalf("blocked %v", got)
	}
	retried := Job{Label: "b", Attempt: 1, End: EndFailed, Result: VerdictBlocked, Retry: true, RetryAfter: "2026-01-01T00:00:00Z"}
	if got := Blocked(queue, []Job{ok, retried}, nil); got["c"] != "" {
		t.Fatalf("a dependency left to retry blocked c: %v", got)
	}
}

func TestADependencyCycleThroughTheQueueIsFound(t *testing.T) {
	t.Parallel()
	deps := map[string][]string{"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
	if got := findCycle("a", deps); !reflect.DeepEqual(got, []string{"a", "b", "c", "a"}) {
		t.Fatalf("cycle %v", got)
	}
	if got := findCycle("d", deps); got != nil {
		t.Fatalf("d is in no cycle, got %v", got)
	}
}

func TestThe95thPercentileIsTheNearestRank(t *testing.T) {
	t.Parallel()
	var ds []time.Duration
	for i := 20; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Second)
	}
	if got := Percentile(ds, 95); got != 19*time.Second {
		t.Fatalf("p95 of 1..20s = %v", got)
	}
	if got := Percentile(ds[:1], 95); got != 20*time.Second {
		t.Fatalf("p95 of one = %v", got)
	}
}

func TestADeadlineBelowThe95thPercentileOfEarlierJobsWithTheSameTestIsWarnedOf(t *testing.T) {
	t.Parallel()
	test := TestRef{Feature: "greeting", Criterion: "E1"}
	queue := []Queued{{Card: &Card{Label: "a", Test: &test}}, {Card: &Card{Label: "other"}}}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	job := func(label, worker string, took time.Duration) Job {
		return Job{Label: label, Worker: worker, Started: t0.Format(stamp), Ended: t0.Add(took).Format(stamp)}
	}
	var jobs []Job
	for i := 1; i <= 20; i++ {
		jobs = append(jobs, job("a", "coder", time.Duration(i)*time.Minute))
	}
	jobs = append(jobs, job("a", "fast", time.Second), job("other", "coder", 5*time.Hour))
	if w := deadlineWarning(test, 30*time.Minute, "coder", queue, jobs); w != "" {
		t.Fatalf("a deadline above the p95 was warned of: %s", w)
	}
	w := deadlineWarning(test, 10*time.Minute, "coder", queue, jobs)
	if w != "DEADLINE 10m0s is below the 95th percentile (19m0s) of 20 earlier jobs (worker coder's) with TEST greeting E1" {
		t.Fatalf("got %q", w)
	}
	if w := deadlineWarning(test, 10*time.Minute, "fast", queue, jobs); w != "" {
		t.Fatalf("another worker's jobs counted: %s", w)
	}
	if w := deadlineWarning(TestRef{Feature: "greeting", Criterion: "E2"}, time.Second, "", queue, jobs); w != "" {
		t.Fatalf("jobs of another TEST counted: %s", w)
	}
}

func TestTheKindHeadersOfACardAreReadAndChecked(t *testing.T) {
	t.Parallel()
	cand := strings.Repeat("c", 40)
	c, err := ParseCard([]byte(testLine1 + "\nBASE: " + testBase + "\nKIND: examine\nFEATURE: greeting\nCANDIDATE: " + cand + "\nBRANCH: main\n\nExamine it.\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Kind != KindExamine || c.Feature != "greeting" || c.Candidate != cand || c.Branch != "refs/heads/main" {
		t.Fatalf("%q %q %q %q", c.Kind, c.Feature, c.Candidate, c.Branch)
	}
	if c, err := ParseCard([]byte(testLine1 + "\nBASE: " + testBase + "\n\nDo it.\n")); err != nil || c.Kind != KindProduce {
		t.Fatalf("a card without KIND is %q (%v), want produce", c.Kind, err)
	}
	for text, want := range map[string][]string{
		"KIND: review\n":                   {`line 3: KIND "review" is not produce or examine`},
		"KIND: examine\n":                  {"KIND examine wants CANDIDATE", "KIND examine wants FEATURE"},
		"CANDIDATE: " + cand + "\n":        {"CANDIDATE is for KIND examine cards"},
		"CANDIDATE: HEAD\nKIND: examine\n": {`line 3: CANDIDATE "HEAD" is not a full commit id`, "KIND examine wants FEATURE"},
		"FEATURE: a/b\n":                   {`line 3: FEATURE "a/b" is not a feature name`},
		"FEATURE: one\nTEST: two E1\n":     {"TEST names feature two but FEATURE names one"},
		"BRANCH: refs/tags/v1\n":           {`line 3: BRANCH "refs/tags/v1" is not a branch name`},
		"BRANCH: a..b\n":                   {`line 3: BRANCH "a..b" is not a branch name`},
		"BRANCH: main.lock\n":              {`line 3: BRANCH "main.lock" is not a branch name`},
	} {
		_, err := ParseCard([]byte(testLine1 + "\nBASE: " + testBase + "\n" + text + "\nDo it.\n"))
		got := strings.Join(cardProblems(t, err), "\n")
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%q: the problems lack %q:\n%s", text, w, got)
			}
		}
	}
}
