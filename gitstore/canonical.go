package gitstore

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"
)

// This file holds the fast path of Canonical: one pass over the bytes of
// a JSON text that writes its canonical form, as writeCanonical (which
// reads encoding/json's tokens) writes it, at a fraction of the cost.
// Every record read is checked to be canonical, and fsck reads them all,
// so this is most of what checking a record costs.
//
// The fast path only ever succeeds where writeCanonical succeeds, with the
// same bytes (FuzzCanonicalFastPathAgrees holds it to that); anything it
// does not take — a syntax error, a duplicate key, nesting deeper than
// canonMaxDepth — it leaves to writeCanonical, which decides, and names
// the error.

// canonMaxDepth is the deepest nesting the fast path takes (encoding/json
// refuses past 10,000; records nest a few levels).
const canonMaxDepth = 512

// appendCanonical appends the canonical form of the one JSON value raw
// holds (whitespace around it allowed) to out, and reports whether it
// could. raw must be valid UTF-8.
func appendCanonical(out, raw []byte) ([]byte, bool) {
	p := canonParser{b: raw}
	p.ws()
	out, ok := p.value(out, 0)
	if !ok {
		return nil, false
	}
	p.ws()
	return out, p.i == len(p.b)
}

type canonParser struct {
	b []byte
	i int
	// levels holds each nesting depth's members and scratch, reused by
	// every object at that depth: one at a depth is done before the next
	// one there begins.
	levels []canonLevel
}

type canonLevel struct {
	members []canonMember
	scratch []byte
}

func (p *canonParser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// next is the byte at the cursor, 0 at the end (never valid there).
func (p *canonParser) next() byte {
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

func (p *canonParser) value(out []byte, depth int) ([]byte, bool) {
	switch c := p.next(); {
	case c == '{':
		return p.object(out, depth+1)
	case c == '[':
		return p.array(out, depth+1)
	case c == '"':
		s, ok := p.str()
		return appendString(out, s), ok
	case c == 't':
		return p.literal(out, "true")
	case c == 'f':
		return p.literal(out, "false")
	case c == 'n':
		return p.literal(out, "null")
	case c == '-' || '0' <= c && c <= '9':
		return p.number(out)
	}
	return nil, false
}

func (p *canonParser) literal(out []byte, lit string) ([]byte, bool) {
	if !bytes.HasPrefix(p.b[p.i:], []byte(lit)) {
		return nil, false
	}
	p.i += len(lit)
	return append(out, lit...), true
}

// number takes JSON's number grammar and keeps the number as written, as
// writeCanonical keeps a json.Number.
func (p *canonParser) number(out []byte) ([]byte, bool) {
	start := p.i
	digits := func() bool {
		n := p.i
		for p.i < len(p.b) && '0' <= p.b[p.i] && p.b[p.i] <= '9' {
			p.i++
		}
		return p.i > n
	}
	if p.next() == '-' {
		p.i++
	}
	if p.next() == '0' {
		p.i++
	} else if !digits() {
		return nil, false
	}
	if p.next() == '.' {
		p.i++
		if !digits() {
			return nil, false
		}
	}
	if c := p.next(); c == 'e' || c == 'E' {
		p.i++
		if c := p.next(); c == '+' || c == '-' {
			p.i++
		}
		if !digits() {
			return nil, false
		}
	}
	return append(out, p.b[start:p.i]...), true
}

// str reads the string at the cursor and returns it decoded. One of
// printable ASCII without escapes is its bytes; any other is decoded by
// encoding/json, as writeCanonical's tokens decode it.
func (p *canonParser) str() (string, bool) {
	start := p.i
	p.i++
	for p.i < len(p.b) {
		switch c := p.b[p.i]; {
		case c == '"':
			p.i++
			return string(p.b[start+1 : p.i-1]), true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return p.escaped(start)
		}
		p.i++
	}
	return "", false
}

func (p *canonParser) escaped(start int) (string, bool) {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case '\\':
			p.i += 2
			continue
		case '"':
			p.i++
			var s string
			if err := json.Unmarshal(p.b[start:p.i], &s); err != nil {
				return "", false
			}
			return s, true
		}
		p.i++
	}
	return "", false
}

func (p *canonParser) array(out []byte, depth int) ([]byte, bool) {
	if depth > canonMaxDepth {
		return nil, false
	}
	p.i++
	out = append(out, '[')
	p.ws()
	if p.next() == ']' {
		p.i++
		return append(out, ']'), true
	}
	for {
		p.ws()
		var ok bool
		if out, ok = p.value(out, depth); !ok {
			return nil, false
		}
		p.ws()
		switch p.next() {
		case ',':
			p.i++
			out = append(out, ',')
		case ']':
			p.i++
			return append(out, ']'), true
		default:
			return nil, false
		}
	}
}

type canonMember struct {
	key        string
	start, end int // its canonical value in the object's scratch
}

func (p *canonParser) object(out []byte, depth int) ([]byte, bool) {
	if depth > canonMaxDepth {
		return nil, false
	}
	p.i++
	p.ws()
	if p.next() == '}' {
		p.i++
		return append(out, '{', '}'), true
	}
	for len(p.levels) <= depth {
		p.levels = append(p.levels, canonLevel{})
	}
	members, scratch := p.levels[depth].members[:0], p.levels[depth].scratch[:0]
	defer func() { p.levels[depth].members, p.levels[depth].scratch = members, scratch }()
	for {
		p.ws()
		if p.next() != '"' {
			return nil, false
		}
		key, ok := p.str()
		if !ok {
			return nil, false
		}
		p.ws()
		if p.next() != ':' {
			return nil, false
		}
		p.i++
		p.ws()
		start := len(scratch)
		if scratch, ok = p.value(scratch, depth); !ok {
			return nil, false
		}
		members = append(members, canonMember{key, start, len(scratch)})
		p.ws()
		if p.next() == ',' {
			p.i++
			continue
		}
		if p.next() != '}' {
			return nil, false
		}
		p.i++
		break
	}
	slices.SortFunc(members, func(a, b canonMember) int { return strings.Compare(a.key, b.key) })
	out = append(out, '{')
	for i, m := range members {
		if i > 0 {
			if m.key == members[i-1].key {
				return nil, false // a duplicate: writeCanonical names it
			}
			out = append(out, ',')
		}
		out = appendString(out, m.key)
		out = append(out, ':')
		out = append(out, scratch[m.start:m.end]...)
	}
	return append(out, '}'), true
}

// appendString appends s as a JSON string as encoding/json's encoder
// writes it without HTML escaping (FuzzAppendString holds it to the
// encoder): '"' and '\' escaped, the controls as \b, \f, \n, \r, \t or
// \u00XX, bytes that are not UTF-8 as \ufffd, U+2028 and U+2029 as
// \u2028 and \u2029, everything else as it is.
func appendString(out []byte, s string) []byte {
	const hex = "0123456789abcdef"
	out = append(out, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < utf8.RuneSelf && c != '"' && c != '\\' {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			out = append(out, s[start:i]...)
			switch c {
			case '"', '\\':
				out = append(out, '\\', c)
			case '\b':
				out = append(out, '\\', 'b')
			case '\f':
				out = append(out, '\\', 'f')
			case '\n':
				out = append(out, '\\', 'n')
			case '\r':
				out = append(out, '\\', 'r')
			case '\t':
				out = append(out, '\\', 't')
			default:
				out = append(out, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			out = append(out, s[start:i]...)
			out = append(out, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			out = append(out, s[start:i]...)
			out = append(out, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	out = append(out, s[start:]...)
	return append(out, '"')
}
