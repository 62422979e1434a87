package gitstore

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
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

// FuzzCanonicalFastPathAgrees holds Canonical's fast path to
// canonicalByTokens, the reading of encoding/json's tokens it stands in
// for: where the fast path takes a text, the tokens take it too and give
// the same bytes; and the fast path takes every text the tokens take
// unless it nests deeper than canonMaxDepth.
func FuzzCanonicalFastPathAgrees(f *testing.F) {
	for _, s := range []string{
		`{"body":{"a":1},"kind":"k","v":1}`,
		` {"b" : [1, {"z":null, "a":"\u00e9\n\"x\"<>&"}], "a" : true} `,
		`{"a":1,"a":2}`,
		`{"é":1,"e":2,"\u00e9x":3}`,
		`[-0, 1.5e+10, 2E-3, 1e400, 0.0]`,
		`"\ud800 lone \udc00 surrogates \ud83d\ude00"`,
		`"tab	inside"`,
		"\"\u2028\u2029\x7f\"",
		`[01]`, `[1,]`, `{"a":1,}`, `tru`, `nulll`, `1 2`, `{"a" 1}`, `[[[[[]]]]]`,
		`{"\/":"\/","\u0041":"\b\f"}`,
		// Each refusal of the fast path: literals, numbers, strings cut
		// short, objects cut at each step, and one nesting too deep.
		`false`, `[true,false,null]`, `-`, `1.`, `1e`, `-01`, `"ab`, `"é`, `{"a`, `{"a":}`, `{"a":1`, `{"a":1 "b":2}`,
		strings.Repeat("[", canonMaxDepth+1) + strings.Repeat("]", canonMaxDepth+1),
		strings.Repeat("[", canonMaxDepth) + strings.Repeat("]", canonMaxDepth),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !utf8.Valid(raw) {
			return
		}
		fast, fastOK := appendCanonical(nil, raw)
		slow, err := canonicalByTokens(raw)
		if fastOK && (err != nil || !bytes.Equal(fast, slow)) {
			t.Fatalf("%q: fast path %q, tokens %q, %v", raw, fast, slow, err)
		}
		if !fastOK && err == nil && nesting(raw) <= canonMaxDepth {
			t.Fatalf("%q: the tokens give %q, the fast path does not take it", raw, slow)
		}
	})
}

// FuzzAppendString holds appendString to encoding/json's encoder without
// HTML escaping, which Canonical's strings were written by.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "a\"b\\c", "\b\f\n\r\t\x00\x1f\x7f", "<>&", "é\u2028\u2029😀", "\xff\xfe bad \xc3", "\xed\xa0\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		want := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		if got := appendString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("appendString(%q) = %q, the encoder writes %q", s, got, want)
		}
	})
}

// nesting is how deep raw's arrays and objects nest, outside strings.
func nesting(raw []byte) int {
	depth, most, inString, escaped := 0, 0, false, false
	for _, c := range raw {
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString:
			inString = c != '"'
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			most = max(most, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return most
}
