package ledger_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/nwdes/nwdes/ledger"
)

// FuzzCanonicalEvent: any input is refused or becomes canonical JSON of
// one object that reads back as itself.
func FuzzCanonicalEvent(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"b":[1,{"c":null}],"a":"\u00e9"}`, `{"a":1,"a":2}`, `[]`, `{"x":1e400}`, `{"n":-0.0}`, `{} {}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ledger.CanonicalEvent(b)
		if err != nil {
			return
		}
		var v map[string]any
		if json.Unmarshal(c, &v) != nil || v == nil {
			t.Fatalf("accepted %q as %q, not an object", b, c)
		}
		again, err := ledger.CanonicalEvent(c)
		if err != nil || !bytes.Equal(again, c) {
			t.Fatalf("canonical %q is not stable: %q %v", c, again, err)
		}
	})
}
