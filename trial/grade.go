package trial

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/refusal"
)

// Kind is what a ledger line records.
type Kind string

const (
	// KindDispatch is the dispatch that opens the window; a ledger has
	// exactly one, at the window's open.
	KindDispatch Kind = "dispatch"
	// KindSegmentStart and KindSegmentEnd bound a preparation segment.
	KindSegmentStart Kind = "segment_start"
	KindSegmentEnd   Kind = "segment_end"
	// KindWindowOpen and KindWindowClose bound the measured window.
	KindWindowOpen  Kind = "window_open"
	KindWindowClose Kind = "window_close"
	// KindIntervention is something an operator or a user did by hand.
	KindIntervention Kind = "intervention"
)

var kinds = []Kind{KindDispatch, KindSegmentStart, KindSegmentEnd, KindWindowOpen, KindWindowClose, KindIntervention}

// Claim is the label an intervention gives itself. It never decides where
// the intervention is counted (its time does); a claim the time
// contradicts is refused.
type Claim string

const (
	ClaimPreparation Claim = "preparation"
	ClaimWindow      Claim = "window"
)

// Outcome is how a segment ended, written in its segment_end's action.
type Outcome string

const (
	Failed    Outcome = "failed"
	Succeeded Outcome = "succeeded"
)

// Event is one ledger line:
//
//	{"at": "<RFC 3339>", "kind": "<Kind>", "segment": "<name>",
//	 "actor": "operator|user", "target": "<task, store or process>",
//	 "action": "<what was done>", "claimed": "preparation|window"}
//
// at and kind are required; segment is required on segment_start,
// segment_end, window_open and window_close; claimed, when given, is
// "preparation" or "window". Other keys, a key given twice or in another
// case, a null and a value that is not a string are refused. actor, target
// and action are free text, except that a segment_end's action is its
// Outcome.
//
// Event's JSON form (MarshalJSON) is canonical: keys in the order above,
// empty ones left out, at in UTC. UnmarshalJSON is as strict as
// ParseEvents, so a list of events decoded with encoding/json (a JSON
// array, or one object per stored record) is held to the same rules.
type Event struct {
	At      time.Time
	Kind    Kind
	Segment string
	Actor   string
	Target  string
	Action  string
	Claimed Claim
	// Line is the event's 1-based line in the ledger it was read from,
	// for messages; Grade numbers an event without one by its position
	// in the list it was given.
	Line int
}

// eventJSON is Event as written.
type eventJSON struct {
	At      string `json:"at"`
	Kind    Kind   `json:"kind"`
	Segment string `json:"segment,omitempty"`
	Actor   string `json:"actor,omitempty"`
	Target  string `json:"target,omitempty"`
	Action  string `json:"action,omitempty"`
	Claimed Claim  `json:"claimed,omitempty"`
}

// MarshalJSON writes the event's canonical JSON.
func (e Event) MarshalJSON() ([]byte, error) {
	return json.Marshal(eventJSON{At: stamp(e.At), Kind: e.Kind, Segment: e.Segment, Actor: e.Actor,
		Target: e.Target, Action: e.Action, Claimed: e.Claimed})
}

// UnmarshalJSON reads one event strictly (see Event). Line is left as it
// was. Its refusal is refusal.TrialInvalid.
func (e *Event) UnmarshalJSON(b []byte) error {
	ev, err := decodeEvent(b)
	if err != nil {
		return refuse(RuleLedgerMalformed, nil, "ledger event: %v", err)
	}
	ev.Line = e.Line
	*e = ev
	return nil
}

// ParseEvents reads a ledger: one event (see Event) per line, blank lines
// skipped. A refusal (refusal.TrialInvalid) names the line.
func ParseEvents(b []byte) ([]Event, error) {
	var evs []Event
	for i, l := range bytes.Split(b, []byte("\n")) {
		if !utf8.Valid(l) {
			return nil, refuse(RuleLedgerMalformed, []int{i + 1}, "not UTF-8")
		}
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		ev, err := decodeEvent(l)
		if err != nil {
			return nil, refuse(RuleLedgerMalformed, []int{i + 1}, "%v", err)
		}
		ev.Line = i + 1
		evs = append(evs, ev)
	}
	return evs, nil
}

