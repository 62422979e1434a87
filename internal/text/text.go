// Package text holds the few string helpers every layer uses to render
// messages: one line, bounded length, short object ids; and the escaping
// of untrusted text wherever it is printed — a terminal, Markdown, XML,
// JSON (escape.go, markdown.go). It imports only the standard library.
package text

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// OneLine collapses every run of white space, newlines included, into one
// space, so that a message built from user input stays on one line.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Truncate cuts s to at most n bytes, at a rune boundary so the result is
// still valid UTF-8, and marks a cut with "…".
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// Short abbreviates an object id to the 12 hex digits messages show.
func Short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// Plural is "1 <one>" or "n <many>".
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// Nearest returns the candidate closest to s by edit distance, if it is
// close enough to be what was meant (at most a third of its length, and
// at least one edit allowed), else "".
func Nearest(s string, candidates []string) string {
	best, bestD := "", -1
	for _, c := range candidates {
		if d := distance(s, c); bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	if bestD < 0 || bestD > max(1, len(best)/3) {
		return ""
	}
	return best
}

// distance is the optimal string alignment distance between a and b, in
// bytes: insertions, deletions, substitutions and swaps of two adjacent
// bytes ("opne" for "open") each count one.
func distance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
