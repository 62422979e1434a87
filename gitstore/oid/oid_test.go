package oid_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/gitstore/oid"
)

func TestParseRoundTripsBothFormatsAndRefusesTheRest(t *testing.T) {
	for _, c := range []struct {
		in     string
		format oid.Format
	}{
		{"3b18e512dba79e4c8300dd08aeb37f8e728b8dad", oid.SHA1},
		{"3B18E512DBA79E4C8300DD08AEB37F8E728B8DAD", oid.SHA1},
		{"2f7a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8", oid.SHA256},
	} {
		id, err := oid.Parse(c.in)
		if err != nil || id.Format() != c.format || id.String() != strings.ToLower(c.in) || len(id.Bytes()) != c.format.Size() {
			t.Errorf("Parse(%q) = %v (%v) %v", c.in, id, id.Format(), err)
		}
		back, err := oid.FromBytes(id.Bytes())
		if err != nil || back != id {
			t.Errorf("FromBytes(Bytes(%q)) = %v %v", c.in, back, err)
		}
	}
	for _, bad := range []string{"", "abc", strings.Repeat("g", 40), strings.Repeat("a", 41), strings.Repeat("a", 63)} {
		if _, err := oid.Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
	if id, err := oid.Parse(strings.Repeat("0", 40)); err != nil || !id.IsZero() || id != oid.Zero {
		t.Errorf("all zeros: %v %v", id, err)
	}
}

func TestIDsOfTheTwoFormatsNeverCompareEqual(t *testing.T) {
	a := oid.MustParse(strings.Repeat("ab", 20))
	b, _ := oid.FromBytes(append(a.Bytes(), make([]byte, 12)...))
	if a == b || oid.Compare(a, b) == 0 {
		t.Fatal("a SHA-1 id equals a SHA-256 id padded with zeros")
	}
	if oid.Compare(a, a) != 0 || a.Short() != strings.Repeat("ab", 6) {
		t.Fatal("compare or short")
	}
}

func TestIDsAreJSONText(t *testing.T) {
	in := struct {
		Commit oid.ID `json:"commit"`
		None   oid.ID `json:"none"`
	}{Commit: oid.MustParse(strings.Repeat("c", 40))}
	b, err := json.Marshal(in)
	if err != nil || string(b) != `{"commit":"`+strings.Repeat("c", 40)+`","none":""}` {
		t.Fatalf("%s %v", b, err)
	}
	var out struct {
		Commit oid.ID `json:"commit"`
		None   oid.ID `json:"none"`
	}
	if err := json.Unmarshal(b, &out); err != nil || out.Commit != in.Commit || !out.None.IsZero() {
		t.Fatalf("%+v %v", out, err)
	}
	if err := json.Unmarshal([]byte(`{"commit":"xyz"}`), &out); err == nil {
		t.Fatal("a malformed id was read")
	}
}

// TestOfAFormatNeverCutsNorPads: an id of one format is read as such or
// refused, never cut or padded to the other's length.
func TestOfAFormatNeverCutsNorPads(t *testing.T) {
	long := strings.Repeat("ab", 32)
	if _, err := oid.ParseOf(oid.SHA1, long); err == nil {
		t.Fatal("ParseOf(SHA1) read 64 digits")
	}
	if _, err := oid.ParseOf(oid.SHA256, long[:40]); err == nil {
		t.Fatal("ParseOf(SHA256) read 40 digits")
	}
	if id, err := oid.ParseOf(oid.SHA256, long); err != nil || id.Format() != oid.SHA256 {
		t.Fatalf("ParseOf(SHA256): %v %v", id, err)
	}
	b := make([]byte, 32)
	b[0] = 1
	if _, err := oid.FromBytesOf(oid.SHA1, b); err == nil {
		t.Fatal("FromBytesOf(SHA1) took 32 bytes")
	}
	if _, err := oid.FromBytesOf(oid.SHA256, b[:20]); err == nil {
		t.Fatal("FromBytesOf(SHA256) took 20 bytes")
	}
	for name, f := range map[string]oid.Format{"sha1": oid.SHA1, "SHA256": oid.SHA256} {
		if got, err := oid.ParseFormat(name); err != nil || got != f {
			t.Errorf("ParseFormat(%q) = %v %v", name, got, err)
		}
	}
	if _, err := oid.ParseFormat("sha3"); err == nil {
		t.Error("ParseFormat(sha3) accepted")
	}
}
