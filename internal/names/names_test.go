package names

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// rule is the regular expression Valid replaces, for max bytes.
func rule(max int) *regexp.Regexp {
	return regexp.MustCompile(fmt.Sprintf(`^[A-Za-z0-9][A-Za-z0-9._-]{0,%d}$`, max-1))
}

func TestValidIsTheRegexpItReplaces(t *testing.T) {
	for _, max := range []int{1, 64, 100} {
		re := rule(max)
		for _, s := range []string{
			"", "a", "Z", "9", ".", "_", "-", "a.b", "a_b-c.d", "greet", "-greet", ".hidden", "_x",
			"a b", "a/b", "a\x00", "é", "aé", "a\n", "a..b", "x.lock", "A" + strings.Repeat("b", max-1),
			strings.Repeat("b", max+1), strings.Repeat("b", max), "a" + strings.Repeat(".", max-1),
		} {
			if got, want := Valid(s, max), re.MatchString(s); got != want {
				t.Errorf("Valid(%q, %d) = %v, the regexp says %v", s, max, got, want)
			}
		}
	}
}

func FuzzValidIsTheRegexpItReplaces(f *testing.F) {
	for _, s := range []string{"", "greet", "a..b", "-x", "a b", "é", strings.Repeat("a", 101)} {
		f.Add(s)
	}
	re := rule(100)
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Valid(s, 100), re.MatchString(s); got != want {
			t.Fatalf("Valid(%q, 100) = %v, the regexp says %v", s, got, want)
		}
	})
}

func BenchmarkValid(b *testing.B) {
	for i := 0; i < b.N; i++ {
		Valid("greet-the-world.v2", 100)
	}
}

func TestComponentIsValidWithoutTwoDots(t *testing.T) {
	for s, want := range map[string]bool{"a": true, "a.b": true, "a..b": false, "a.": true, "a..": false, "..": false, ".a": false, "a_-.9": true} {
		if got := Component(s, 10); got != want {
			t.Errorf("Component(%q) = %v, want %v", s, got, want)
		}
	}
}