func decodeEvent(b []byte) (Event, error) {
	m, err := members(b, "at", "kind", "segment", "actor", "target", "action", "claimed")
	if err != nil {
		return Event{}, err
	}
	var ev Event
	var kind, claimed string
	for _, f := range []struct {
		key string
		to  *string
	}{{"kind", &kind}, {"segment", &ev.Segment}, {"actor", &ev.Actor}, {"target", &ev.Target},
		{"action", &ev.Action}, {"claimed", &claimed}} {
		if *f.to, err = stringMember(m, f.key, false); err != nil {
			return Event{}, err
		}
	}
	ev.Kind, ev.Claimed = Kind(kind), Claim(claimed)
	if _, ok := m["at"]; !ok {
		return Event{}, errors.New("no at")
	}
	if ev.At, err = timeMember(m, "at"); err != nil {
		return Event{}, err
	}
	return ev, ev.check()
}

// check holds one event, however it was built, to the rules it can break
// alone.
func (e Event) check() error {
	if e.Kind == "" {
		return errors.New("no kind")
	}
	if !slices.Contains(kinds, e.Kind) {
		names := make([]string, len(kinds))
		for i, k := range kinds {
			names[i] = string(k)
		}
		return fmt.Errorf("unknown kind %q (known: %s)", e.Kind, strings.Join(names, ", "))
	}
	if e.At.IsZero() {
		return errors.New("no at")
	}
	if !inRange(e.At) {
		return fmt.Errorf("at %s is outside the years 0000 to 9999 in UTC", stamp(e.At))
	}
	switch e.Kind {
	case KindSegmentStart, KindSegmentEnd, KindWindowOpen, KindWindowClose:
		if e.Segment == "" {
			return fmt.Errorf("a %s line names no segment", e.Kind)
		}
	}
	if e.Claimed != "" && e.Claimed != ClaimPreparation && e.Claimed != ClaimWindow {
		return fmt.Errorf("claimed %q is neither %q nor %q", e.Claimed, ClaimPreparation, ClaimWindow)
	}
	return nil
}

// Rule names the rule of the trial ledger a refusal applies. Every refusal
// from this package is refusal.TrialInvalid wrapping a *RuleError that
// carries the rule and the ledger lines it concerns; the refusal's detail
// starts with the rule.
type Rule string

const (
	RuleStartMalformed  Rule = "start-malformed"  // the start record cannot be read as one
	RuleLedgerMalformed Rule = "ledger-malformed" // a ledger line cannot be read as an event
	// RuleWindowNoDuration: the window closes at or before its open.
	RuleWindowNoDuration Rule = "window-without-duration"
	// RuleCorroborationDisagrees: a store time disagrees with the declared bound.
	RuleCorroborationDisagrees Rule = "corroboration-disagrees"
	// RuleWindowNotClosed: the window closes after the grading moment.
	RuleWindowNotClosed Rule = "window-not-closed"
	// RuleLineAfterGrading: a line is dated after the grading moment.
	RuleLineAfterGrading Rule = "line-after-grading"
	// RuleWindowBounds: the ledger has not exactly one window_open and one window_close.
	RuleWindowBounds Rule = "window-bounds"
	// RuleWindowSegmentsDiffer: window_open and window_close name different segments.
	RuleWindowSegmentsDiffer Rule = "window-segments-differ"
	// RuleWindowMoved: the ledger's window is not the one the record declares.
	RuleWindowMoved Rule = "window-moved"
	// RuleDispatchCount: the ledger has not exactly one dispatch line.
	RuleDispatchCount Rule = "dispatch-count"
	// RuleDispatchNotAtOpen: the dispatch is not at the window's open.
	RuleDispatchNotAtOpen Rule = "dispatch-not-at-open"
	// RuleSegmentIsWindow: a segment_start or segment_end names the window.
	RuleSegmentIsWindow Rule = "segment-is-window"
	// RuleSegmentRepeated: a segment starts or ends twice.
	RuleSegmentRepeated Rule = "segment-repeated"
	// RuleSegmentUnstarted: a segment ends with no start.
	RuleSegmentUnstarted Rule = "segment-unstarted"
	// RuleSegmentOpen: a segment starts and never ends.
	RuleSegmentOpen Rule = "segment-open"
	// RuleSegmentReversed: a segment ends before it starts.
	RuleSegmentReversed Rule = "segment-reversed"
	// RuleSegmentOutcome: a segment_end's action is neither failed nor succeeded.
	RuleSegmentOutcome Rule = "segment-outcome"
	// RuleSegmentsIntersect: two segments share more than a boundary instant.
	RuleSegmentsIntersect Rule = "segments-intersect"
	// RulePreparationInWindow: a preparation segment overlaps the window.
	RulePreparationInWindow Rule = "preparation-in-window"
	// RuleClaimContradicted: an intervention's claimed label contradicts its time.
	RuleClaimContradicted Rule = "claim-contradicted"
)

