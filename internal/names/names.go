// Package names checks the names nwdes accepts for features, labels,
// payload files and ledger entries, in place of the regular expression
// ^[A-Za-z0-9][A-Za-z0-9._-]{0,N}$ that each package compiled. A bounded
// repetition compiles to a program of hundreds of instructions; compiling
// the feature name rule was 2% of a pre-push hook's run (issue 26). It
// imports nothing, so any package may use it.
package names

// Valid reports whether s is 1 to max bytes long, every byte an ASCII
// letter, digit, '.', '_' or '-', the first a letter or a digit: what
// ^[A-Za-z0-9][A-Za-z0-9._-]{0,max-1}$ matches. Rules on top of it (a
// ".lock" suffix) stay with their callers.
func Valid(s string, max int) bool {
	if len(s) == 0 || len(s) > max || !alnum(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !alnum(c) && c != '.' && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

// Component is Valid with no ".." in s: a name that becomes one component
// of a ref or a path (a label, a feature), where ".." is refused by git
// and would climb out of a directory.
func Component(s string, max int) bool {
	return Valid(s, max) && !containsDotDot(s)
}

func containsDotDot(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		if s[i] == '.' && s[i+1] == '.' {
			return true
		}
	}
	return false
}

func alnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
