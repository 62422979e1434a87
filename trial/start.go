package trial

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/nwdes/nwdes/internal/text"
)

// StartVersion is the version ("v") of the start record ParseStart reads.
//
// History:
//   - 1: v, window {segment, opensAt, closesAt, corroboration {opensAt,
//     closesAt}}, readings.
const StartVersion = 1

// Start is a trial's start record: the window the dispatch opens, declared
// before it, and the readings the preflight takes. It is one JSON object:
//
//	{
//	  "v": 1,
//	  "window": {
//	    "segment": "window",
//	    "opensAt": "2026-03-02T10:00:00Z",
//	    "closesAt": "2026-03-02T11:00:00Z",
//	    "corroboration": {"opensAt": "2026-03-02T10:00:00Z",
//	                      "closesAt": "2026-03-02T11:00:00Z"}
//	  },
//	  "readings": {}
//	}
//
// v is StartVersion and required. window is required, and in it segment
// (the name the ledger's window_open and window_close lines give the
// window, not empty), opensAt and closesAt (RFC 3339 times, closesAt after
// opensAt: a window must have a duration). corroboration is optional: the
// same two bounds as the store recorded them; when present both are
// required and each must be the same instant as the declared bound, and
// the window's provenance is then "corroborated" rather than "declared".
// readings is optional and kept as it is written (any JSON value) for the
// preflight; nothing here reads or checks it, duplicate keys inside it
// included.
//
// Every other key, a key given twice, a key spelt in another case and a
// null where a value is required are refused, as is input that is not
// UTF-8.
type Start struct {
	Window Window
	// Readings is the record's readings value as written, or nil when the
	// record has none.
	Readings json.RawMessage
}

// Window is the interval a trial measures, as the start record declares
// it.
type Window struct {
	// Segment is the name the ledger's window_open and window_close lines
	// carry.
	Segment  string
	OpensAt  time.Time
	ClosesAt time.Time
	// Corroboration holds the bounds as taken from the store, or nil when
	// the bounds are the operator's word alone.
	Corroboration *Corroboration
}

// Corroboration is the window's bounds as a store recorded them. It agrees
// with the declared window when both bounds are the same instants.
type Corroboration struct {
	OpensAt  time.Time
	ClosesAt time.Time
}

// Provenance says where the window bounds a grade was computed from come
// from.
type Provenance string

const (
	// Declared bounds are the operator's word.
	Declared Provenance = "declared"
	// Corroborated bounds were compared with times taken from the store,
	// and agreed.
	Corroborated Provenance = "corroborated"
)

// Provenance is Corroborated when the record carries a corroboration (which
// a valid record only does when it agrees), else Declared.
func (s *Start) Provenance() Provenance {
	if s.Window.Corroboration != nil {
		return Corroborated
	}
	return Declared
}

