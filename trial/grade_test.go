package trial_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nwdes/nwdes/refusal"
	"github.com/nwdes/nwdes/trial"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// at is 2 March 2026 at hh:mm[:ss] UTC, in RFC 3339.
func at(hhmm string) string {
	if len(hhmm) == 5 {
		hhmm += ":00"
	}
	return "2026-03-02T" + hhmm + "Z"
}

func clock(hhmm string) time.Time {
	t, err := time.Parse(time.RFC3339, at(hhmm))
	if err != nil {
		panic(err)
	}
	return t
}

type line struct {
	At      string `json:"at"`
	Kind    string `json:"kind"`
	Segment string `json:"segment,omitempty"`
	Actor   string `json:"actor,omitempty"`
	Target  string `json:"target,omitempty"`
	Action  string `json:"action,omitempty"`
	Claimed string `json:"claimed,omitempty"`
}

func (l line) String() string {
	b, err := json.Marshal(l)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func segStart(hhmm, name string) string {
	return line{At: at(hhmm), Kind: "segment_start", Segment: name}.String()
}
func segEnd(hhmm, name, outcome string) string {
	return line{At: at(hhmm), Kind: "segment_end", Segment: name, Action: outcome}.String()
}
func intervention(hhmm, claimed string) string {
	return line{At: at(hhmm), Kind: "intervention", Actor: "operator", Target: "relay", Action: "restarted it", Claimed: claimed}.String()
}
func dispatch(hhmm string) string {
	return line{At: at(hhmm), Kind: "dispatch", Target: "child"}.String()
}
func windowOpen(hhmm, name string) string {
	return line{At: at(hhmm), Kind: "window_open", Segment: name}.String()
}
func windowClose(hhmm, name string) string {
	return line{At: at(hhmm), Kind: "window_close", Segment: name}.String()
}

// The base ledger's lines, by index.
const (
	lSupervisorStart = iota
	lSupervisorIntervention
	lSupervisorEnd
	lStandbyStart
	lStandbyEnd
	lOutsideIntervention
	lDispatch
	lWindowOpen
	lWindowClose
)

// base is a gradable ledger: two preparation segments (one failed), an
// intervention in one of them and one between them and the window, and a
// window from 10:00 to 11:00 with nothing in it.
func base() []string {
	return []string{
		segStart("09:00", "supervisor"),
		intervention("09:10", "preparation"),
		segEnd("09:20", "supervisor", "succeeded"),
		segStart("09:20", "standby turn"),
		segEnd("09:30", "standby turn", "failed"),
		intervention("09:45", ""),
		dispatch("10:00"),
		windowOpen("10:00", "window"),
		windowClose("11:00", "window"),
	}
}

func with(lines []string, extra ...string) []string { return append(slices.Clone(lines), extra...) }

func replaced(lines []string, i int, l string) []string {
	out := slices.Clone(lines)
	out[i] = l
	return out
}

func without(lines []string, i int) []string { return slices.Delete(slices.Clone(lines), i, i+1) }

const baseStart = `{"v": 1, "window": {"segment": "window", "opensAt": "2026-03-02T10:00:00Z", "closesAt": "2026-03-02T11:00:00Z"},
 "readings": {"processPersistence": {"pid": 12345}}}`

const corroboratedStart = `{"v": 1, "window": {"segment": "window", "opensAt": "2026-03-02T10:00:00Z", "closesAt": "2026-03-02T11:00:00Z",
 "corroboration": {"opensAt": "2026-03-02T12:00:00+02:00", "closesAt": "2026-03-02T11:00:00.000Z"}}, "readings": []}`

func grade(t *testing.T, start string, ledger []string, now time.Time) (*trial.Report, error) {
	t.Helper()
	s, err := trial.ParseStart([]byte(start))
	if err != nil {
		return nil, err
	}
	evs, err := trial.ParseEvents([]byte(strings.Join(ledger, "\n") + "\n"))
	if err != nil {
		return nil, err
	}
	return trial.Grade(s, evs, now)
}

// wantRefusal holds err to a TrialInvalid refusal (exit 2) under rule,
// naming lines when any are given.
func wantRefusal(t *testing.T, err error, rule trial.Rule, lines []int) {
	t.Helper()
	if err == nil {
		t.Fatalf("graded; want refusal %s", rule)
	}
	r, ok := refusal.As(err)
	if !ok || r.Name != refusal.TrialInvalid || r.Class != refusal.Refused || r.Remedy == "" {
		t.Fatalf("err = %v; want a TrialInvalid refusal with a remedy", err)
	}
	var re *trial.RuleError
	if !errors.As(err, &re) || re.Rule != rule {
		t.Fatalf("err = %v; want rule %s", err, rule)
	}
	if !strings.HasPrefix(r.Detail, re.Error()+": ") {
		t.Errorf("detail %q does not start with the rule and its lines", r.Detail)
	}
	if lines != nil && !slices.Equal(re.Lines, lines) {
		t.Errorf("lines = %v; want %v (%v)", re.Lines, lines, err)
	}
}

func TestGrade(t *testing.T) {
	t.Parallel()
	noon := clock("12:00")
	b := base()
	for _, c := range []struct {
		name   string
		start  string
		ledger []string
		now    time.Time
		rule   trial.Rule
		lines  []int // 1-based ledger lines the refusal names
		check  func(*testing.T, *trial.Report)
	}{
		{name: "a window with no intervention in it is clean, and preparation interventions are counted by segment",
			ledger: b, check: func(t *testing.T, r *trial.Report) {
				if !r.Clean() || !r.WindowIsClean || r.WindowInterventions != 0 || r.PreparationInterventions != 2 {
					t.Errorf("report = %+v", r)
				}
				if r.Provenance != trial.Declared {
					t.Errorf("provenance = %s", r.Provenance)
				}
				want := []trial.Segment{
					{Name: "supervisor", StartsAt: at("09:00"), EndsAt: at("09:20"), Outcome: trial.Succeeded, Interventions: 1},
					{Name: "standby turn", StartsAt: at("09:20"), EndsAt: at("09:30"), Outcome: trial.Failed},
				}
				if r.Segments.Count != 2 || !slices.Equal(r.Segments.Intervals, want) || r.Segments.InterventionsOutside != 1 {
					t.Errorf("segments = %+v", r.Segments)
				}
			}},
		{name: "a failed preparation segment is named", ledger: b, check: func(t *testing.T, r *trial.Report) {
			if !slices.Equal(r.Segments.Failed, []string{"standby turn"}) {
				t.Errorf("failed = %q", r.Segments.Failed)
			}
		}},
		{name: "an intervention inside the window makes it unclean", ledger: with(b, intervention("10:30", "window")),
			check: func(t *testing.T, r *trial.Report) {
				if r.Clean() || r.WindowIsClean || r.WindowInterventions != 1 || r.PreparationInterventions != 2 {
					t.Errorf("report = %+v", r)
				}
			}},
		{name: "an intervention with no claim is counted in the window by its time alone", ledger: with(b, intervention("10:30", "")),
			check: func(t *testing.T, r *trial.Report) {
				if r.Clean() || r.WindowInterventions != 1 {
					t.Errorf("report = %+v", r)
				}
			}},
		{name: "an intervention at the window's open or close instant is inside the window",
			ledger: with(b, intervention("10:00", "window"), intervention("11:00", "")),
			check: func(t *testing.T, r *trial.Report) {
				if r.Clean() || r.WindowInterventions != 2 {
					t.Errorf("report = %+v", r)
				}
			}},
		{name: "an intervention after the window closed is preparation outside every segment",
			ledger: with(b, intervention("11:00:01", "preparation")),
			check: func(t *testing.T, r *trial.Report) {
				if !r.Clean() || r.PreparationInterventions != 3 || r.Segments.InterventionsOutside != 2 {
					t.Errorf("report = %+v", r)
				}
			}},
		{name: "an intervention where one segment ends and the next begins counts once, in the one beginning",
			ledger: with(b, intervention("09:20", "")),
			check: func(t *testing.T, r *trial.Report) {
				if got := []int{r.Segments.Intervals[0].Interventions, r.Segments.Intervals[1].Interventions}; !slices.Equal(got, []int{1, 1}) {
					t.Errorf("interventions by segment = %v", got)
				}
			}},
		{name: "an intervention at the end of the last segment counts in it",
			ledger: with(b, intervention("09:30", "")),
			check: func(t *testing.T, r *trial.Report) {
				if r.Segments.Intervals[1].Interventions != 1 || r.Segments.InterventionsOutside != 1 {
					t.Errorf("segments = %+v", r.Segments)
				}
			}},
		{name: "a preparation segment ending as the window opens does not overlap it",
			ledger: with(b, segStart("09:50", "order gate"), segEnd("10:00", "order gate", "succeeded")),
			check: func(t *testing.T, r *trial.Report) {
				if r.Segments.Count != 3 || !r.Clean() {
					t.Errorf("report = %+v", r)
				}
			}},
		{name: "a preparation segment starting as the window closes does not overlap it",
			ledger: with(b, segStart("11:00", "teardown"), segEnd("11:10", "teardown", "succeeded")),
			check: func(t *testing.T, r *trial.Report) {
				if r.Segments.Count != 3 {
					t.Errorf("report = %+v", r)
				}
			}},
		{name: "segments are built from their times, not from the order of lines",
			ledger: []string{b[lWindowClose], b[lStandbyEnd], b[lSupervisorIntervention], b[lDispatch], b[lSupervisorEnd],
				b[lOutsideIntervention], b[lStandbyStart], b[lWindowOpen], b[lSupervisorStart]},
			check: func(t *testing.T, r *trial.Report) {
				if r.Segments.Intervals[0].Name != "supervisor" || r.Segments.Intervals[0].Interventions != 1 {
					t.Errorf("segments = %+v", r.Segments)
				}
			}},
		{name: "a window with corroborating store times has corroborated provenance", start: corroboratedStart, ledger: b,
			check: func(t *testing.T, r *trial.Report) {
				if r.Provenance != trial.Corroborated {
					t.Errorf("provenance = %s", r.Provenance)
				}
			}},

		{name: "two segments that overlap in time are refused, whatever the order of their lines",
			ledger: with(b, segStart("09:05", "doctor"), segEnd("09:15", "doctor", "succeeded")),
			rule:   trial.RuleSegmentsIntersect, lines: []int{1, 3, 10, 11}},
		{name: "two segments whose lines interleave are refused although line order would pair them",
			ledger: with(b, segStart("08:00", "a"), segStart("08:10", "b"), segEnd("08:20", "a", "succeeded"), segEnd("08:30", "b", "succeeded")),
			rule:   trial.RuleSegmentsIntersect, lines: []int{10, 11, 12, 13}},
		{name: "a segment inside another is refused",
			ledger: with(b, segStart("09:01", "inner"), segEnd("09:02", "inner", "failed")),
			rule:   trial.RuleSegmentsIntersect},
		{name: "two segments starting at the same instant are refused",
			ledger: with(b, segStart("09:00", "twin"), segEnd("09:00", "twin", "succeeded")),
			rule:   trial.RuleSegmentsIntersect},
		{name: "a preparation segment overlapping the window is refused",
			ledger: with(b, segStart("09:50", "late fix"), segEnd("10:05", "late fix", "succeeded")),
			rule:   trial.RulePreparationInWindow, lines: []int{10, 11}},
		{name: "a preparation segment inside the window is refused",
			ledger: with(b, segStart("10:10", "mid fix"), segEnd("10:20", "mid fix", "succeeded")),
			rule:   trial.RulePreparationInWindow},
		{name: "a segment left open is refused", ledger: without(b, lStandbyEnd),
			rule: trial.RuleSegmentOpen, lines: []int{lStandbyStart + 1}},
		{name: "a segment ending without a start is refused", ledger: without(b, lStandbyStart),
			rule: trial.RuleSegmentUnstarted},
		{name: "a segment started twice is refused", ledger: with(b, segStart("09:25", "standby turn")),
			rule: trial.RuleSegmentRepeated, lines: []int{lStandbyStart + 1, 10}},
		{name: "a segment ending before it starts is refused",
			ledger: replaced(b, lStandbyEnd, segEnd("09:19", "standby turn", "failed")),
			rule:   trial.RuleSegmentReversed},
		{name: "a segment ending with neither failed nor succeeded is refused",
			ledger: replaced(b, lStandbyEnd, segEnd("09:30", "standby turn", "done")),
			rule:   trial.RuleSegmentOutcome, lines: []int{lStandbyEnd + 1}},
		{name: "a segment ending with no action is refused",
			ledger: replaced(b, lStandbyEnd, segEnd("09:30", "standby turn", "")),
			rule:   trial.RuleSegmentOutcome},
		{name: "a segment_start naming the window is refused",
			ledger: with(b, segStart("08:00", "window"), segEnd("08:10", "window", "succeeded")),
			rule:   trial.RuleSegmentIsWindow},

		{name: "a window opening at another time than the record's is refused",
			ledger: replaced(replaced(b, lWindowOpen, windowOpen("10:05", "window")), lDispatch, dispatch("10:05")),
			rule:   trial.RuleWindowMoved, lines: []int{lWindowOpen + 1}},
		{name: "a window closing at another time than the record's is refused",
			ledger: replaced(b, lWindowClose, windowClose("10:50", "window")),
			rule:   trial.RuleWindowMoved, lines: []int{lWindowClose + 1}},
		{name: "a window named otherwise than in the record is refused",
			ledger: replaced(replaced(b, lWindowOpen, windowOpen("10:00", "run")), lWindowClose, windowClose("11:00", "run")),
			rule:   trial.RuleWindowMoved},
		{name: "a window whose open and close name different segments is refused",
			ledger: replaced(b, lWindowClose, windowClose("11:00", "other")),
			rule:   trial.RuleWindowSegmentsDiffer, lines: []int{lWindowOpen + 1, lWindowClose + 1}},
		{name: "a ledger without a window_close is refused", ledger: without(b, lWindowClose),
			rule: trial.RuleWindowBounds},
		{name: "a ledger with two window_open lines is refused", ledger: with(b, windowOpen("10:00", "window")),
			rule: trial.RuleWindowBounds, lines: []int{lWindowOpen + 1, 10}},
		{name: "a window of no duration is refused",
			start:  `{"v": 1, "window": {"segment": "window", "opensAt": "2026-03-02T10:00:00Z", "closesAt": "2026-03-02T10:00:00Z"}}`,
			ledger: replaced(b, lWindowClose, windowClose("10:00", "window")),
			rule:   trial.RuleWindowNoDuration},
		{name: "a window that closes before it opens is refused",
			start: `{"v": 1, "window": {"segment": "window", "opensAt": "2026-03-02T10:00:00Z", "closesAt": "2026-03-02T09:00:00Z"}}`,
			rule:  trial.RuleWindowNoDuration},
		{name: "a window not yet closed is refused", ledger: without(b, lWindowClose), now: clock("10:30"),
			rule: trial.RuleWindowNotClosed},
		{name: "a window closing at the grading moment has closed", ledger: b, now: clock("11:00"),
			check: func(t *testing.T, r *trial.Report) {
				if r.GradedAt != at("11:00") {
					t.Errorf("gradedAt = %s", r.GradedAt)
				}
			}},
		{name: "a line dated after the grading moment is refused", ledger: with(b, intervention("12:00:01", "")),
			rule: trial.RuleLineAfterGrading, lines: []int{10}},
		{name: "a store time disagreeing with the declared window is refused",
			start: `{"v": 1, "window": {"segment": "window", "opensAt": "2026-03-02T10:00:00Z", "closesAt": "2026-03-02T11:00:00Z",
			  "corroboration": {"opensAt": "2026-03-02T09:58:00Z", "closesAt": "2026-03-02T11:00:00Z"}}}`,
			rule: trial.RuleCorroborationDisagrees},

		{name: "two dispatch lines are refused", ledger: with(b, dispatch("10:00")),
			rule: trial.RuleDispatchCount, lines: []int{lDispatch + 1, 10}},
		{name: "a ledger without a dispatch is refused", ledger: without(b, lDispatch),
			rule: trial.RuleDispatchCount},
		{name: "a dispatch before the window's open is refused", ledger: replaced(b, lDispatch, dispatch("09:55")),
			rule: trial.RuleDispatchNotAtOpen, lines: []int{lDispatch + 1, lWindowOpen + 1}},

		{name: "an intervention claiming the window at a preparation time is refused",
			ledger: replaced(b, lSupervisorIntervention, intervention("09:10", "window")),
			rule:   trial.RuleClaimContradicted, lines: []int{lSupervisorIntervention + 1}},
		{name: "an intervention claiming preparation at a window time is refused",
			ledger: with(b, intervention("10:59", "preparation")),
			rule:   trial.RuleClaimContradicted, lines: []int{10}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			start, ledger, now := c.start, c.ledger, c.now
			if start == "" {
				start = baseStart
			}
			if ledger == nil {
				ledger = b
			}
			if now.IsZero() {
				now = noon
			}
			r, err := grade(t, start, ledger, now)
			if c.rule != "" {
				wantRefusal(t, err, c.rule, c.lines)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Clean() != (r.WindowInterventions == 0) {
				t.Errorf("Clean() = %v with %d window interventions", r.Clean(), r.WindowInterventions)
			}
			c.check(t, r)
		})
	}
}

func TestGradeRefusesAStartRecordItIsGivenBuiltWithoutADuration(t *testing.T) {
	t.Parallel()
	evs, err := trial.ParseEvents([]byte(strings.Join(base(), "\n")))
	if err != nil {
		t.Fatal(err)
	}
	s := &trial.Start{Window: trial.Window{Segment: "window", OpensAt: clock("10:00"), ClosesAt: clock("10:00")}}
	_, err = trial.Grade(s, evs, clock("12:00"))
	wantRefusal(t, err, trial.RuleWindowNoDuration, nil)
	_, err = trial.Grade(nil, evs, clock("12:00"))
	wantRefusal(t, err, trial.RuleStartMalformed, nil)
}

func TestGradeChecksEventsItIsGivenDecoded(t *testing.T) {
	t.Parallel()
	s, err := trial.ParseStart([]byte(baseStart))
	if err != nil {
		t.Fatal(err)
	}
	var evs []trial.Event
	if err := json.Unmarshal([]byte("["+strings.Join(base(), ",")+"]"), &evs); err != nil {
		t.Fatal(err)
	}
	r, err := trial.Grade(s, evs, clock("12:00"))
	if err != nil || !r.Clean() {
		t.Fatalf("Grade = %+v, %v", r, err)
	}
	bad := slices.Clone(evs)
	bad[3].Kind = "segment_begin"
	_, err = trial.Grade(s, bad, clock("12:00"))
	wantRefusal(t, err, trial.RuleLedgerMalformed, []int{4})
	bad = slices.Clone(evs)
	bad[2].At = time.Time{}
	_, err = trial.Grade(s, bad, clock("12:00"))
	wantRefusal(t, err, trial.RuleLedgerMalformed, []int{3})

	err = json.Unmarshal([]byte(`[{"at":"2026-03-02T10:00:00Z","kind":"dispatch","kind":"intervention"}]`), &evs)
	wantRefusal(t, err, trial.RuleLedgerMalformed, nil)
}

func TestAnEventsCanonicalJSONReadsBackAsTheSameEvent(t *testing.T) {
	t.Parallel()
	evs, err := trial.ParseEvents([]byte(`{"claimed":"window","at":"2026-03-02T12:30:00.5+02:00","kind":"intervention","actor":"user","target":"t","action":"a","segment":"s"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(evs[0])
	if err != nil {
		t.Fatal(err)
	}
	want := `{"at":"2026-03-02T10:30:00.5Z","kind":"intervention","segment":"s","actor":"user","target":"t","action":"a","claimed":"window"}`
	if string(b) != want {
		t.Fatalf("canonical JSON = %s\nwant %s", b, want)
	}
}

func TestParseEventsRefusesAMalformedLineNamingIt(t *testing.T) {
	t.Parallel()
	good := intervention("09:10", "")
	for _, c := range []struct{ name, line string }{
		{"an unknown field", `{"at":"2026-03-02T09:00:00Z","kind":"dispatch","note":"x"}`},
		{"a duplicate key", `{"at":"2026-03-02T09:00:00Z","kind":"dispatch","at":"2026-03-02T09:00:00Z"}`},
		{"a key in another case", `{"At":"2026-03-02T09:00:00Z","kind":"dispatch"}`},
		{"a time that is not RFC 3339", `{"at":"2026-03-02 09:00:00","kind":"dispatch"}`},
		{"a time with no zone", `{"at":"2026-03-02T09:00:00","kind":"dispatch"}`},
		{"no time", `{"kind":"dispatch"}`},
		{"an unknown kind", `{"at":"2026-03-02T09:00:00Z","kind":"pause"}`},
		{"no kind", `{"at":"2026-03-02T09:00:00Z"}`},
		{"a null", `{"at":"2026-03-02T09:00:00Z","kind":"dispatch","segment":null}`},
		{"a number where a string belongs", `{"at":"2026-03-02T09:00:00Z","kind":"dispatch","actor":7}`},
		{"an unknown claim", `{"at":"2026-03-02T09:00:00Z","kind":"intervention","claimed":"neither"}`},
		{"a segment line naming no segment", `{"at":"2026-03-02T09:00:00Z","kind":"segment_start"}`},
		{"two objects on one line", `{"at":"2026-03-02T09:00:00Z","kind":"dispatch"} {}`},
		{"an array", `[]`},
		{"truncated JSON", `{"at":"2026-03-02T09:00:00Z","kind":"disp`},
		{"bytes that are not UTF-8", "{\"at\":\"2026-03-02T09:00:00Z\",\"kind\":\"intervention\",\"action\":\"\xff\"}"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := trial.ParseEvents([]byte(good + "\n\n" + c.line + "\n" + good + "\n"))
			wantRefusal(t, err, trial.RuleLedgerMalformed, []int{3})
			if r, _ := refusal.As(err); !strings.Contains(r.Detail, "line 3") {
				t.Errorf("detail %q does not name line 3", r.Detail)
			}
		})
	}
}

func TestParseStart(t *testing.T) {
	t.Parallel()
	s, err := trial.ParseStart([]byte(baseStart))
	if err != nil {
		t.Fatal(err)
	}
	if s.Window.Segment != "window" || !s.Window.OpensAt.Equal(clock("10:00")) || !s.Window.ClosesAt.Equal(clock("11:00")) ||
		s.Window.Corroboration != nil || s.Provenance() != trial.Declared {
		t.Errorf("start = %+v", s)
	}
	if string(s.Readings) != `{"processPersistence": {"pid": 12345}}` {
		t.Errorf("readings = %s; want them as written", s.Readings)
	}
	c, err := trial.ParseStart([]byte(corroboratedStart))
	if err != nil || c.Provenance() != trial.Corroborated || string(c.Readings) != "[]" {
		t.Errorf("corroborated start = %+v, %v", c, err)
	}
	if s, err := trial.ParseStart([]byte(`{"v":1,"window":{"segment":"w","opensAt":"2026-03-02T10:00:00Z","closesAt":"2026-03-02T11:00:00Z"},"readings":{"a":1,"a":2}}`)); err != nil || s.Readings == nil {
		t.Errorf("readings are the preflight's to check; got %v", err)
	}
}

func TestParseStartRefuses(t *testing.T) {
	t.Parallel()
	const w = `"segment": "window", "opensAt": "2026-03-02T10:00:00Z", "closesAt": "2026-03-02T11:00:00Z"`
	for _, c := range []struct {
		name, record string
		rule         trial.Rule
	}{
		{"an unknown top-level key", `{"v": 1, "window": {` + w + `}, "trialRoot": "/t"}`, trial.RuleStartMalformed},
		{"an unknown window key", `{"v": 1, "window": {` + w + `, "grace": 5}}`, trial.RuleStartMalformed},
		{"a duplicate key", `{"v": 1, "v": 1, "window": {` + w + `}}`, trial.RuleStartMalformed},
		{"a duplicate window key", `{"v": 1, "window": {` + w + `, "segment": "other"}}`, trial.RuleStartMalformed},
		{"a key in another case", `{"V": 1, "window": {` + w + `}}`, trial.RuleStartMalformed},
		{"no version", `{"window": {` + w + `}}`, trial.RuleStartMalformed},
		{"another version", `{"v": 2, "window": {` + w + `}}`, trial.RuleStartMalformed},
		{"no window", `{"v": 1}`, trial.RuleStartMalformed},
		{"a window naming no segment", `{"v": 1, "window": {"opensAt": "2026-03-02T10:00:00Z", "closesAt": "2026-03-02T11:00:00Z"}}`, trial.RuleStartMalformed},
		{"a window with an empty segment", `{"v": 1, "window": {"segment": "", "opensAt": "2026-03-02T10:00:00Z", "closesAt": "2026-03-02T11:00:00Z"}}`, trial.RuleStartMalformed},
		{"a window without a close", `{"v": 1, "window": {"segment": "w", "opensAt": "2026-03-02T10:00:00Z"}}`, trial.RuleStartMalformed},
		{"a time that is not RFC 3339", `{"v": 1, "window": {"segment": "w", "opensAt": "10:00", "closesAt": "2026-03-02T11:00:00Z"}}`, trial.RuleStartMalformed},
		{"a corroboration with one bound", `{"v": 1, "window": {` + w + `, "corroboration": {"opensAt": "2026-03-02T10:00:00Z"}}}`, trial.RuleStartMalformed},
		{"a null corroboration", `{"v": 1, "window": {` + w + `, "corroboration": null}}`, trial.RuleStartMalformed},
		{"a corroborating close that disagrees", `{"v": 1, "window": {` + w + `, "corroboration": {"opensAt": "2026-03-02T10:00:00Z", "closesAt": "2026-03-02T11:00:01Z"}}}`, trial.RuleCorroborationDisagrees},
		{"a window of no duration", `{"v": 1, "window": {"segment": "w", "opensAt": "2026-03-02T10:00:00Z", "closesAt": "2026-03-02T12:00:00+02:00"}}`, trial.RuleWindowNoDuration},
		{"trailing content", `{"v": 1, "window": {` + w + `}} {}`, trial.RuleStartMalformed},
		{"an array", `[]`, trial.RuleStartMalformed},
		{"bytes that are not UTF-8", "{\"v\": 1, \"window\": {" + w + "}, \"readings\": \"\xff\"}", trial.RuleStartMalformed},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := trial.ParseStart([]byte(c.record))
			wantRefusal(t, err, c.rule, nil)
		})
	}
}

