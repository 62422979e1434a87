package trace

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/internal/lazyre"
	"github.com/nwdes/nwdes/refusal"
)

// BundleVersion is the bundle format Validate reads (the bundle's "v").
//
// Format history:
//
//	v1: first format (events with session, attempt, trace, seq, facts,
//	    prev_digest and record_digest; a seal of count and final digest).
const BundleVersion = 1

// Validator names the rules a receipt was issued under. A receipt records
// it, so that a stored bundle re-validated by different rules no longer
// matches its receipt (ReceiptMismatch) instead of passing silently.
const Validator = "nwdes.trace.v1"

// Bounds of one bundle. A bundle over any of them is refused whole
// (TraceInvalid), never read in part.
const (
	// MaxBundleBytes is 1 MiB less 8 KiB, so that a bundle with its
	// receipt (under 1 KiB, its identifiers being bounded) always fits
	// one store record of DefaultMaxRecordBytes.
	MaxBundleBytes = 1<<20 - 8<<10
	// MaxEvents caps the events of one bundle. With every event stating
	// the required facts, MaxBundleBytes binds first (an event takes some
	// 450 bytes at least); the count is bounded on its own all the same.
	MaxEvents = 10_000
	// MaxFacts caps the facts of one event.
	MaxFacts = 64
	// MaxDepth caps how deeply the bundle's JSON nests (a fact's value
	// sits at depth 5).
	MaxDepth = 32
	// MaxIDBytes caps a session, attempt or trace identifier.
	MaxIDBytes = 128
	// MaxTextBytes caps a fact's reason or method.
	MaxTextBytes = 1024
)

// Status says where a fact's value came from, or why there is none. Every
// fact carries one: absence is stated, never implied by a missing field.
type Status string

const (
	// Recorded: the value was observed as it happened ("value").
	Recorded Status = "recorded"
	// Computed: the value was derived from other data ("value"), by the
	// method named ("method").
	Computed Status = "computed"
	// Unavailable: the fact applies but was not measured ("reason").
	Unavailable Status = "unavailable"
	// NotApplicable: the fact has no meaning for this event ("reason").
	NotApplicable Status = "not-applicable"
)

// The facts every event must state, whatever their status: the trace
// event of the observability interface (tool, adapter, gate, identity,
// latency, cost). An event may state more facts of its own.
const (
	FactTool     = "tool"
	FactAdapter  = "adapter"
	FactGate     = "gate"
	FactIdentity = "identity"
	FactLatency  = "latency"
	FactCost     = "cost"
)

// RequiredFacts returns the names of the facts every event states, in the
// order Validate looks for them.
func RequiredFacts() []string {
	return []string{FactTool, FactAdapter, FactGate, FactIdentity, FactLatency, FactCost}
}

// GenesisDigest is the prev_digest of a bundle's first event.
const GenesisDigest = "sha256:0000000000000000000000000000000000000000000000000000000000000000"

var (
	idPattern     = lazyre.New(`^[A-Za-z0-9][A-Za-z0-9._:-]*$`)
	factPattern   = lazyre.New(`^[a-z][a-z0-9_.-]{0,63}$`)
	digestPattern = lazyre.New(`^sha256:[0-9a-f]{64}$`)
	countPattern  = lazyre.New(`^[1-9][0-9]{0,8}$`)
)

const invalidRemedy = "give the complete sealed bundle the run wrote for this session and attempt, byte for byte"

func invalid(format string, args ...any) error {
	return refusal.NewUnreadable(refusal.TraceInvalid, invalidRemedy, format, args...)
}

// Receipt is what Validate issues for a bundle it accepts: the bundle's
// exact bytes (by SHA-256 and length), the session and attempt it was
// validated against, its sealed count and final digest (with the session
// and attempt, the replay key a later consumer uses once) and the rules
// applied. Its canonical JSON (Bytes) depends only on those, so validating
// the same bytes again gives the same receipt, byte for byte. Bytes and ID
// are what was issued: changing a field afterwards changes neither.
type Receipt struct {
	Attempt      string `json:"attempt"`
	BundleBytes  int    `json:"bundle_bytes"`
	BundleSHA256 string `json:"bundle_sha256"`
	Count        int    `json:"count"`
	FinalDigest  string `json:"final_digest"`
	Session      string `json:"session"`
	Validator    string `json:"validator"`
	V            int    `json:"v"`

	raw []byte
}

// ReceiptVersion is the receipt format ("v"). Format history: v1, first.
const ReceiptVersion = 1

