package text

import "strings"

// Markdown (CommonMark, GitHub Flavored) does not interpret a numeric
// character reference as structure: "&#42;" shows "*" and never starts
// emphasis, "&#124;" never splits a table cell, "&lt;" never opens a tag.
// The same references are decoded inside an HTML block (<details>,
// <summary>), where backslash escapes would not be. So untrusted text is
// escaped with references, and reads the same wherever it lands.

// mdAnywhere are the characters that can start structure anywhere in a
// line: HTML and autolinks (<, >, &), code spans (`), emphasis (*, _),
// strike-through and fences (~), links, images and footnotes ([, ]),
// backslash escapes (\), table cells (|), headings (#) and math ($).
var mdAnywhere = map[byte]string{
	'&': "&amp;", '<': "&lt;", '>': "&gt;", '`': "&#96;", '*': "&#42;", '_': "&#95;",
	'~': "&#126;", '[': "&#91;", ']': "&#93;", '\\': "&#92;", '|': "&#124;", '#': "&#35;", '$': "&#36;",
}

// mdLineStart are the characters that start a block only at the start of
// a line: list items (-, +), thematic breaks and setext underlines (-, =),
// indented code (spaces).
var mdLineStart = map[byte]string{'-': "&#45;", '+': "&#43;", '=': "&#61;", ' ': "&#32;"}

// mdListDelim end the digits of an ordered list item at the start of a line.
var mdListDelim = map[byte]string{'.': "&#46;", ')': "&#41;"}

// MarkdownInline returns s as literal text on one line of Markdown: in a
// paragraph, a heading, a list item, a table cell or inside an HTML block
// (<summary>), wherever the line starts. It can neither end the block it
// is in, nor open a tag, a link, an image, a code span or emphasis, nor
// split a table cell. Newlines and controls are escaped as TerminalLine
// escapes them. GitHub still links bare URLs, @mentions and #123 in
// rendered text; nothing in Markdown itself stops that.
func MarkdownInline(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	i := 0
	for i < len(s) && s[i] == ' ' {
		b.WriteString(mdLineStart[' '])
		i++
	}
	if i < len(s) {
		if ref, ok := mdLineStart[s[i]]; ok {
			b.WriteString(ref)
			i++
		} else {
			// An ordered list item: digits, then "." or ")".
			j := i
			for j < len(s) && j-i < 10 && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			if ref, ok := mdListDelim[at(s, j)]; ok && j > i {
				b.WriteString(s[i:j])
				b.WriteString(ref)
				i = j + 1
			}
		}
	}
	for ; i < len(s); i++ {
		c := s[i]
		ref, ok := mdAnywhere[c]
		// An underscore between two letters or digits never starts or ends
		// emphasis; keep not_examined readable.
		if ok && c == '_' && i > 0 && i+1 < len(s) && isAlnum(s[i-1]) && isAlnum(s[i+1]) {
			ok = false
		}
		if ok {
			b.WriteString(ref)
		} else {
			b.WriteByte(c)
		}
	}
	return TerminalLine(b.String())
}

// MarkdownBlock returns text of several lines as literal Markdown
// paragraphs: each line escaped as MarkdownInline escapes it, the lines
// kept. A line of it can start no heading, list, quote, fence or HTML
// block, and cannot underline the line before into a heading.
func MarkdownBlock(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = MarkdownInline(l)
	}
	return strings.Join(lines, "\n")
}

// MarkdownCode returns s as one inline code span: its backtick run is
// longer than any in s, so s cannot close it, and its controls and
// newlines are escaped as TerminalLine escapes them. In a table cell the
// caller must still escape "|" as "\|" (tables split rows before code
// spans are read).
func MarkdownCode(s string) string {
	s = TerminalLine(s)
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	delim := strings.Repeat("`", longest+1)
	// One space each side is stripped from a span that starts and ends
	// with one; pad a span that touches a backtick or would lose a space.
	if s == "" || s[0] == '`' || s[len(s)-1] == '`' || (s[0] == ' ' && s[len(s)-1] == ' ' && strings.Trim(s, " ") != "") {
		s = " " + s + " "
	}
	return delim + s + delim
}

// at returns s[i], or 0 past the end.
func at(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
