package examine

import (
	"strings"
	"testing"
)

// FuzzParsePublic feeds the examine.public reader any configuration (it is
// committed by the candidate): it must not panic, every entry it accepts is
// relative with no empty, "." or ".." segment, and its pattern compiles and
// matches the entry's own literal text when the entry holds no wildcard.
func FuzzParsePublic(f *testing.F) {
	for _, s := range []string{
		`{"examine": {"public": ["docs/runbooks/**.md", "README.md"]}}`,
		`{"examine": {"public": ["a/**/b", "**/x", "*.md"], "level": 1}}`,
		`{"examine": {"public": ["/etc"]}}`,
		`{"examine": null}`,
		`[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		entries, err := ParsePublic(b)
		if err != nil {
			return
		}
		for _, e := range entries {
			if strings.HasPrefix(e, "/") {
				t.Fatalf("accepted absolute %q", e)
			}
			for _, seg := range strings.Split(e, "/") {
				if seg == "" || seg == "." || seg == ".." {
					t.Fatalf("accepted %q", e)
				}
			}
			re := publicPattern(e)
			if !strings.Contains(e, "*") && !re.MatchString(e) {
				t.Fatalf("%q does not match itself", e)
			}
		}
	})
}
