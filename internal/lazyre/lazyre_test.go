package lazyre

import (
	"regexp"
	"sync"
	"testing"
)

func TestEveryMethodAnswersAsTheCompiledExpression(t *testing.T) {
	const expr = `\{([a-z]+)\}`
	lazy, eager := New(expr), regexp.MustCompile(expr)
	for _, s := range []string{"", "{a}", "x{ab}y{c}", "{A}", "{}"} {
		if lazy.MatchString(s) != eager.MatchString(s) || lazy.Match([]byte(s)) != eager.Match([]byte(s)) {
			t.Errorf("%q: match differs", s)
		}
		if lazy.FindString(s) != eager.FindString(s) {
			t.Errorf("%q: FindString differs", s)
		}
		if a, b := lazy.FindStringSubmatch(s), eager.FindStringSubmatch(s); len(a) != len(b) || (len(a) > 1 && a[1] != b[1]) {
			t.Errorf("%q: FindStringSubmatch %q, want %q", s, a, b)
		}
		if a, b := lazy.FindAllString(s, -1), eager.FindAllString(s, -1); len(a) != len(b) {
			t.Errorf("%q: FindAllString %q, want %q", s, a, b)
		}
		up := func(m string) string { return "<" + m + ">" }
		if lazy.ReplaceAllStringFunc(s, up) != eager.ReplaceAllStringFunc(s, up) {
			t.Errorf("%q: ReplaceAllStringFunc differs", s)
		}
	}
	if lazy.String() != expr || lazy.Regexp().String() != expr {
		t.Errorf("String() = %q, want %q", lazy.String(), expr)
	}
}

func TestConcurrentFirstUsesCompileOnce(t *testing.T) {
	r := New(`^a+$`)
	var wg sync.WaitGroup
	seen := make([]*regexp.Regexp, 8)
	for i := range seen {
		wg.Add(1)
		go func() {
			defer wg.Done()
			seen[i] = r.Regexp()
		}()
	}
	wg.Wait()
	for _, s := range seen {
		if s != seen[0] {
			t.Fatal("the expression was compiled more than once")
		}
	}
}

func TestAnInvalidExpressionPanicsAtFirstUseNotAtNew(t *testing.T) {
	r := New(`(`)
	defer func() {
		if recover() == nil {
			t.Fatal("an invalid expression did not panic at first use")
		}
	}()
	r.MatchString("x")
}