// RuleError is the cause inside every refusal of this package: the rule
// and the ledger lines (1-based, ascending) it concerns, if any.
type RuleError struct {
	Rule  Rule
	Lines []int
}

func (e *RuleError) Error() string {
	if len(e.Lines) == 0 {
		return string(e.Rule)
	}
	return string(e.Rule) + " (ledger " + lineList(e.Lines) + ")"
}

func refuse(rule Rule, lines []int, format string, args ...any) error {
	lines = slices.Clone(lines)
	slices.Sort(lines)
	lines = slices.Compact(lines)
	re := &RuleError{Rule: rule, Lines: lines}
	return refusal.New(refusal.TrialInvalid, remedy(rule), "%s: %s", re, fmt.Sprintf(format, args...)).Wrap(re)
}

func remedy(r Rule) string {
	switch r {
	case RuleStartMalformed:
		return "write the start record as one JSON object of the documented shape (v, window, readings)"
	case RuleLedgerMalformed:
		return "write each ledger line as one JSON object with at (RFC 3339), a known kind and the fields that kind needs"
	case RuleWindowNoDuration:
		return "declare a window whose close is after its open"
	case RuleCorroborationDisagrees:
		return "declare the window the store recorded, or leave the corroboration out and grade it as declared"
	case RuleWindowNotClosed, RuleLineAfterGrading:
		return "grade the trial after its window has closed and its ledger is complete"
	case RuleWindowBounds, RuleWindowSegmentsDiffer, RuleWindowMoved:
		return "record one window_open and one window_close naming the record's window segment at the record's times"
	case RuleDispatchCount, RuleDispatchNotAtOpen:
		return "record exactly one dispatch line, at the window's open"
	case RuleSegmentIsWindow:
		return "bound the window with window_open and window_close, and name preparation segments differently"
	case RuleSegmentRepeated, RuleSegmentUnstarted, RuleSegmentOpen, RuleSegmentReversed:
		return "record each preparation segment as one segment_start and one later segment_end of the same name"
	case RuleSegmentOutcome:
		return `end every segment with action "failed" or "succeeded"`
	case RuleSegmentsIntersect:
		return "record segments that do not run at the same time; preparation that did overlap cannot be graded"
	case RulePreparationInWindow:
		return "preparation that ran inside the window makes the trial ungradable; run it again with preparation finished before the dispatch"
	case RuleClaimContradicted:
		return "drop or correct the claimed label; an intervention is counted where its time puts it"
	}
	return ""
}