// Bytes returns the receipt's canonical JSON.
func (r *Receipt) Bytes() []byte { return bytes.Clone(r.raw) }

// ID names the receipt: the SHA-256 of Bytes, as "sha256:<hex>". A store
// keeps a bundle under it, and reads it back by it.
func (r *Receipt) ID() string { return digestOf(r.raw) }

func (r *Receipt) seal() error {
	b, err := gitstore.Canonical(r)
	if err != nil {
		return err
	}
	r.raw = b
	return nil
}

// ParseReceipt reads a receipt's canonical JSON, refusing (ReceiptMismatch)
// anything that is not exactly what Validate would have written.
func ParseReceipt(b []byte) (*Receipt, error) {
	bad := func(why string) error {
		return refusal.NewUnreadable(refusal.ReceiptMismatch,
			"use the receipt nwdes issued, unchanged", "receipt is %s", why)
	}
	if err := gitstore.CheckCanonical(b); err != nil {
		return nil, bad("not canonical JSON")
	}
	var r Receipt
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return nil, bad("not a trace receipt: " + err.Error())
	}
	if err := r.seal(); err != nil || !bytes.Equal(r.raw, b) {
		return nil, bad("not a trace receipt (a field missing, misspelt or of another case)")
	}
	switch {
	case r.V != ReceiptVersion:
		return nil, bad(fmt.Sprintf("of version %d, not %d", r.V, ReceiptVersion))
	case !validID(r.Session) || !validID(r.Attempt):
		return nil, bad("naming a session or attempt that is not an identifier")
	case !digestPattern.MatchString(r.BundleSHA256) || !digestPattern.MatchString(r.FinalDigest):
		return nil, bad("holding a digest that is not sha256:<64 hex>")
	case r.Count < 1 || r.Count > MaxEvents || r.BundleBytes < 1 || r.BundleBytes > MaxBundleBytes:
		return nil, bad("holding a count or size out of bounds")
	}
	return &r, nil
}

// Validate checks one bundle against the session and attempt the caller
// expects and returns its receipt, or refuses with TraceInvalid naming the
// first defect found. Checks run in this order: the caller's identifiers;
// size; UTF-8, nesting depth, JSON syntax and duplicate keys; canonical
// form; the top-level fields (unknown before missing), v, session,
// attempt; the event count; each event in order (its fields, session,
// attempt, trace, seq, prev_digest, facts, record_digest); the seal (its
// fields, count, final_digest).
//
// A bundle is the canonical JSON (gitstore.Canonical) of
//
//	{"attempt":A,"events":[E…],"seal":{"count":N,"final_digest":D},"session":S,"v":1}
//
// where each event E is
//
//	{"attempt":A,"facts":{NAME:FACT…},"prev_digest":P,"record_digest":R,"seq":I,"session":S,"trace":T}
//
// seq counts from 1; P is GenesisDigest for the first event and the
// previous event's R after; R is "sha256:" and the hex SHA-256 of the
// event's canonical JSON without record_digest, followed by a line feed;
// the seal's N is the number of events and D the last R. A FACT is
// {"status":"recorded","value":V}, {"method":M,"status":"computed","value":V},
// {"reason":W,"status":"unavailable"} or {"reason":W,"status":"not-applicable"}
// (V any JSON but null; M and W non-empty text). Every event states each of
// RequiredFacts.
//
// Validate reads only the bytes given and keeps no reference to them.
func Validate(session, attempt string, bundle []byte) (*Receipt, error) {
	if !validID(session) {
		return nil, invalid("session %q is not an identifier (letters, digits, '.', '_', ':', '-'; at most %d bytes)", clip(session), MaxIDBytes)
	}
	if !validID(attempt) {
		return nil, invalid("attempt %q is not an identifier (letters, digits, '.', '_', ':', '-'; at most %d bytes)", clip(attempt), MaxIDBytes)
	}
	v := &validation{session: session, attempt: attempt, maxEvents: MaxEvents}
	count, final, err := v.bundle(bundle)
	if err != nil {
		return nil, err
	}
	r := &Receipt{
		Attempt: attempt, Session: session,
		BundleBytes: len(bundle), BundleSHA256: digestOf(bundle),
		Count: count, FinalDigest: final,
		Validator: Validator, V: ReceiptVersion,
	}
	if err := r.seal(); err != nil {
		return nil, fmt.Errorf("encode trace receipt: %w", err)
	}
	return r, nil
}

type validation struct {
	session, attempt string
	maxEvents        int
}

