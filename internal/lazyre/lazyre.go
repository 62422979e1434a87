package lazyre

import (
	"regexp"
	"sync"
)

// Regexp is a regular expression compiled on its first use. The expression
// is a constant of the program: an invalid one panics at that first use, as
// regexp.MustCompile would have at start, and every package's tests use its
// expressions.
type Regexp struct {
	compile func() *regexp.Regexp
}

// New returns expr, to be compiled when first used.
func New(expr string) *Regexp {
	return &Regexp{compile: sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })}
}

// Regexp returns the compiled expression.
func (r *Regexp) Regexp() *regexp.Regexp { return r.compile() }

// MatchString is regexp.Regexp.MatchString.
func (r *Regexp) MatchString(s string) bool { return r.compile().MatchString(s) }

// Match is regexp.Regexp.Match.
func (r *Regexp) Match(b []byte) bool { return r.compile().Match(b) }

// FindString is regexp.Regexp.FindString.
func (r *Regexp) FindString(s string) string { return r.compile().FindString(s) }

// FindStringSubmatch is regexp.Regexp.FindStringSubmatch.
func (r *Regexp) FindStringSubmatch(s string) []string { return r.compile().FindStringSubmatch(s) }

// FindAllString is regexp.Regexp.FindAllString.
func (r *Regexp) FindAllString(s string, n int) []string { return r.compile().FindAllString(s, n) }

// ReplaceAllStringFunc is regexp.Regexp.ReplaceAllStringFunc.
func (r *Regexp) ReplaceAllStringFunc(s string, f func(string) string) string {
	return r.compile().ReplaceAllStringFunc(s, f)
}

// String is the expression's source text.
func (r *Regexp) String() string { return r.compile().String() }