// lineList is "line 3", "lines 3 and 7" or "lines 2, 5 and 9", the first
// few only.
func lineList(lines []int) string {
	const shown = 6
	s := make([]string, 0, shown)
	for i, l := range lines {
		if i == shown {
			break
		}
		s = append(s, strconv.Itoa(l))
	}
	switch {
	case len(lines) == 1:
		return "line " + s[0]
	case len(lines) > shown:
		return "lines " + strings.Join(s, ", ") + fmt.Sprintf(", … (%d in all)", len(lines))
	}
	return "lines " + strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// Report is the grade of a trial's window. Its JSON (Report.JSON) is:
//
//	{
//	  "window": {"segment": "window", "opensAt": "…", "closesAt": "…"},
//	  "provenance": "declared" | "corroborated",
//	  "windowIsClean": true,
//	  "windowInterventions": 0,
//	  "preparationInterventions": 2,
//	  "segments": {
//	    "count": 2,
//	    "failed": ["restart supervisor"],
//	    "interventionsOutside": 1,
//	    "intervals": [{"name": "…", "startsAt": "…", "endsAt": "…",
//	                   "outcome": "failed" | "succeeded", "interventions": 1}]
//	  },
//	  "gradedAt": "…"
//	}
//
// Times are RFC 3339 in UTC. segments describes the preparation segments
// (every segment but the window) in the order they started; failed names
// those that failed, in the same order; interventionsOutside counts the
// preparation interventions that fall in no segment.
// preparationInterventions counts every intervention outside the window.
type Report struct {
	Window                   Bounds     `json:"window"`
	Provenance               Provenance `json:"provenance"`
	WindowIsClean            bool       `json:"windowIsClean"`
	WindowInterventions      int        `json:"windowInterventions"`
	PreparationInterventions int        `json:"preparationInterventions"`
	Segments                 Segments   `json:"segments"`
	GradedAt                 string     `json:"gradedAt"`
}

// Bounds is the window a report graded.
type Bounds struct {
	Segment  string `json:"segment"`
	OpensAt  string `json:"opensAt"`
	ClosesAt string `json:"closesAt"`
}

// Segments summarises the preparation segments.
type Segments struct {
	Count                int       `json:"count"`
	Failed               []string  `json:"failed"`
	InterventionsOutside int       `json:"interventionsOutside"`
	Intervals            []Segment `json:"intervals"`
}

// Segment is one preparation segment and the interventions its interval
// holds.
type Segment struct {
	Name          string  `json:"name"`
	StartsAt      string  `json:"startsAt"`
	EndsAt        string  `json:"endsAt"`
	Outcome       Outcome `json:"outcome"`
	Interventions int     `json:"interventions"`
}

// Clean reports whether no intervention fell inside the window: the
// judgment (clean or not) the CLI maps to an exit code.
func (r *Report) Clean() bool { return r.WindowIsClean }

// JSON is the report as one indented JSON document ending in a newline;
// the same inputs give the same bytes.
func (r *Report) JSON() []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		// A Report holds only strings, numbers and booleans, which
		// always encode.
		return []byte("{}\n")
	}
	return text.JSON(buf.Bytes())
}

// Text is the report for a reader; the same inputs give the same bytes.
// Whether the window is clean is never printed without the provenance of
// its bounds.
func (r *Report) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "window %s: %s to %s, bounds %s\n", quote(r.Window.Segment), r.Window.OpensAt, r.Window.ClosesAt, r.Provenance)
	clean := "no"
	if r.WindowIsClean {
		clean = "yes"
	}
	fmt.Fprintf(&b, "window clean: %s (%s inside the window; bounds %s)\n", clean, text.Plural(r.WindowInterventions, "intervention", "interventions"), r.Provenance)
	fmt.Fprintf(&b, "preparation: %s, %d failed; %s outside the window\n", text.Plural(r.Segments.Count, "segment", "segments"),
		len(r.Segments.Failed), text.Plural(r.PreparationInterventions, "intervention", "interventions"))
	for _, s := range r.Segments.Intervals {
		fmt.Fprintf(&b, "  %s %s to %s, %s, %s\n", quote(s.Name), s.StartsAt, s.EndsAt, s.Outcome,
			text.Plural(s.Interventions, "intervention", "interventions"))
	}
	if r.Segments.InterventionsOutside > 0 {
		fmt.Fprintf(&b, "  outside every segment: %s\n", text.Plural(r.Segments.InterventionsOutside, "intervention", "interventions"))
	}
	if len(r.Segments.Failed) > 0 {
		names := make([]string, len(r.Segments.Failed))
		for i, n := range r.Segments.Failed {
			names[i] = quote(n)
		}
		fmt.Fprintf(&b, "failed: %s\n", strings.Join(names, ", "))
	}
	fmt.Fprintf(&b, "graded at %s\n", r.GradedAt)
	return b.String()
}

