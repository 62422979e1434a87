package odb

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

// deltaSeeds are deltas against deltaBase: valid ones made by delta()
// and damaged ones of every kind patch_delta refuses.
var deltaBase = []byte(strings.Repeat("0123456789abcdef", 5000)) // 80,000 bytes: copies of 0x10000 fit

func deltaSeeds() [][]byte {
	n := len(deltaBase)
	return [][]byte{
		delta(n, [2]int{0, 100}, "CHANGED", [2]int{150, 150}),
		delta(n, "only inserted"),
		delta(n),
		delta(n, [2]int{n - 1, 1}),
		{0x80, 0xf1, 0x04, 0x10, 0x80},             // a copy of size 0 means 0x10000
		{0x80, 0xf1, 0x04, 0x10, 0x90, 0x01},       // a copy of 1 byte at 0, declared 16
		{0x80, 0xf1, 0x04, 0x01, 0x00},             // opcode 0
		{0x80, 0xf1, 0x04, 0x02, 0x05, 'a'},        // an insert past the delta's end
		{0x80, 0xf1, 0x04, 0x01, 0x91, 0xff, 0xff}, // a copy past the base's end
		{0x80, 0xf1, 0x04, 0x01, 0x91},             // a copy command cut short
		{0x80, 0xf1, 0x04, 0x01, 0x01, 'a', 0x01},  // a byte left after the result is full
		{0x80, 0xf1, 0x04, 0x02, 0x01, 'a'},        // the result shorter than declared
		{0x80, 0xf1, 0x84},                         // a target size cut short (git reads it as 4)
		{0x80, 0xf1, 0x04, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, // a size past 63 bits
		{0x81, 0xf1, 0x04, 0x00}, // the wrong base size
		{},
		{0x80},
	}
}

// FuzzApplyDelta holds applyDelta to go-git's packfile.PatchDelta, which
// odb used before: both refuse a delta or both make the same bytes. A base
// of any length but the empty one is tried (PatchDelta refuses an empty
// base outright; TestApplyDeltaOnEmptyBase covers it).
func FuzzApplyDelta(f *testing.F) {
	for _, d := range deltaSeeds() {
		f.Add(deltaBase, d)
		f.Add([]byte("a short base"), d)
	}
	f.Fuzz(func(t *testing.T, src, d []byte) {
		if len(src) == 0 {
			return
		}
		got, err := applyDelta(src, d)
		want, wantErr := packfile.PatchDelta(src, d)
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("applyDelta: %v; PatchDelta: %v", err, wantErr)
		}
		if err != nil {
			if !errors.Is(err, errDelta) {
				t.Fatalf("error %v does not wrap errDelta", err)
			}
			return
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("applyDelta made %d bytes, PatchDelta %d", len(got), len(want))
		}
	})
}

func TestApplyDeltaOnEmptyBase(t *testing.T) {
	for _, tc := range []struct {
		name  string
		delta []byte
		want  string
		fails bool
	}{
		{name: "inserts make the result", delta: delta(0, "built", " from nothing"), want: "built from nothing"},
		{name: "an empty result", delta: delta(0), want: ""},
		{name: "a copy from the empty base is refused", delta: delta(0, [2]int{0, 1}), fails: true},
		{name: "a delta for another base is refused", delta: delta(1, "x"), fails: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := applyDelta(nil, tc.delta)
			if tc.fails {
				if !errors.Is(err, errDelta) {
					t.Fatalf("got %q, %v; want errDelta", got, err)
				}
				return
			}
			if err != nil || string(got) != tc.want || got == nil {
				t.Fatalf("got %q (nil %v), %v; want %q", got, got == nil, err, tc.want)
			}
		})
	}
}

// TestApplyDeltaDoesNotAllocateTheDeclaredSize: a delta declaring a
// result of 2^50 bytes is refused when its bytes run out, without the
// declared size allocated first (which would end the test binary).
func TestApplyDeltaDoesNotAllocateTheDeclaredSize(t *testing.T) {
	d := append(leb128(leb128(nil, 1), 1<<50), 1, 'x')
	if got, err := applyDelta([]byte("b"), d); !errors.Is(err, errDelta) {
		t.Fatalf("got %d bytes, %v; want errDelta", len(got), err)
	}
}
