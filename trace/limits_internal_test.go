package trace

import (
	"strings"
	"testing"

	"github.com/nwdes/nwdes/refusal"
)

// The event bound cannot be reached within MaxBundleBytes while every
// event states the required facts, so it is tested with a smaller bound.
func TestABundleOverTheEventLimitIsRefused(t *testing.T) {
	t.Parallel()
	b := []byte(`{"attempt":"a","events":[1,2,3],"seal":{},"session":"s","v":1}`)
	v := &validation{session: "s", attempt: "a", maxEvents: 2}
	_, _, err := v.bundle(b)
	if r, ok := refusal.As(err); !ok || r.Name != refusal.TraceInvalid || !strings.Contains(r.Detail, "holds 3 events, over the limit of 2") {
		t.Fatalf("err = %v", err)
	}
}

func TestDepthSkipsBracketsInStrings(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int{
		`[]`:                  1,
		`{"a":[{"b":"[[["}]}`: 3,
		`["\"[["]`:            1,
		`"[[["`:               0,
	} {
		if got := depth([]byte(in)); got != want {
			t.Errorf("depth(%s) = %d, want %d", in, got, want)
		}
	}
}