func quote(s string) string { return `"` + text.TerminalLine(s) + `"` }

// segment is one segment as the ledger bounds it.
type segment struct {
	name       string
	start, end *Event
}

// Grade grades a trial's window at the moment now from its start record
// and its ledger (in any order: segments are built from their times, not
// from the order of lines). It refuses (refusal.TrialInvalid wrapping a
// *RuleError naming the rule and lines) when
//
//   - the record's window has no duration, its corroboration disagrees,
//     or it closes after now;
//   - an event is malformed, or dated after now;
//   - the ledger has not exactly one window_open and one window_close, they
//     name different segments, or either differs from the record's window
//     in segment or time;
//   - the ledger has not exactly one dispatch, or it is not at the
//     window's open;
//   - a segment_start or segment_end names the window, a segment starts or
//     ends twice, ends without a start, starts and never ends, ends before
//     it starts, or ends with an action other than failed or succeeded;
//   - two segments intersect: they share more than one instant at which
//     one ends and the other begins (two that begin together intersect);
//   - a preparation segment intersects the window in the same sense;
//   - an intervention's claimed label contradicts its time.
//
// An intervention is a window intervention when its time is within the
// window's bounds, both included, and a preparation intervention
// otherwise; one of those is counted in the segment whose interval (both
// ends included) holds it — at an instant where one segment ends and the
// next begins, the one beginning — or as outside every segment.
func Grade(start *Start, events []Event, now time.Time) (*Report, error) {
	if start == nil {
		return nil, refuse(RuleStartMalformed, nil, "there is no start record")
	}
	if err := start.validate(); err != nil {
		return nil, err
	}
	w := start.Window
	if w.ClosesAt.After(now) {
		return nil, refuse(RuleWindowNotClosed, nil, "the window closes at %s, after the grading moment %s: it cannot be graded until it has closed",
			stamp(w.ClosesAt), stamp(now))
	}
	evs := slices.Clone(events)
	for i := range evs {
		if evs[i].Line == 0 {
			evs[i].Line = i + 1
		}
		if err := evs[i].check(); err != nil {
			return nil, refuse(RuleLedgerMalformed, []int{evs[i].Line}, "%v", err)
		}
	}
	slices.SortStableFunc(evs, compareEvents)
	for _, e := range evs {
		if e.At.After(now) {
			return nil, refuse(RuleLineAfterGrading, []int{e.Line}, "a line is dated %s, after the grading moment %s", stamp(e.At), stamp(now))
		}
	}
	if err := checkWindow(w, evs); err != nil {
		return nil, err
	}
	segs, err := buildSegments(w, evs)
	if err != nil {
		return nil, err
	}
	return assemble(start, segs, evs, now)
}

// compareEvents orders events by time, then by content, then by line, so
// that which of several faults is reported does not depend on how the
// ledger's lines were ordered, as far as their content tells them apart.
func compareEvents(a, b Event) int {
	return cmp.Or(a.At.Compare(b.At), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Segment, b.Segment),
		cmp.Compare(a.Action, b.Action), cmp.Compare(a.Claimed, b.Claimed), cmp.Compare(a.Actor, b.Actor),
		cmp.Compare(a.Target, b.Target), cmp.Compare(a.Line, b.Line))
}

