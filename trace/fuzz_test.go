package trace_test

import (
	"bytes"
	"testing"

	"github.com/nwdes/nwdes/trace"
)

// FuzzValidate holds that Validate never panics on any bytes, and that a
// bundle it accepts gets one receipt, bound to those bytes, that parses
// back and that validating again reproduces byte for byte.
func FuzzValidate(f *testing.F) {
	good := validBundle(f, "s", "a", 2)
	f.Add("s", "a", good)
	f.Add("s", "a", validBundle(f, "s", "a", 1))
	f.Add("s", "b", good)
	f.Add("s", "a", good[:len(good)/2])
	f.Add("s", "a", bytes.Replace(good, []byte(`"seq":2`), []byte(`"seq":1`), 1))
	f.Add("s", "a", bytes.Replace(good, []byte(`"recorded"`), []byte(`"computed"`), 1))
	f.Add("s", "a", []byte(`{"attempt":"a","events":[],"seal":{"count":0,"final_digest":""},"session":"s","v":1}`))
	f.Add("s", "a", []byte(`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[`))
	f.Add("", "", []byte(`{}`))
	f.Fuzz(func(t *testing.T, session, attempt string, b []byte) {
		in := bytes.Clone(b)
		r, err := trace.Validate(session, attempt, b)
		if !bytes.Equal(in, b) {
			t.Fatal("Validate changed its input")
		}
		if err != nil {
			return
		}
		if r.Session != session || r.Attempt != attempt || r.BundleSHA256 != sha(b) || r.BundleBytes != len(b) {
			t.Fatalf("receipt %s does not name the input", r.Bytes())
		}
		again, err := trace.Validate(session, attempt, bytes.Clone(b))
		if err != nil || !bytes.Equal(again.Bytes(), r.Bytes()) {
			t.Fatalf("validating again: %v", err)
		}
		parsed, err := trace.ParseReceipt(r.Bytes())
		if err != nil || parsed.ID() != r.ID() {
			t.Fatalf("the receipt does not parse back: %v", err)
		}
	})
}