// ParseStart reads a start record (see Start). Every refusal is
// refusal.TrialInvalid, wrapping a *RuleError.
func ParseStart(b []byte) (*Start, error) {
	if !utf8.Valid(b) {
		return nil, refuse(RuleStartMalformed, nil, "the start record is not UTF-8")
	}
	top, err := members(b, "v", "window", "readings")
	if err != nil {
		return nil, refuse(RuleStartMalformed, nil, "start record: %v", err)
	}
	var v int
	if raw, ok := top["v"]; !ok {
		return nil, refuse(RuleStartMalformed, nil, "start record has no v (expected %d)", StartVersion)
	} else if err := json.Unmarshal(raw, &v); err != nil || v != StartVersion {
		return nil, refuse(RuleStartMalformed, nil, "start record has v %s; this grader reads v %d", compact(raw), StartVersion)
	}
	s := &Start{}
	if raw, ok := top["readings"]; ok {
		s.Readings = slices.Clone(raw)
	}
	raw, ok := top["window"]
	if !ok {
		return nil, refuse(RuleStartMalformed, nil, "start record has no window")
	}
	w, err := members(raw, "segment", "opensAt", "closesAt", "corroboration")
	if err != nil {
		return nil, refuse(RuleStartMalformed, nil, "start record window: %v", err)
	}
	if s.Window.Segment, err = stringMember(w, "segment", true); err != nil {
		return nil, refuse(RuleStartMalformed, nil, "start record window: %v", err)
	}
	if s.Window.OpensAt, err = timeMember(w, "opensAt"); err != nil {
		return nil, refuse(RuleStartMalformed, nil, "start record window: %v", err)
	}
	if s.Window.ClosesAt, err = timeMember(w, "closesAt"); err != nil {
		return nil, refuse(RuleStartMalformed, nil, "start record window: %v", err)
	}
	if raw, ok := w["corroboration"]; ok {
		c, err := members(raw, "opensAt", "closesAt")
		if err != nil {
			return nil, refuse(RuleStartMalformed, nil, "start record window.corroboration: %v", err)
		}
		s.Window.Corroboration = &Corroboration{}
		if s.Window.Corroboration.OpensAt, err = timeMember(c, "opensAt"); err != nil {
			return nil, refuse(RuleStartMalformed, nil, "start record window.corroboration: %v", err)
		}
		if s.Window.Corroboration.ClosesAt, err = timeMember(c, "closesAt"); err != nil {
			return nil, refuse(RuleStartMalformed, nil, "start record window.corroboration: %v", err)
		}
	}
	if err := s.validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// validate holds a start record, however it was built, to the rules the
// record alone can break.
func (s *Start) validate() error {
	w := s.Window
	if w.Segment == "" {
		return refuse(RuleStartMalformed, nil, "the start record's window names no segment")
	}
	if w.OpensAt.IsZero() || w.ClosesAt.IsZero() {
		return refuse(RuleStartMalformed, nil, "the start record's window has no opensAt or no closesAt")
	}
	if !inRange(w.OpensAt) || !inRange(w.ClosesAt) || (w.Corroboration != nil && (!inRange(w.Corroboration.OpensAt) || !inRange(w.Corroboration.ClosesAt))) {
		return refuse(RuleStartMalformed, nil, "the start record's window has a time outside the years 0000 to 9999 in UTC")
	}
	if !w.ClosesAt.After(w.OpensAt) {
		return refuse(RuleWindowNoDuration, nil, "the start record's window closes at %s, not after it opens at %s: a window without a duration measures nothing",
			stamp(w.ClosesAt), stamp(w.OpensAt))
	}
	if c := w.Corroboration; c != nil {
		if !c.OpensAt.Equal(w.OpensAt) || !c.ClosesAt.Equal(w.ClosesAt) {
			return refuse(RuleCorroborationDisagrees, nil, "the store times %s–%s disagree with the declared window %s–%s",
				stamp(c.OpensAt), stamp(c.ClosesAt), stamp(w.OpensAt), stamp(w.ClosesAt))
		}
	}
	return nil
}

// members reads raw as one JSON object whose keys are all among allowed
// (compared exactly, not in encoding/json's case-folding way), none given
// twice and none null, and returns each member's value as written.
func members(raw []byte, allowed ...string) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	out := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("not JSON: %w", err)
		}
		k, _ := tok.(string)
		if !slices.Contains(allowed, k) {
			return nil, fmt.Errorf("unknown key %q (known: %s)", k, strings.Join(allowed, ", "))
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("key %q given twice", k)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("not JSON: %w", err)
		}
		if string(v) == "null" {
			return nil, fmt.Errorf("%s is null", k)
		}
		out[k] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more than one JSON value")
	}
	return out, nil
}

// stringMember is m[k] as a string; "" when absent unless required.
func stringMember(m map[string]json.RawMessage, k string, required bool) (string, error) {
	raw, ok := m[k]
	if !ok {
		if required {
			return "", fmt.Errorf("no %s", k)
		}
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%s is %s, not a string", k, compact(raw))
	}
	if required && s == "" {
		return "", fmt.Errorf("%s is empty", k)
	}
	return s, nil
}

// timeMember is m[k], required, as an RFC 3339 time.
func timeMember(m map[string]json.RawMessage, k string) (time.Time, error) {
	s, err := stringMember(m, k, true)
	if err != nil {
		return time.Time{}, err
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s %q is not an RFC 3339 time", k, s)
	}
	if !inRange(t) {
		return time.Time{}, fmt.Errorf("%s %q is outside the years 0000 to 9999 in UTC", k, s)
	}
	return t, nil
}

// inRange reports whether t can be written in RFC 3339 in UTC, as every
// time this package writes is.
func inRange(t time.Time) bool { y := t.UTC().Year(); return y >= 0 && y <= 9999 }

// compact is raw for a message: one line, bounded.
func compact(raw []byte) string { return text.Truncate(text.OneLine(string(raw)), 40) }

// stamp writes t the one way reports and messages write times: RFC 3339 in
// UTC, with the fraction only when there is one.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
