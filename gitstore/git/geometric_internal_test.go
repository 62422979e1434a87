package git

import "testing"

func TestGeometricKeepsDominantPacksAndCapsTheMerge(t *testing.T) {
	sizes := func(c []packCandidate) []int64 {
		var out []int64
		for _, p := range c {
			out = append(out, p.size)
		}
		return out
	}
	mk := func(s ...int64) []packCandidate {
		var c []packCandidate
		for i, n := range s {
			c = append(c, packCandidate{base: string(rune('a' + i)), size: n})
		}
		return c
	}
	// A big pack at least twice all the small ones together stays.
	if got := sizes(geometric(mk(1000, 1, 1, 1, 1))); len(got) != 4 {
		t.Errorf("geometric kept %v, want the four small packs", got)
	}
	// No pack dominates: all are merged.
	if got := sizes(geometric(mk(3, 2, 2, 1))); len(got) != 4 {
		t.Errorf("geometric chose %v, want all four", got)
	}
	// At most mergeBytes, smallest first, but always two.
	eight := int64(smallPackBytes)
	if got := sizes(geometric(mk(eight, eight, eight, eight, eight, eight))); len(got) != 4 {
		t.Errorf("geometric chose %v, want four packs of 8 MiB (32 MiB)", got)
	}
	if got := sizes(geometric(mk(mergeBytes, mergeBytes))); len(got) != 2 {
		t.Errorf("geometric chose %v, want two", got)
	}
}