// A grade is a document others compare byte for byte: the same record and
// ledger give the same bytes, in whatever order the lines were written and
// whatever offset their times were written in.
func TestTheReportIsByteStable(t *testing.T) {
	t.Parallel()
	ledger := with(base(), intervention("10:30", "window"), segStart("11:10", "teardown"), segEnd("11:20", "teardown", "failed"),
		intervention("11:15", ""))
	first, err := grade(t, corroboratedStart, ledger, clock("12:00"))
	if err != nil {
		t.Fatal(err)
	}
	again, err := grade(t, corroboratedStart, ledger, clock("12:00"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.JSON(), again.JSON()) || first.Text() != again.Text() {
		t.Fatal("grading twice gave different bytes")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		shuffled := slices.Clone(ledger)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		r, err := grade(t, corroboratedStart, shuffled, clock("12:00"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first.JSON(), r.JSON()) || first.Text() != r.Text() {
			t.Fatalf("shuffled ledger gave other bytes:\n%s\n%s", first.JSON(), r.JSON())
		}
	}
	evs, err := trial.ParseEvents([]byte(strings.Join(ledger, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	tokyo := time.FixedZone("JST", 9*3600)
	for i := range evs {
		evs[i].At = evs[i].At.In(tokyo)
	}
	s, err := trial.ParseStart([]byte(corroboratedStart))
	if err != nil {
		t.Fatal(err)
	}
	r, err := trial.Grade(s, evs, clock("12:00").In(tokyo))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.JSON(), r.JSON()) || first.Text() != r.Text() {
		t.Fatalf("times in another zone gave other bytes:\n%s\n%s", first.JSON(), r.JSON())
	}
	golden(t, "report.json", first.JSON())
	golden(t, "report.txt", []byte(first.Text()))
}

func TestTheTextNamesTheProvenanceBesideTheJudgment(t *testing.T) {
	t.Parallel()
	r, err := grade(t, baseStart, with(base(), intervention("10:30", "")), clock("12:00"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Text(), "window clean: no (1 intervention inside the window; bounds declared)") {
		t.Errorf("text:\n%s", r.Text())
	}
	var doc map[string]any
	if err := json.Unmarshal(r.JSON(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc["windowIsClean"] != false || doc["provenance"] != "declared" || doc["windowInterventions"] != 1.0 {
		t.Errorf("JSON: %s", r.JSON())
	}
}

func TestTheTextEscapesNamesFromTheLedger(t *testing.T) {
	t.Parallel()
	ledger := with(base(), segStart("08:00", "evil\x1b[2J\nname"), segEnd("08:10", "evil\x1b[2J\nname", "failed"))
	r, err := grade(t, baseStart, ledger, clock("12:00"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(r.Text(), "\x1b") || strings.Contains(r.Text(), "evil\x1b") || !strings.Contains(r.Text(), `"evil\x1b[2J\nname"`) {
		t.Errorf("text:\n%s", r.Text())
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -run %s -update):\n%s", name, t.Name(), got)
	}
}
