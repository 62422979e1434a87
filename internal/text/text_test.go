package text

import (
	"testing"
	"unicode/utf8"
)

func TestTruncateCutsAtARuneBoundary(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"abcdef", 3, "abc…"},
		{"ééé", 3, "é…"},
		{"✓✓", 4, "✓…"},
	} {
		got := Truncate(c.in, c.n)
		if got != c.want || !utf8.ValidString(got) {
			t.Errorf("Truncate(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

func TestOneLineAndShort(t *testing.T) {
	if got := OneLine(" a\r\n b\t\tc\n"); got != "a b c" {
		t.Errorf("OneLine = %q", got)
	}
	if got := Short("0123456789abcdef"); got != "0123456789ab" {
		t.Errorf("Short = %q", got)
	}
}

func TestNearestSuggestsOnlyWhatWasMeant(t *testing.T) {
	verbs := []string{"open", "observation", "verdict", "close", "show"}
	for in, want := range map[string]string{"opne": "open", "shwo": "show", "clos": "close", "verdcit": "verdict", "bogus": "", "o": ""} {
		if got := Nearest(in, verbs); got != want {
			t.Errorf("Nearest(%q) = %q, want %q", in, got, want)
		}
	}
}
