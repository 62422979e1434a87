package text

import (
	"strings"
	"unicode/utf8"
)

// Text nwdes prints — contracts, observations, diagnostics, reasons,
// paths, names, notes — is written by whoever pushed a commit or a record.
// The functions below make it inert where it is printed, one convention
// for every writer:
//
// A character that could act on a terminal, or that XML 1.0 cannot hold,
// is shown as Go's strconv.Quote writes it: \a \b \f \r \v for those C0
// controls, \xNN for the other C0 controls, DEL (\x7f) and every byte that
// is not UTF-8, and \uNNNN for the C1 controls (U+0080–U+009F) and the
// bidirectional controls: the embeddings, overrides and isolates
// (U+202A–U+202E, U+2066–U+2069), which reorder the text after them, and
// the marks (U+200E, U+200F, U+061C), which change how the digits and
// punctuation beside them are shown.
// A backslash already in the text is left as it is: the escaped form is
// for reading, --json carries the exact text.

// class says which characters an escaping leaves as they are.
type class uint8

const (
	block    class = iota // text of several lines: \n and \t stay
	line                  // one value inside a line: \n and \t escaped too
	xmlBlock              // block, and the non-characters XML 1.0 forbids
)

// Terminal returns s fit to print on a terminal or into a log: every
// control character but newline and tab, every byte that is not UTF-8 and
// every bidirectional override is escaped. Use it for text of several
// lines (a block, a brief); use TerminalLine for one value inside a line.
func Terminal(s string) string { return escape(s, block) }

// TerminalLine is Terminal that also escapes newline and tab, so that a
// name, a path, a reason or a table cell cannot start a line of its own or
// shift columns.
func TerminalLine(s string) string { return escape(s, line) }

// XMLText returns s holding only characters XML 1.0 allows, the others
// escaped visibly as Terminal escapes them (and U+FFFE, U+FFFF as \ufffe,
// \uffff). encoding/xml then escapes markup (&, <, >, quotes) itself.
func XMLText(s string) string { return escape(s, xmlBlock) }

// escapes reports whether r is shown escaped in class c.
func escapes(r rune, c class) bool {
	switch {
	case r == '\n' || r == '\t':
		return c == line
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
		return true
	case isBidi(r):
		return true
	case r == 0xfffe || r == 0xffff:
		return c == xmlBlock
	}
	return false
}

// isBidi reports a bidirectional control: it changes the order in which a
// terminal or a viewer shows the text around it.
func isBidi(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x061c
}

// firstEscaped is where in s the first character class c escapes starts,
// len(s) when there is none.
func firstEscaped(s string, c class) int {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || escapes(r, c) {
			break
		}
		i += n
	}
	return i
}

// Unsafe reports where s holds the first character Terminal would escape,
// and that character as Terminal shows it; -1 and "" when s prints as it
// is. A check that stored text is safe to print (fsck of a note) names
// with it what it found.
func Unsafe(s string) (int, string) {
	i := firstEscaped(s, block)
	if i == len(s) {
		return -1, ""
	}
	_, n := utf8.DecodeRuneInString(s[i:])
	return i, escape(s[i:i+n], block)
}

func escape(s string, c class) string {
	i := firstEscaped(s, c)
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			writeByteEscape(&b, s[i])
		case escapes(r, c):
			writeRuneEscape(&b, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

const hexDigits = "0123456789abcdef"

func writeByteEscape(b *strings.Builder, c byte) {
	b.WriteString(`\x`)
	b.WriteByte(hexDigits[c>>4])
	b.WriteByte(hexDigits[c&0xf])
}

func writeRuneEscape(b *strings.Builder, r rune) {
	switch r {
	case '\a':
		b.WriteString(`\a`)
	case '\b':
		b.WriteString(`\b`)
	case '\f':
		b.WriteString(`\f`)
	case '\n':
		b.WriteString(`\n`)
	case '\r':
		b.WriteString(`\r`)
	case '\t':
		b.WriteString(`\t`)
	case '\v':
		b.WriteString(`\v`)
	default:
		if r < utf8.RuneSelf {
			writeByteEscape(b, byte(r))
			return
		}
		b.WriteString(`\u`)
		for shift := 12; shift >= 0; shift -= 4 {
			b.WriteByte(hexDigits[(r>>shift)&0xf])
		}
	}
}

// JSON rewrites a document encoding/json wrote so that it also prints
// safely: DEL, the C1 controls and the bidirectional controls (as
// Terminal escapes them), which
// encoding/json leaves as they are, become \u escapes (and a byte that is
// not UTF-8, which encoding/json never writes, \ufffd). The document means
// exactly the same: those characters can only stand inside its strings.
func JSON(doc []byte) []byte {
	i := 0
	for i < len(doc) && doc[i] < utf8.RuneSelf && doc[i] != 0x7f {
		i++
	}
	if i == len(doc) {
		return doc
	}
	out := make([]byte, 0, len(doc)+16)
	out = append(out, doc[:i]...)
	for i < len(doc) {
		r, n := utf8.DecodeRune(doc[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			out = append(out, `\ufffd`...)
		case r == 0x7f || (r >= 0x80 && r <= 0x9f) || isBidi(r):
			out = append(out, '\\', 'u', hexDigits[(r>>12)&0xf], hexDigits[(r>>8)&0xf], hexDigits[(r>>4)&0xf], hexDigits[r&0xf])
		default:
			out = append(out, doc[i:i+n]...)
		}
		i += n
	}
	return out
}
