package swarm

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nwdes/nwdes/refusal"
)

const (
	testBase  = "0123456789abcdef0123456789abcdef01234567"
	testLine1 = "RESULT: fix-lease.1 sha=0123456789ab"
)

const testCard = testLine1 + "\nBASE: " + testBase + "\nDEADLINE: 45m\nSTART: swarm/lease.go\n\nMake the lease renew.\nKEY: not a header\n"

func cardProblems(t *testing.T, err error) []string {
	t.Helper()
	if !refusal.Named(err, refusal.CardInvalid) {
		t.Fatalf("err = %v, want a refusal %s", err, refusal.CardInvalid)
	}
	var cerr *CardError
	if !errors.As(err, &cerr) {
		t.Fatalf("err = %v holds no *CardError", err)
	}
	return cerr.Problems
}

func TestACardIsRead(t *testing.T) {
	t.Parallel()
	c, err := ParseCard([]byte(testCard))
	if err != nil {
		t.Fatal(err)
	}
	want := &Card{
		Label: "fix-lease.1", Sha12: "0123456789ab", Base: testBase, Deadline: 45 * time.Minute, Kind: KindProduce,
		Headers:      []Header{{"BASE", testBase}, {"DEADLINE", "45m"}, {"START", "swarm/lease.go"}},
		ContractLine: testLine1, Text: []byte(testCard),
	}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("got %+v\nwant %+v", c, want)
	}
	if v, ok := c.Lookup("START"); !ok || v != "swarm/lease.go" {
		t.Fatalf("Lookup(START) = %q, %v", v, ok)
	}
	if _, ok := c.Lookup("KEY"); ok {
		t.Fatal("a line of the prompt was read as a header")
	}
}

func TestACardOfHeadersAloneEndsAtItsLastLine(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{
		testLine1 + "\nBASE: " + testBase,
		testLine1 + "\nBASE: " + testBase + "\n",
		testLine1 + "\nBASE: " + testBase + "\n \t\nprompt",
		testLine1 + "\nBASE: " + testBase + "\nX-Y_2: a: b  c",
	} {
		c, err := ParseCard([]byte(doc))
		if err != nil {
			t.Fatalf("%q: %v", doc, err)
		}
		if c.Base != testBase || c.Deadline != 0 || c.ContractLine != testLine1 {
			t.Fatalf("%q: read %+v", doc, c)
		}
	}
}

