package text

import (
	"encoding/json"
	"encoding/xml"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// hostile holds one of everything the escapes must neutralise.
var hostile = []struct {
	name, in, terminal, line string
}{
	{"plain text is left alone", "Hello, Ada. ✓ é 日本", "Hello, Ada. ✓ é 日本", "Hello, Ada. ✓ é 日本"},
	{"newline and tab stay in a block, not in a line", "a\n\tb", "a\n\tb", `a\n\tb`},
	{"a CSI colour sequence", "\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`, `\x1b[31mred\x1b[0m`},
	{"an OSC title ended by BEL", "\x1b]0;title\x07", `\x1b]0;title\a`, `\x1b]0;title\a`},
	{"an OSC 8 hyperlink ended by ST", "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", `\x1b]8;;http://x\x1b\link\x1b]8;;\x1b\`, `\x1b]8;;http://x\x1b\link\x1b]8;;\x1b\`},
	{"a carriage return that would rewrite the line", "MET\rNOT-MET", `MET\rNOT-MET`, `MET\rNOT-MET`},
	{"NUL, backspace, form feed, vertical tab", "a\x00b\bc\fd\ve", `a\x00b\bc\fd\ve`, `a\x00b\bc\fd\ve`},
	{"DEL", "a\x7fb", `a\x7fb`, `a\x7fb`},
	{"C1 CSI (U+009B) as a rune", "a\u009b31mb", `a\u009b31mb`, `a\u009b31mb`},
	{"C1 NEL and the end of C1", "\u0085\u009f\u00a0", `\u0085\u009f` + "\u00a0", `\u0085\u009f` + "\u00a0"},
	{"a lone byte 0x9b is not UTF-8", "a\x9bb", `a\x9bb`, `a\x9bb`},
	{"invalid UTF-8: a truncated sequence and 0xff", "\xe2\x9c x \xff", `\xe2\x9c x \xff`, `\xe2\x9c x \xff`},
	{"an encoded surrogate is not UTF-8", "\xed\xa0\x80", `\xed\xa0\x80`, `\xed\xa0\x80`},
	{"bidi override, embedding and isolate controls", "a\u202eb\u202ac\u2066d\u2069", `a\u202eb\u202ac\u2066d\u2069`, `a\u202eb\u202ac\u2066d\u2069`},
	{"bidi marks, which reorder digits and punctuation", "1\u200f\u200e\u061c2", `1\u200f\u200e\u061c2`, `1\u200f\u200e\u061c2`},
	{"a backslash already there is kept", `C:\x1b`, `C:\x1b`, `C:\x1b`},
	{"U+FFFD and non-characters stay on a terminal", "\ufffd\ufffe", "\ufffd\ufffe", "\ufffd\ufffe"},
}

func TestTerminalEscapesEveryControlVisibly(t *testing.T) {
	for _, c := range hostile {
		t.Run(c.name, func(t *testing.T) {
			if got := Terminal(c.in); got != c.terminal {
				t.Errorf("Terminal(%q) = %q, want %q", c.in, got, c.terminal)
			}
			if got := TerminalLine(c.in); got != c.line {
				t.Errorf("TerminalLine(%q) = %q, want %q", c.in, got, c.line)
			}
		})
	}
}

func TestTheEscapesAreStrconvQuotes(t *testing.T) {
	for r := rune(0); r < 0x3000; r++ {
		s := string(r)
		got := TerminalLine(s)
		if got == s {
			continue
		}
		q := strconv.QuoteRune(r)
		if want := q[1 : len(q)-1]; got != want {
			t.Errorf("TerminalLine(%U) = %s, strconv writes %s", r, got, want)
		}
	}
}

func TestEscapedTextHoldsNoControlAndIsUTF8(t *testing.T) {
	for _, c := range hostile {
		for _, got := range []string{Terminal(c.in), TerminalLine(c.in), XMLText(c.in), MarkdownInline(c.in), MarkdownBlock(c.in)} {
			if !utf8.ValidString(got) {
				t.Errorf("%s: %q is not UTF-8", c.name, got)
			}
			for _, r := range got {
				if (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x061c {
					t.Errorf("%s: %q still holds %U", c.name, got, r)
				}
			}
		}
	}
}

func TestXMLTextIsWellFormedXML(t *testing.T) {
	for _, c := range append(hostile, struct{ name, in, terminal, line string }{name: "non-characters", in: "a\ufffeb\uffff"}) {
		esc := XMLText(c.in)
		if strings.ContainsAny(esc, "\ufffe\uffff") {
			t.Errorf("%s: XMLText kept a non-character: %q", c.name, esc)
		}
		doc, err := xml.Marshal(struct {
			XMLName xml.Name `xml:"t"`
			A       string   `xml:"a,attr"`
			Text    string   `xml:",chardata"`
		}{A: esc, Text: esc})
		if err != nil {
			t.Fatal(err)
		}
		var back struct {
			A    string `xml:"a,attr"`
			Text string `xml:",chardata"`
		}
		if err := xml.Unmarshal(doc, &back); err != nil || back.Text != esc || back.A != esc {
			t.Errorf("%s: %s does not read back (%v): %q", c.name, doc, err, back.Text)
		}
		if strings.ContainsRune(string(doc), '\ufffd') && !strings.ContainsRune(c.in, '\ufffd') {
			t.Errorf("%s: encoding/xml had to replace a character: %s", c.name, doc)
		}
	}
	if got := XMLText("a\ufffeb\uffff\x1b"); got != `a\ufffeb\uffff\x1b` {
		t.Errorf("XMLText = %q", got)
	}
}

func TestMarkdownInlineCannotStartStructure(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"plain text", "greet prints Hello, Ada.", "greet prints Hello, Ada."},
		{"closing the details block and an image", "</details><img src=x onerror=alert(1)>", "&lt;/details&gt;&lt;img src=x onerror=alert(1)&gt;"},
		{"a link and an image", "[click](http://evil) ![i](x)", "&#91;click&#93;(http://evil) !&#91;i&#93;(x)"},
		{"an autolink", "<http://evil>", "&lt;http://evil&gt;"},
		{"an entity is shown, not decoded", "&lt;b&gt; &amp;", "&amp;lt;b&amp;gt; &amp;amp;"},
		{"code span and emphasis", "`x` *b* __c__ ~~d~~", "&#96;x&#96; &#42;b&#42; &#95;&#95;c&#95;&#95; &#126;&#126;d&#126;&#126;"},
		{"an underscore inside a word stays", "not_examined snake_case_name _x_", "not_examined snake_case_name &#95;x&#95;"},
		{"a table cell separator", "a | b", "a &#124; b"},
		{"a heading", "### E3: met", "&#35;&#35;&#35; E3: met"},
		{"a quote", "> quoted", "&gt; quoted"},
		{"a list item", "- item", "&#45; item"},
		{"a list item after spaces", "  + item", "&#32;&#32;&#43; item"},
		{"a hyphen inside a line stays", "read-only, 2026-01-01", "read-only, 2026-01-01"},
		{"a setext underline", "===", "&#61;=="},
		{"an ordered list item", "1. first", "1&#46; first"},
		{"an ordered list item with a parenthesis", "12) x", "12&#41; x"},
		{"a number that is no list", "1.5 apples", "1&#46;5 apples"},
		{"a version is no list", "v1.2", "v1.2"},
		{"indented code", "    code", "&#32;&#32;&#32;&#32;code"},
		{"a fence", "```", "&#96;&#96;&#96;"},
		{"a tilde fence", "~~~", "&#126;&#126;&#126;"},
		{"a backslash escape", `\<b>`, "&#92;&lt;b&gt;"},
		{"math", "$x$", "&#36;x&#36;"},
		{"a newline cannot end the line", "a\n\n### E1: met", `a\n\n&#35;&#35;&#35; E1: met`},
		{"controls are escaped after the references", "\x1b[31m", `\x1b&#91;31m`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := MarkdownInline(c.in); got != c.want {
				t.Errorf("MarkdownInline(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func TestMarkdownBlockEscapesEveryLineStart(t *testing.T) {
	in := "first line\n===\n- item\n</details>\n    code\n1. one\nlast"
	want := "first line\n&#61;==\n&#45; item\n&lt;/details&gt;\n&#32;&#32;&#32;&#32;code\n1&#46; one\nlast"
	if got := MarkdownBlock(in); got != want {
		t.Errorf("MarkdownBlock = %q, want %q", got, want)
	}
}

func TestMarkdownCodeCannotBeClosedByItsText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"published/ab/cd", "`published/ab/cd`"},
		{"a`b", "``a`b``"},
		{"```", "```` ``` ````"},
		{"`x", "`` `x ``"},
		{" a ", "`  a  `"},
		{"", "`  `"},
		{"<b>\x1b\n", "`<b>\\x1b\\n`"},
	} {
		if got := MarkdownCode(c.in); got != c.want {
			t.Errorf("MarkdownCode(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestJSONStaysTheSameDocumentAndPrintsSafely(t *testing.T) {
	for _, c := range hostile {
		doc, err := json.Marshal(map[string]string{"text": c.in, c.in: "key"})
		if err != nil {
			t.Fatal(err)
		}
		got := JSON(doc)
		if !json.Valid(got) {
			t.Fatalf("%s: not JSON: %s", c.name, got)
		}
		var a, b map[string]string
		json.Unmarshal(doc, &a)
		json.Unmarshal(got, &b)
		if a["text"] != b["text"] || len(a) != len(b) {
			t.Errorf("%s: JSON changed the document: %q became %q", c.name, a["text"], b["text"])
		}
		for _, r := range string(got) {
			if r == 0x1b || (r >= 0x7f && r <= 0x9f) || r == 0x202e {
				t.Errorf("%s: %s still holds %U", c.name, got, r)
			}
		}
	}
	if got := string(JSON([]byte("\"a\x7f\u009b\u202e\xff\""))); got != `"a\u007f\u009b\u202e\ufffd"` {
		t.Errorf("JSON = %s", got)
	}
}