func ofKind(evs []Event, k Kind) []Event {
	var out []Event
	for _, e := range evs {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

func linesOf(evs ...Event) []int {
	out := make([]int, len(evs))
	for i, e := range evs {
		out[i] = e.Line
	}
	return out
}

// checkWindow holds the ledger's window lines and its dispatch to the
// record's window.
func checkWindow(w Window, evs []Event) error {
	opens, closes := ofKind(evs, KindWindowOpen), ofKind(evs, KindWindowClose)
	for _, b := range []struct {
		kind Kind
		evs  []Event
	}{{KindWindowOpen, opens}, {KindWindowClose, closes}} {
		if len(b.evs) != 1 {
			return refuse(RuleWindowBounds, linesOf(b.evs...), "the ledger has %s; a window is bounded by exactly one",
				text.Plural(len(b.evs), string(b.kind)+" line", string(b.kind)+" lines"))
		}
	}
	o, c := opens[0], closes[0]
	if o.Segment != c.Segment {
		return refuse(RuleWindowSegmentsDiffer, linesOf(o, c), "window_open names segment %q and window_close names %q: a window is one named interval",
			o.Segment, c.Segment)
	}
	if o.Segment != w.Segment {
		return refuse(RuleWindowMoved, linesOf(o, c), "the ledger's window is segment %q, the record declares %q", o.Segment, w.Segment)
	}
	if !o.At.Equal(w.OpensAt) {
		return refuse(RuleWindowMoved, linesOf(o), "the ledger's window opens at %s, the record declares %s: a moved bound moves interventions out of the window",
			stamp(o.At), stamp(w.OpensAt))
	}
	if !c.At.Equal(w.ClosesAt) {
		return refuse(RuleWindowMoved, linesOf(c), "the ledger's window closes at %s, the record declares %s: a moved bound moves interventions out of the window",
			stamp(c.At), stamp(w.ClosesAt))
	}
	ds := ofKind(evs, KindDispatch)
	if len(ds) != 1 {
		return refuse(RuleDispatchCount, linesOf(ds...), "the ledger has %s; the window opens at exactly one",
			text.Plural(len(ds), "dispatch line", "dispatch lines"))
	}
	if !ds[0].At.Equal(w.OpensAt) {
		return refuse(RuleDispatchNotAtOpen, linesOf(ds[0], o), "the dispatch is at %s and the window opens at %s: the window opens at the dispatch",
			stamp(ds[0].At), stamp(w.OpensAt))
	}
	return nil
}

// intersect reports whether two closed intervals share more than an
// instant at which one ends and the other begins.
func intersect(aStart, aEnd, bStart, bEnd time.Time) bool {
	return aStart.Equal(bStart) || (aStart.Before(bEnd) && bStart.Before(aEnd))
}

// buildSegments pairs segment_start and segment_end lines by name into
// intervals ordered by start, and holds them to the segment rules.
func buildSegments(w Window, evs []Event) ([]*segment, error) {
	byName := map[string]*segment{}
	var order []*segment
	for i := range evs {
		e := &evs[i]
		if e.Kind != KindSegmentStart && e.Kind != KindSegmentEnd {
			continue
		}
		if e.Segment == w.Segment {
			return nil, refuse(RuleSegmentIsWindow, linesOf(*e), "a %s line names the window %q; the window is bounded by window_open and window_close", e.Kind, e.Segment)
		}
		s := byName[e.Segment]
		if s == nil {
			s = &segment{name: e.Segment}
			byName[e.Segment] = s
			order = append(order, s)
		}
		at := &s.start
		if e.Kind == KindSegmentEnd {
			at = &s.end
		}
		if *at != nil {
			return nil, refuse(RuleSegmentRepeated, linesOf(**at, *e), "segment %q has two %s lines", e.Segment, e.Kind)
		}
		*at = e
	}
	for _, s := range order {
		switch {
		case s.start == nil:
			return nil, refuse(RuleSegmentUnstarted, linesOf(*s.end), "segment %q ends and never starts", s.name)
		case s.end == nil:
			return nil, refuse(RuleSegmentOpen, linesOf(*s.start), "segment %q starts and never ends: an attempt whose outcome was never recorded", s.name)
		case s.end.At.Before(s.start.At):
			return nil, refuse(RuleSegmentReversed, linesOf(*s.start, *s.end), "segment %q ends at %s, before it starts at %s", s.name, stamp(s.end.At), stamp(s.start.At))
		case Outcome(s.end.Action) != Failed && Outcome(s.end.Action) != Succeeded:
			return nil, refuse(RuleSegmentOutcome, linesOf(*s.end), "segment %q ends with action %q; a segment ends %q or %q",
				s.name, s.end.Action, Failed, Succeeded)
		}
	}
	slices.SortFunc(order, func(a, b *segment) int {
		return cmp.Or(a.start.At.Compare(b.start.At), cmp.Compare(a.name, b.name))
	})
	for i := 1; i < len(order); i++ {
		a, b := order[i-1], order[i]
		if intersect(a.start.At, a.end.At, b.start.At, b.end.At) {
			return nil, refuse(RuleSegmentsIntersect, linesOf(*a.start, *a.end, *b.start, *b.end),
				"segment %q (%s to %s) and segment %q (%s to %s) intersect", a.name, stamp(a.start.At), stamp(a.end.At),
				b.name, stamp(b.start.At), stamp(b.end.At))
		}
	}
	for _, s := range order {
		if intersect(s.start.At, s.end.At, w.OpensAt, w.ClosesAt) {
			return nil, refuse(RulePreparationInWindow, linesOf(*s.start, *s.end),
				"preparation segment %q (%s to %s) overlaps the window (%s to %s): preparation running inside the window is preparation inside it",
				s.name, stamp(s.start.At), stamp(s.end.At), stamp(w.OpensAt), stamp(w.ClosesAt))
		}
	}
	return order, nil
}

// assemble classifies every intervention by its time and builds the
// report.
func assemble(start *Start, segs []*segment, evs []Event, now time.Time) (*Report, error) {
	w := start.Window
	r := &Report{
		Window:     Bounds{Segment: w.Segment, OpensAt: stamp(w.OpensAt), ClosesAt: stamp(w.ClosesAt)},
		Provenance: start.Provenance(),
		Segments:   Segments{Count: len(segs), Failed: []string{}, Intervals: make([]Segment, len(segs))},
		GradedAt:   stamp(now),
	}
	for i, s := range segs {
		r.Segments.Intervals[i] = Segment{Name: s.name, StartsAt: stamp(s.start.At), EndsAt: stamp(s.end.At), Outcome: Outcome(s.end.Action)}
		if Outcome(s.end.Action) == Failed {
			r.Segments.Failed = append(r.Segments.Failed, s.name)
		}
	}
	for _, e := range evs {
		if e.Kind != KindIntervention {
			continue
		}
		inWindow := !e.At.Before(w.OpensAt) && !e.At.After(w.ClosesAt)
		switch {
		case inWindow && e.Claimed == ClaimPreparation:
			return nil, refuse(RuleClaimContradicted, linesOf(e), "an intervention claims preparation, but %s is inside the window (%s to %s)",
				stamp(e.At), stamp(w.OpensAt), stamp(w.ClosesAt))
		case !inWindow && e.Claimed == ClaimWindow:
			return nil, refuse(RuleClaimContradicted, linesOf(e), "an intervention claims the window, but %s is outside it (%s to %s)",
				stamp(e.At), stamp(w.OpensAt), stamp(w.ClosesAt))
		case inWindow:
			r.WindowInterventions++
			continue
		}
		r.PreparationInterventions++
		// The last segment starting at or before e is the only one that
		// can hold it, segments being disjoint but for shared ends.
		i, found := slices.BinarySearchFunc(segs, e.At, func(s *segment, t time.Time) int {
			return s.start.At.Compare(t)
		})
		if !found {
			i--
		}
		if i >= 0 && !e.At.After(segs[i].end.At) {
			r.Segments.Intervals[i].Interventions++
		} else {
			r.Segments.InterventionsOutside++
		}
	}
	r.WindowIsClean = r.WindowInterventions == 0
	return r, nil
}
