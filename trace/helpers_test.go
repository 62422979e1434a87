package trace_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/trace"
)

// doc is a bundle as generic JSON, to be changed by a test and encoded.
type doc = map[string]any

// newDoc builds a valid bundle of n events for session and attempt: the
// first event's facts recorded, the second's computed, the rest a mix of
// unavailable and not-applicable; chained and sealed.
func newDoc(session, attempt string, n int) doc {
	events := make([]any, n)
	for i := range events {
		facts := map[string]any{
			trace.FactTool:     map[string]any{"status": "recorded", "value": "go test"},
			trace.FactAdapter:  map[string]any{"status": "not-applicable", "reason": "no adapter in this run"},
			trace.FactGate:     map[string]any{"status": "recorded", "value": map[string]any{"name": "unit", "passed": true}},
			trace.FactIdentity: map[string]any{"status": "recorded", "value": "worker-1"},
			trace.FactLatency:  map[string]any{"status": "computed", "value": json.Number(fmt.Sprint(10 + i)), "method": "end minus start, ms"},
			trace.FactCost:     map[string]any{"status": "unavailable", "reason": "no meter"},
		}
		events[i] = map[string]any{
			"session": session, "attempt": attempt,
			"trace": fmt.Sprintf("t-%d", i%2), "facts": facts,
		}
	}
	d := doc{"v": json.Number("1"), "session": session, "attempt": attempt, "events": events}
	rechain(d)
	return d
}

// rechain renumbers, rehashes and reseals d's events, as an honest
// producer would.
func rechain(d doc) {
	prev := trace.GenesisDigest
	events := d["events"].([]any)
	for i, e := range events {
		ev := e.(map[string]any)
		ev["seq"] = json.Number(fmt.Sprint(i + 1))
		ev["prev_digest"] = prev
		delete(ev, "record_digest")
		ev["record_digest"] = eventDigest(ev)
		prev = ev["record_digest"].(string)
	}
	d["seal"] = map[string]any{"count": json.Number(fmt.Sprint(len(events))), "final_digest": prev}
}

// eventDigest is the record digest, computed here independently of the
// package: SHA-256 of the canonical event without record_digest, plus a
// line feed.
func eventDigest(ev map[string]any) string {
	c := map[string]any{}
	for k, v := range ev {
		if k != "record_digest" {
			c[k] = v
		}
	}
	b, err := gitstore.Canonical(c)
	if err != nil {
		panic(err)
	}
	sum := sha256.Sum256(append(b, '\n'))
	return "sha256:" + hex.EncodeToString(sum[:])
}

func event(d doc, i int) map[string]any { return d["events"].([]any)[i-1].(map[string]any) }

func fact(d doc, i int, name string) map[string]any {
	return event(d, i)["facts"].(map[string]any)[name].(map[string]any)
}

func encode(t testing.TB, d doc) []byte {
	t.Helper()
	b, err := gitstore.Canonical(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// validBundle is a valid sealed bundle of n events.
func validBundle(t testing.TB, session, attempt string, n int) []byte {
	t.Helper()
	return encode(t, newDoc(session, attempt, n))
}

func sha(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func mustValidate(t testing.TB, session, attempt string, b []byte) *trace.Receipt {
	t.Helper()
	r, err := trace.Validate(session, attempt, b)
	if err != nil {
		t.Fatalf("a valid bundle is refused: %v\n%s", err, clipBytes(b))
	}
	return r
}

func clipBytes(b []byte) []byte {
	if len(b) > 600 {
		return append(bytes.Clone(b[:600]), "…"...)
	}
	return b
}