func (v *validation) bundle(b []byte) (int, string, error) {
	where := fmt.Sprintf("bundle for session %s attempt %s", v.session, v.attempt)
	switch {
	case len(b) == 0:
		return 0, "", invalid("%s is empty", where)
	case len(b) > MaxBundleBytes:
		return 0, "", invalid("%s is %d bytes, over the limit of %d", where, len(b), MaxBundleBytes)
	case !utf8.Valid(b):
		return 0, "", invalid("%s is not UTF-8", where)
	}
	if d := depth(b); d > MaxDepth {
		return 0, "", invalid("%s nests deeper than %d levels", where, MaxDepth)
	}
	c, err := gitstore.Canonical(b)
	if err != nil {
		return 0, "", invalid("%s is not one JSON text: %v", where, err)
	}
	if !bytes.Equal(c, b) {
		return 0, "", invalid("%s is not canonical JSON (keys sorted, no whitespace, strings and numbers as gitstore.Canonical writes them); first difference at byte %d", where, firstDiff(c, b))
	}
	top, err := object(b, "the bundle", []string{"v", "session", "attempt", "events", "seal"})
	if err != nil {
		return 0, "", err
	}
	if string(top["v"]) != strconv.Itoa(BundleVersion) {
		return 0, "", invalid("the bundle's v is %s, not %d", clip(string(top["v"])), BundleVersion)
	}
	if err := v.same("the bundle", top); err != nil {
		return 0, "", err
	}
	var events []json.RawMessage
	if err := json.Unmarshal(top["events"], &events); err != nil {
		return 0, "", invalid("the bundle's events are not an array")
	}
	switch {
	case len(events) == 0:
		return 0, "", invalid("the bundle holds no events")
	case len(events) > v.maxEvents:
		return 0, "", invalid("the bundle holds %d events, over the limit of %d", len(events), v.maxEvents)
	}
	prev := GenesisDigest
	for i, raw := range events {
		d, err := v.event(i+1, raw, prev)
		if err != nil {
			return 0, "", err
		}
		prev = d
	}
	seal, err := object(top["seal"], "the seal", []string{"count", "final_digest"})
	if err != nil {
		return 0, "", err
	}
	if n, ok := number(seal["count"]); !ok || n != len(events) {
		return 0, "", invalid("the seal's count is %s, but the bundle holds %d events (events lost or added after sealing)", clip(string(seal["count"])), len(events))
	}
	final, ok := str(seal["final_digest"])
	if !ok || final != prev {
		return 0, "", invalid("the seal's final_digest %s is not the last event's record_digest %s", clip(string(seal["final_digest"])), prev)
	}
	return len(events), final, nil
}

func (v *validation) event(i int, raw json.RawMessage, prev string) (string, error) {
	where := fmt.Sprintf("event %d", i)
	ev, err := object(raw, where, []string{"session", "attempt", "trace", "seq", "prev_digest", "facts", "record_digest"})
	if err != nil {
		return "", err
	}
	if err := v.same(where, ev); err != nil {
		return "", err
	}
	if t, ok := str(ev["trace"]); !ok || !validID(t) {
		return "", invalid("%s's trace %s is not an identifier", where, clip(string(ev["trace"])))
	}
	if n, ok := number(ev["seq"]); !ok || n != i {
		return "", invalid("%s's seq is %s, not %d (events out of order, lost or repeated)", where, clip(string(ev["seq"])), i)
	}
	if p, ok := str(ev["prev_digest"]); !ok || p != prev {
		what := "the previous event's record_digest"
		if i == 1 {
			what = "the genesis digest"
		}
		return "", invalid("%s's prev_digest %s is not %s %s (the chain is broken)", where, clip(string(ev["prev_digest"])), what, prev)
	}
	if err := facts(where, ev["facts"]); err != nil {
		return "", err
	}
	rd, ok := str(ev["record_digest"])
	if !ok || !digestPattern.MatchString(rd) {
		return "", invalid("%s's record_digest %s is not sha256:<64 hex>", where, clip(string(ev["record_digest"])))
	}
	delete(ev, "record_digest")
	body, err := gitstore.Canonical(ev)
	if err != nil {
		return "", invalid("%s does not encode: %v", where, err)
	}
	if want := digestOf(append(body, '\n')); rd != want {
		return "", invalid("%s's record_digest %s is not the digest of its contents %s (changed after it was chained)", where, rd, want)
	}
	return rd, nil
}

