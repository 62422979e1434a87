package trace_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/refusal"
	"github.com/nwdes/nwdes/trace"
)

func TestAValidBundleGetsAReceiptBoundToItsExactBytes(t *testing.T) {
	t.Parallel()
	b := validBundle(t, "s-1", "a-1", 3)
	r := mustValidate(t, "s-1", "a-1", b)
	final := event(newDoc("s-1", "a-1", 3), 3)["record_digest"].(string)
	want := fmt.Sprintf(`{"attempt":"a-1","bundle_bytes":%d,"bundle_sha256":"%s","count":3,"final_digest":"%s","session":"s-1","v":1,"validator":"nwdes.trace.v1"}`,
		len(b), sha(b), final)
	if got := string(r.Bytes()); got != want {
		t.Fatalf("receipt\n got %s\nwant %s", got, want)
	}
	if r.ID() != sha(r.Bytes()) {
		t.Fatalf("ID %s is not the digest of the receipt's bytes", r.ID())
	}
	again := mustValidate(t, "s-1", "a-1", bytes.Clone(b))
	if !bytes.Equal(again.Bytes(), r.Bytes()) {
		t.Fatal("validating the same bytes twice gave two receipts")
	}
	parsed, err := trace.ParseReceipt(r.Bytes())
	if err != nil || parsed.ID() != r.ID() || parsed.FinalDigest != final || parsed.Count != 3 {
		t.Fatalf("ParseReceipt = %+v, %v", parsed, err)
	}
}

func TestTheDocumentedExampleBundleIsValid(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("testdata/example.json")
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	mustValidate(t, "session-7", "attempt-1", b)
}

func TestEveryStatusIsAccepted(t *testing.T) {
	t.Parallel()
	d := newDoc("s", "a", 1)
	f := event(d, 1)["facts"].(map[string]any)
	f["extra.recorded"] = map[string]any{"status": "recorded", "value": []any{}}
	f["extra.computed"] = map[string]any{"status": "computed", "value": false, "method": "m"}
	f["extra.unavailable"] = map[string]any{"status": "unavailable", "reason": "r"}
	f["extra.not-applicable"] = map[string]any{"status": "not-applicable", "reason": "r"}
	rechain(d)
	mustValidate(t, "s", "a", encode(t, d))
}

