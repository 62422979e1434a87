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
