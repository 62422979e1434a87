package examine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/internal/gittest"
)

// unsafeToPrint names the first character of s a terminal could act on:
// a control other than newline and tab, a C1 control, a bidirectional
// control, or a byte that is not UTF-8; "" when there is none.
func unsafeToPrint(s string) string {
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			return fmt.Sprintf("a byte that is not UTF-8 after %q", s[max(0, i-20):i])
		case r == '\n' || r == '\t':
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f),
			r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
			return fmt.Sprintf("U+%04X after %q", r, s[max(0, i-20):i])
		}
	}
	return ""
}

// hostile holds every kind of character that can act on a terminal or
// reorder what it shows.
// A record's JSON text (the diagnostic) is UTF-8; an observation's
// text, a payload, may be any bytes.
const (
	hostileUTF8 = "title\x1b]0;pwned\x07 \x1b[2J\x1b[31mred\rover\x08 c1:\u009b31m rlo:\u202eevil\u202c lri:\u2066x\u2069 lrm:\u200e rlm:\u200f alm:\u061c"
	hostile     = hostileUTF8 + " bad:\xff\xfe end"
)

// A brief built from hostile text (a contract's criterion, an observation,
// the diagnostic) reaches git notes show and git log --notes escaped as
// nwdes escapes terminal output, its Markdown structure kept; fsck names
// a note that holds such characters raw.
func TestABriefOfHostileTextIsSafeToPrintAndFsckNamesOneThatIsNot(t *testing.T) {
	dir := gittest.Init(t, false)
	commitContract(t, dir, "# REQUEST\nr\n# ACCEPTANCE CRITERIA\nE1. one \x1b[8mhidden\x1b[0m \u202eright-to-left\n")
	loc, err := gitrepo.Discover(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := gitstore.NewRegistry(examine.Register, examine.RegisterDisplay("refs/notes/commits"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := gitstore.Open(loc, gitstore.Options{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	clock := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	x := &examine.Examiner{Store: st, DisplayRef: "refs/notes/commits", Now: func() time.Time { clock = clock.Add(time.Second); return clock }}
	must := okFor(t)
	ctx := context.Background()
	must(x.Open(ctx, tg, false))
	o1 := examine.ObservationID(must(x.AddObservation(ctx, tg, examine.SourceExaminer, []byte(hostile+"\n"))).Message)
	o2 := examine.ObservationID(must(x.AddObservation(ctx, tg, examine.SourceExaminer, []byte("no final newline \x1b[0m"))).Message)
	must(x.SetVerdict(ctx, tg, examine.VerdictInput{Expectation: "E1", Verdict: examine.Met, Observations: []examine.ObservationID{o1, o2}}))
	if _, _, err := x.Close(ctx, tg, "accepted", "diagnostic "+hostileUTF8); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"notes", "--ref", "nwdes", "show", "HEAD"},
		{"log", "-1", "--notes=nwdes"},
		{"notes", "--ref", "commits", "show", "HEAD"},
	} {
		out, err := gittest.Run(dir, args...)
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		if what := unsafeToPrint(out); what != "" {
			t.Fatalf("git %v prints %s:\n%q", args, what, out)
		}
		if args[0] == "log" { // git log indents a note by four spaces
			lines := strings.Split(out, "\n")
			for i, l := range lines {
				lines[i] = strings.TrimPrefix(l, "    ")
			}
			out = strings.Join(lines, "\n")
		}
		for _, want := range []string{
			"## nwdes acceptance brief: f: accepted\n",
			"\n### E1: met\n\none \\x1b[8mhidden\\x1b[0m \\u202eright-to-left\n",
			"\n```text\ntitle\\x1b]0;pwned\\a \\x1b[2J\\x1b[31mred\\rover\\b c1:\\u009b31m rlo:\\u202eevil\\u202c lri:\\u2066x\\u2069 lrm:\\u200e rlm:\\u200f alm:\\u061c bad:\\xff\\xfe end\n```\n",
			"\n```text\nno final newline \\x1b[0m\n```\n(no newline at end of text)\n",
			"\n### diagnostic\n\ndiagnostic title\\x1b]0;pwned\\a",
		} {
			if !strings.Contains(out, want) {
				t.Fatalf("git %v does not hold %q:\n%s", args, want, out)
			}
		}
	}
	if rep, err := st.Fsck(); err != nil || !rep.OK() {
		t.Fatalf("fsck of the escaped brief: %v %+v", err, rep)
	}

	// A note holding the characters raw (an older nwdes wrote it, or
	// anyone with push access) is named as not safe to print.
	raw := filepath.Join(t.TempDir(), "note")
	note := gittest.Git(t, dir, "notes", "--ref", "nwdes", "show", "HEAD")
	if err := os.WriteFile(raw, []byte(note+"\n\x1b]8;;https://example.com\x07link\x1b]8;;\x07 \u202e\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "notes", "--ref", "nwdes", "add", "-f", "-F", raw, "HEAD")
	rep, err := st.Fsck()
	if err != nil {
		t.Fatal(err)
	}
	var named bool
	for _, p := range rep.Problems {
		named = named || p.Ref == gitstore.NotesRef && strings.Contains(p.What, "not safe to print") && strings.Contains(p.What, `\x1b`)
		if what := unsafeToPrint(p.String()); what != "" {
			t.Fatalf("fsck's problem prints %s: %q", what, p.String())
		}
	}
	if !named {
		t.Fatalf("fsck does not name the raw note as not safe to print: %+v", rep.Problems)
	}
}
