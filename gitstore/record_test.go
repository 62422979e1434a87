package gitstore_test

import (
	"testing"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/refusal"
)

func TestARecordOfTextThatIsNotUTF8IsRefusedNotReplaced(t *testing.T) {
	t.Parallel()
	type body struct {
		Check string            `json:"check"`
		Tags  map[string]string `json:"tags"`
		Raw   []byte            `json:"raw"`
	}
	if _, err := gitstore.NewRecord("k", 1, body{Check: "echo ok", Raw: []byte{0xff}}); err != nil {
		t.Fatalf("bytes are not text: %v", err)
	}
	for _, b := range []body{{Check: "echo \xff"}, {Tags: map[string]string{"a": "\xfe"}}, {Tags: map[string]string{"\xfe": "a"}}} {
		if _, err := gitstore.NewRecord("k", 1, b); !refusal.Named(err, "InputNotUTF8") {
			t.Fatalf("%+v: err = %v, want InputNotUTF8", b, err)
		}
	}
}
