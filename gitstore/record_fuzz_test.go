package gitstore

import (
	"bytes"
	"testing"
)

// FuzzDecodeRecord feeds arbitrary bytes as a record.json: decoding never
// panics, and whatever decodes is exactly its canonical form, re-encodes to
// the same bytes, and has a kind and a version.
func FuzzDecodeRecord(f *testing.F) {
	for _, s := range []string{
		`{"body":{"a":1},"kind":"k","v":1}`,
		`{"body":{"b":[1,{"z":null,"a":"\u00e9"}],"a":true},"kind":"examine.draft","v":2}`,
		`{"kind":"k","v":1,"body":{}}`,
		`{"body":{},"body":{},"kind":"k","v":1}`,
		"{\"body\":\"\xff\",\"kind\":\"k\",\"v\":1}",
		`{"body":1e400,"kind":"k","v":1}`,
		`{"Body":{},"kind":"k","v":1}`,
		`{"body":{},"kind":"a<b&c\u2028","v":1}`,
		"{\"body\":{},\"kind\":\"\u00e9\",\"v\":10}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeRecord(b)
		if err != nil {
			return
		}
		if r.Kind == "" || r.V < 1 {
			t.Fatalf("decoded a record without kind or version: %+v", r)
		}
		again, err := r.encode()
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("re-encoding %q gave %q, %v", b, again, err)
		}
		if env := canonicalEnvelope(r); !bytes.Equal(env, again) {
			t.Fatalf("the envelope written around %q's body is %q, not %q", b, env, again)
		}
		if c, err := Canonical(b); err != nil || !bytes.Equal(c, b) {
			t.Fatalf("decoded bytes are not canonical: %q", b)
		}
	})
}