func TestEachCardProblemIsNamed(t *testing.T) {
	t.Parallel()
	const base = "\nBASE: " + testBase
	for _, tc := range []struct {
		name string
		doc  string
		want string
	}{
		{"an empty card", ``, "the card is empty; its line 1 is `RESULT: <label> sha=<sha12>`"},
		{"a card of blanks", " \n\n", "the card is empty"},
		{"a CRLF line 1", testLine1 + "\r" + base, "line 1: ends with a carriage return"},
		{"a trailing space on line 1", testLine1 + " " + base, "line 1: \"" + testLine1 + " \" ends with white space"},
		{"a lower-case result", "result: fix sha=0123456789ab" + base, "is not `RESULT: <label> sha=<sha12>`"},
		{"no space after the colon", "RESULT:fix sha=0123456789ab" + base, "is not `RESULT"},
		{"an indented line 1", " " + testLine1 + base, "is not `RESULT"},
		{"a tab before sha", "RESULT: fix\tsha=0123456789ab" + base, "is not `RESULT"},
		{"two spaces before the label", "RESULT:  fix sha=0123456789ab" + base, `line 1: the label " fix" does not match`},
		{"a label with a space", "RESULT: fix it sha=0123456789ab" + base, `the label "fix it" does not match`},
		{"a label with ..", "RESULT: a..b sha=0123456789ab" + base, `the label "a..b" does not match`},
		{"a label of 101 bytes", "RESULT: " + strings.Repeat("x", 101) + " sha=0123456789ab" + base, "does not match"},
		{"a short sha", "RESULT: fix sha=0123456789a\nBASE: " + testBase, `line 1: sha="0123456789a" is not 12 lowercase hex digits`},
		{"an upper-case sha", "RESULT: fix sha=0123456789AB" + base, "is not 12 lowercase hex digits"},
		{"words after the sha", testLine1 + " more" + base, `sha="0123456789ab more" is not`},
		{"no BASE", testLine1 + "\nDEADLINE: 1m", "BASE: missing"},
		{"BASE after the blank line", testLine1 + "\n\nBASE: " + testBase, "BASE: missing"},
		{"a short BASE", testLine1 + "\nBASE: 0123456789ab", `line 2: BASE "0123456789ab" is not a full commit id`},
		{"an upper-case BASE", testLine1 + "\nBASE: " + strings.ToUpper(testBase), "is not a full commit id"},
		{"a BASE not matching sha", "RESULT: fix sha=aaaaaaaaaaaa" + base, "line 2: BASE " + testBase + " does not begin with line 1's sha=aaaaaaaaaaaa"},
		{"a repeated BASE", testLine1 + base + base, "line 3: the header BASE repeats line 2"},
		{"a repeated other header", testLine1 + base + "\nX: 1\nX: 2", "line 4: the header X repeats line 3"},
		{"a lower-case header", testLine1 + base + "\nstart: x", `line 3: "start: x" is not a header`},
		{"a header with no colon", testLine1 + base + "\nSTART x", "is not a header"},
		{"a header with an empty value", testLine1 + base + "\nSTART:", "line 3: the header START wants one space and a value"},
		{"a header with a space value", testLine1 + base + "\nSTART:  ", "wants one space and a value"},
		{"a header with no space", testLine1 + base + "\nSTART:x", "wants one space"},
		{"a header with two spaces", testLine1 + base + "\nSTART:  x", "more than one space after the colon"},
		{"a header with trailing white space", testLine1 + base + "\nSTART: x\t", "the header START ends with white space"},
		{"a CRLF header", testLine1 + base + "\nSTART: x\r\n", "the header START holds a control character"},
		{"a header with a control character", testLine1 + base + "\nSTART: a\x1bb", "holds a control character"},
		{"a bad DEADLINE", testLine1 + base + "\nDEADLINE: soon", `line 3: DEADLINE "soon" is not a duration`},
		{"a zero DEADLINE", testLine1 + base + "\nDEADLINE: 0s", "DEADLINE 0s is not more than 0"},
		{"a DEADLINE over a day", testLine1 + base + "\nDEADLINE: 25h", "at most 24h0m0s"},
		{"a NUL", testCard + "\x00", "the card holds a NUL byte at offset"},
		{"invalid UTF-8", testCard + "\xff", "the card is not valid UTF-8 (first bad byte at offset"},
		{"an oversize card", testCard + strings.Repeat("x", MaxCardSize), "more than 262144"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := ParseCard([]byte(tc.doc))
			if c != nil {
				t.Fatalf("accepted %+v", *c)
			}
			p := cardProblems(t, err)
			if len(p) != 1 {
				t.Fatalf("problems = %q, want one", p)
			}
			if !strings.Contains(p[0], tc.want) {
				t.Fatalf("problem = %q, want it to hold %q", p[0], tc.want)
			}
		})
	}
}

func TestEveryProblemOfACardIsNamed(t *testing.T) {
	t.Parallel()
	doc := "RESULT: a..b sha=XYZ \nBASE: 0123\nbad line\nX: 1\nX: 2\nDEADLINE: 0s\n\nprompt\x00\n"
	_, err := ParseCard([]byte(doc))
	p := cardProblems(t, err)
	want := []string{"the card holds a NUL byte", "line 1: ", "line 2: BASE \"0123\"", "line 3: ", "line 5: the header X repeats line 4", "line 6: DEADLINE 0s"}
	if len(p) != len(want) {
		t.Fatalf("problems = %q, want %d", p, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(p[i], want[i]) {
			t.Errorf("problem %d = %q, want it to begin %q", i, p[i], want[i])
		}
	}
	r, _ := refusal.As(err)
	if !strings.HasPrefix(r.Detail, "6 problems: ") {
		t.Fatalf("detail = %q", r.Detail)
	}

	_, err = ParseCard([]byte("RESULT:  x..y sha=0123456789AB\nBASE:x\n"))
	if p := cardProblems(t, err); len(p) != 3 {
		t.Fatalf("problems = %q, want the label, the sha and BASE's form, and no missing BASE", p)
	}
}