// same checks that an object names the caller's session and attempt.
func (v *validation) same(where string, o map[string]json.RawMessage) error {
	if s, ok := str(o["session"]); !ok || s != v.session {
		return invalid("%s names session %s, not %s", where, clip(string(o["session"])), v.session)
	}
	if a, ok := str(o["attempt"]); !ok || a != v.attempt {
		return invalid("%s names attempt %s, not %s", where, clip(string(o["attempt"])), v.attempt)
	}
	return nil
}

func facts(where string, raw json.RawMessage) error {
	var fs map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fs); err != nil || fs == nil {
		return invalid("%s's facts are not an object", where)
	}
	if len(fs) > MaxFacts {
		return invalid("%s states %d facts, over the limit of %d", where, len(fs), MaxFacts)
	}
	for _, name := range RequiredFacts() {
		if _, ok := fs[name]; !ok {
			return invalid("%s does not state fact %q (state it, as unavailable or not-applicable if need be)", where, name)
		}
	}
	for _, name := range sortedKeys(fs) {
		if !factPattern.MatchString(name) {
			return invalid("%s's fact name %q is not lower-case letters, digits, '_', '.', '-' (at most 64)", where, clip(name))
		}
		if err := fact(fmt.Sprintf("%s's fact %q", where, name), fs[name]); err != nil {
			return err
		}
	}
	return nil
}

func fact(where string, raw json.RawMessage) error {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(raw, &probe); err != nil || probe == nil {
		return invalid("%s is not an object", where)
	}
	st, ok := probe["status"]
	if !ok {
		return invalid("%s has no status (recorded, computed, unavailable or not-applicable)", where)
	}
	s, _ := str(st)
	var fields []string
	switch Status(s) {
	case Recorded:
		fields = []string{"status", "value"}
	case Computed:
		fields = []string{"status", "value", "method"}
	case Unavailable, NotApplicable:
		fields = []string{"status", "reason"}
	default:
		return invalid("%s has status %s, not recorded, computed, unavailable or not-applicable", where, clip(string(st)))
	}
	f, err := object(raw, where, fields)
	if err != nil {
		return err
	}
	if val, ok := f["value"]; ok && string(val) == "null" {
		return invalid("%s is %s with a null value (say unavailable instead, with a reason)", where, s)
	}
	for _, k := range []string{"method", "reason"} {
		if t, ok := f[k]; ok {
			if x, isStr := str(t); !isStr || x == "" || len(x) > MaxTextBytes {
				return invalid("%s's %s is not text of 1 to %d bytes", where, k, MaxTextBytes)
			}
		}
	}
	return nil
}

// object decodes an object that must hold exactly the fields named:
// unknown fields are refused first (by name), then missing ones (in the
// order given).
func object(raw json.RawMessage, where string, fields []string) (map[string]json.RawMessage, error) {
	var o map[string]json.RawMessage
	if err := json.Unmarshal(raw, &o); err != nil || o == nil {
		return nil, invalid("%s is not a JSON object", where)
	}
	known := map[string]bool{}
	for _, f := range fields {
		known[f] = true
	}
	for _, k := range sortedKeys(o) {
		if !known[k] {
			return nil, invalid("%s has unknown field %q", where, clip(k))
		}
	}
	for _, f := range fields {
		if _, ok := o[f]; !ok {
			return nil, invalid("%s has no field %q", where, f)
		}
	}
	return o, nil
}

func str(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// number reads a positive decimal integer written plainly (no sign,
// fraction, exponent or leading zero).
func number(raw json.RawMessage) (int, bool) {
	if !countPattern.Match(raw) {
		return 0, false
	}
	n, err := strconv.Atoi(string(raw))
	return n, err == nil
}

func validID(s string) bool { return len(s) <= MaxIDBytes && idPattern.MatchString(s) }

// depth is how deeply b's arrays and objects nest, strings skipped. It
// runs before any decoder, so that no recursion follows a hostile depth.
func depth(b []byte) int {
	d, most, inStr, esc := 0, 0, false, false
	for _, c := range b {
		switch {
		case inStr && esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case inStr && c == '"':
			inStr = false
		case inStr:
		case c == '"':
			inStr = true
		case c == '[' || c == '{':
			d++
			most = max(most, d)
		case c == ']' || c == '}':
			d--
		}
	}
	return most
}

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func firstDiff(a, b []byte) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// clip bounds text quoted from a hostile bundle in a message.
func clip(s string) string {
	const most = 80
	if len(s) <= most {
		return s
	}
	cut := most
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