func TestADefectiveBundleIsRefusedNamingItsFirstDefect(t *testing.T) {
	t.Parallel()
	const s, a = "s-1", "a-1"
	valid := func() doc { return newDoc(s, a, 3) }
	// Each case builds bytes from a valid bundle; rechain marks changes an
	// honest-looking producer would rehash and reseal.
	cases := []struct {
		name string
		make func(t *testing.T) []byte
		want string
	}{
		{"the caller's session is not an identifier", nil, `session "../x" is not an identifier`},
		{"the bundle is empty", func(*testing.T) []byte { return nil }, "is empty"},
		{"the bundle is over the size limit", func(*testing.T) []byte { return bytes.Repeat([]byte(" "), trace.MaxBundleBytes+1) }, "over the limit of 1040384"},
		{"the bundle is not UTF-8", func(*testing.T) []byte { return []byte("{\"v\":\"\xff\"}") }, "is not UTF-8"},
		{"the bundle nests too deeply", func(*testing.T) []byte {
			return []byte(strings.Repeat("[", 40) + strings.Repeat("]", 40))
		}, "nests deeper than 32"},
		{"the bundle is not JSON", func(*testing.T) []byte { return []byte(`{"v":`) }, "is not one JSON text"},
		{"the bundle has trailing data", func(t *testing.T) []byte { return append(encode(t, valid()), "{}"...) }, "is not one JSON text"},
		{"the bundle has a duplicate key", func(t *testing.T) []byte {
			return bytes.Replace(encode(t, valid()), []byte(`"v":1}`), []byte(`"v":1,"v":1}`), 1)
		}, `duplicate key "v"`},
		{"the bundle has whitespace", func(t *testing.T) []byte { return append(encode(t, valid()), '\n') }, "is not canonical JSON"},
		{"the bundle's keys are not sorted", func(t *testing.T) []byte {
			b := encode(t, valid())
			return append(append([]byte(`{"v":1,`), bytes.TrimSuffix(bytes.TrimPrefix(b, []byte("{")), []byte(`,"v":1}`))...), '}')
		}, "is not canonical JSON"},
		{"the bundle is an array", func(*testing.T) []byte { return []byte(`[1]`) }, "the bundle is not a JSON object"},
		{"the bundle has an unknown field", func(t *testing.T) []byte { d := valid(); d["comment"] = "x"; return encode(t, d) }, `the bundle has unknown field "comment"`},
		{"the bundle has no seal", func(t *testing.T) []byte { d := valid(); delete(d, "seal"); return encode(t, d) }, `the bundle has no field "seal"`},
		{"the bundle is of another version", func(t *testing.T) []byte { d := valid(); d["v"] = json.Number("2"); return encode(t, d) }, "v is 2, not 1"},
		{"the bundle names another session", func(t *testing.T) []byte { d := valid(); d["session"] = "s-2"; return encode(t, d) }, "the bundle names session \"s-2\", not s-1"},
		{"the bundle names another attempt", func(t *testing.T) []byte { d := valid(); d["attempt"] = "a-2"; return encode(t, d) }, "the bundle names attempt \"a-2\", not a-1"},
		{"the bundle holds no events", func(t *testing.T) []byte { d := valid(); d["events"] = []any{}; rechain(d); return encode(t, d) }, "holds no events"},
		{"the events are not an array", func(t *testing.T) []byte { d := valid(); d["events"] = map[string]any{}; return encode(t, d) }, "events are not an array"},
		{"an event is of another session", func(t *testing.T) []byte {
			d := valid()
			event(d, 2)["session"] = "s-2"
			rechain(d)
			return encode(t, d)
		}, `event 2 names session "s-2", not s-1`},
		{"an event is of another attempt", func(t *testing.T) []byte {
			d := valid()
			event(d, 3)["attempt"] = "a-0"
			rechain(d)
			return encode(t, d)
		}, `event 3 names attempt "a-0", not a-1`},
		{"an event is not an object", func(t *testing.T) []byte { d := valid(); d["events"].([]any)[1] = "e"; return encode(t, d) }, "event 2 is not a JSON object"},
		{"an event has an unknown field", func(t *testing.T) []byte { d := valid(); event(d, 1)["at"] = "now"; rechain(d); return encode(t, d) }, `event 1 has unknown field "at"`},
		{"an event names no trace", func(t *testing.T) []byte { d := valid(); delete(event(d, 2), "trace"); rechain(d); return encode(t, d) }, `event 2 has no field "trace"`},
		{"an event's trace is not an identifier", func(t *testing.T) []byte { d := valid(); event(d, 1)["trace"] = "a b"; rechain(d); return encode(t, d) }, `event 1's trace "a b" is not an identifier`},
		{"events are out of order", func(t *testing.T) []byte {
			d := valid()
			evs := d["events"].([]any)
			evs[1], evs[2] = evs[2], evs[1]
			return encode(t, d)
		}, "event 2's seq is 3, not 2"},
		{"an event's seq is not a plain integer", func(t *testing.T) []byte { d := valid(); event(d, 1)["seq"] = json.Number("1.0"); return encode(t, d) }, "event 1's seq is 1.0, not 1"},
		{"the first event does not start from genesis", func(t *testing.T) []byte {
			d := valid()
			event(d, 1)["prev_digest"] = sha([]byte("x"))
			return encode(t, d)
		}, "event 1's prev_digest \"sha256:2d71"},
		{"the chain is broken", func(t *testing.T) []byte {
			d := valid()
			event(d, 3)["prev_digest"] = event(d, 1)["record_digest"]
			ev := event(d, 3)
			ev["record_digest"] = eventDigest(ev)
			return encode(t, d)
		}, "event 3's prev_digest"},
		{"an event changed after it was chained", func(t *testing.T) []byte {
			d := valid()
			fact(d, 2, trace.FactIdentity)["value"] = "worker-2"
			return encode(t, d)
		}, "event 2's record_digest"},
		{"a record digest is not a digest", func(t *testing.T) []byte { d := valid(); event(d, 3)["record_digest"] = "md5:00"; return encode(t, d) }, `event 3's record_digest "md5:00" is not sha256:<64 hex>`},
		{"the tail was truncated", func(t *testing.T) []byte {
			d := valid()
			d["events"] = d["events"].([]any)[:2]
			return encode(t, d)
		}, "the seal's count is 3, but the bundle holds 2 events"},
		{"the seal names another final digest", func(t *testing.T) []byte {
			d := valid()
			d["seal"].(map[string]any)["final_digest"] = event(d, 2)["record_digest"]
			return encode(t, d)
		}, "the seal's final_digest"},
		{"the seal has an unknown field", func(t *testing.T) []byte { d := valid(); d["seal"].(map[string]any)["by"] = "me"; return encode(t, d) }, `the seal has unknown field "by"`},
		{"a fact has no status", func(t *testing.T) []byte {
			d := valid()
			delete(fact(d, 2, trace.FactCost), "status")
			rechain(d)
			return encode(t, d)
		}, `event 2's fact "cost" has no status`},
		{"a fact has another status", func(t *testing.T) []byte {
			d := valid()
			fact(d, 1, trace.FactTool)["status"] = "guessed"
			rechain(d)
			return encode(t, d)
		}, `event 1's fact "tool" has status "guessed"`},
		{"a recorded fact has no value", func(t *testing.T) []byte {
			d := valid()
			delete(fact(d, 1, trace.FactTool), "value")
			rechain(d)
			return encode(t, d)
		}, `event 1's fact "tool" has no field "value"`},
		{"a recorded fact's value is null", func(t *testing.T) []byte {
			d := valid()
			fact(d, 1, trace.FactTool)["value"] = nil
			rechain(d)
			return encode(t, d)
		}, "null value"},
		{"a computed fact names no method", func(t *testing.T) []byte {
			d := valid()
			delete(fact(d, 1, trace.FactLatency), "method")
			rechain(d)
			return encode(t, d)
		}, `event 1's fact "latency" has no field "method"`},
		{"an unavailable fact carries a value", func(t *testing.T) []byte {
			d := valid()
			fact(d, 1, trace.FactCost)["value"] = 0
			rechain(d)
			return encode(t, d)
		}, `event 1's fact "cost" has unknown field "value"`},
		{"a not-applicable fact has an empty reason", func(t *testing.T) []byte {
			d := valid()
			fact(d, 1, trace.FactAdapter)["reason"] = ""
			rechain(d)
			return encode(t, d)
		}, `event 1's fact "adapter"'s reason is not text`},
		{"a fact is not an object", func(t *testing.T) []byte {
			d := valid()
			event(d, 1)["facts"].(map[string]any)[trace.FactGate] = "passed"
			rechain(d)
			return encode(t, d)
		}, `event 1's fact "gate" is not an object`},
		{"an event leaves a required fact unstated", func(t *testing.T) []byte {
			d := valid()
			delete(event(d, 2)["facts"].(map[string]any), trace.FactLatency)
			rechain(d)
			return encode(t, d)
		}, `event 2 does not state fact "latency"`},
		{"a fact name is not allowed", func(t *testing.T) []byte {
			d := valid()
			event(d, 1)["facts"].(map[string]any)["Tokens"] = map[string]any{"status": "unavailable", "reason": "r"}
			rechain(d)
			return encode(t, d)
		}, `event 1's fact name "Tokens"`},
		{"an event states too many facts", func(t *testing.T) []byte {
			d := valid()
			f := event(d, 1)["facts"].(map[string]any)
			for i := 0; len(f) <= trace.MaxFacts; i++ {
				f[fmt.Sprintf("f%d", i)] = map[string]any{"status": "unavailable", "reason": "r"}
			}
			rechain(d)
			return encode(t, d)
		}, "states 65 facts, over the limit of 64"},
		{"the facts are not an object", func(t *testing.T) []byte {
			d := valid()
			event(d, 1)["facts"] = []any{}
			rechain(d)
			return encode(t, d)
		}, "event 1's facts are not an object"},
		{"only the first of two defects is named", func(t *testing.T) []byte {
			d := valid()
			event(d, 2)["session"] = "s-9"
			event(d, 3)["prev_digest"] = trace.GenesisDigest
			return encode(t, d)
		}, `event 2 names session "s-9"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			session := s
			var b []byte
			if c.make == nil {
				session = "../x"
				b = encode(t, valid())
			} else {
				b = c.make(t)
			}
			r, err := trace.Validate(session, a, b)
			if err == nil {
				t.Fatalf("accepted with receipt %s\n%s", r.Bytes(), clipBytes(b))
			}
			got, ok := refusal.As(err)
			if !ok || got.Name != refusal.TraceInvalid || got.Class != refusal.Unreadable {
				t.Fatalf("refused with %v, want %s (unreadable)", err, refusal.TraceInvalid)
			}
			if !strings.Contains(got.Detail, c.want) {
				t.Fatalf("detail %q does not say %q", got.Detail, c.want)
			}
		})
	}
}

func TestAReceiptThatIsNotExactlyWhatValidateWroteIsRefused(t *testing.T) {
	t.Parallel()
	r := mustValidate(t, "s", "a", validBundle(t, "s", "a", 1))
	good := string(r.Bytes())
	for name, b := range map[string]string{
		"whitespace":      good + "\n",
		"an unknown key":  strings.Replace(good, `{"attempt"`, `{"a":1,"attempt"`, 1),
		"a missing field": strings.Replace(good, `"count":1,`, ``, 1),
		"another version": strings.Replace(good, `"v":1,`, `"v":2,`, 1),
		"a zero count":    strings.Replace(good, `"count":1,`, `"count":0,`, 1),
	} {
		if _, err := trace.ParseReceipt([]byte(b)); !refusal.Named(err, refusal.ReceiptMismatch) {
			t.Errorf("a receipt with %s: %v", name, err)
		}
	}
}

var update = flag.Bool("update", false, "rewrite testdata/example.json")

func TestMain(m *testing.M) {
	flag.Parse()
	if *update {
		d := newDoc("session-7", "attempt-1", 2)
		b, err := gitstore.Canonical(d)
		if err == nil {
			err = os.WriteFile("testdata/example.json", append(b, '\n'), 0o644)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	os.Exit(m.Run())
}
