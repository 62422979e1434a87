package swarm

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/nwdes/nwdes/internal/names"
	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/refusal"
)

// Card is a parsed card. The whole file is the harness's prompt; line 1 is
// the contract line its RESULT.md must repeat, and the headers after it
// say which commit the card was cut from.
type Card struct {
	// Label names the card; it follows LabelPattern.
	Label string
	// Sha12 is the 12 hex digits of line 1, BASE's first 12.
	Sha12 string
	// Base is the full commit id of the BASE header.
	Base string
	// Deadline is the DEADLINE header's duration, or 0 when the card
	// names none (the worker's deadline then applies).
	Deadline time.Duration
	// Paths are the PATHS header's globs (examine.MatchScope's rules):
	// what the job may change; nil when the card names none.
	Paths []string
	// DependsOn are the DEPENDS-ON header's labels: cards that must have
	// finished ok before this one runs.
	DependsOn []string
	// Test is the TEST header's oracle, nil when the card names none.
	Test *TestRef
	// Budget is the BUDGET header's, zero when the card names none.
	Budget Budget
	// Kind is the KIND header's: KindProduce (the default, a card that
	// makes a head) or KindExamine (a card that examines CANDIDATE).
	Kind Kind
	// Feature is the FEATURE header's: the feature whose contract the
	// card's work answers to; "" when the card names none.
	Feature string
	// Candidate is the CANDIDATE header's full commit id: the commit an
	// examine card examines; "" when the card names none.
	Candidate string
	// Branch is the BRANCH header's, as a full ref (refs/heads/…): the
	// branch an accepted head of the card lands on; "" when none.
	Branch string
	// ReworkOf is the REWORK-OF header's: the card whose head this card
	// reworks (its BASE) and its place in that lineage; nil when none.
	ReworkOf *ReworkRef
	// Headers are the card's headers in file order, BASE and DEADLINE
	// included.
	Headers []Header
	// ContractLine is line 1 without its line end.
	ContractLine string
	// Text is the whole file.
	Text []byte
}

// Header is one `KEY: value` line of a card.
type Header struct {
	Key   string
	Value string
}

// Lookup returns the value of the header key and whether the card has it.
func (c *Card) Lookup(key string) (string, bool) {
	for _, h := range c.Headers {
		if h.Key == key {
			return h.Value, true
		}
	}
	return "", false
}

// The bounds and shapes of a card.
const (
	// MaxCardSize bounds a card file.
	MaxCardSize = 256 << 10
	// LabelPattern is the rule a card's label follows; it may not hold "..".
	LabelPattern = "[A-Za-z0-9][A-Za-z0-9._-]{0,99}"
	// ContractPrefix opens line 1 of a card and of its RESULT.md.
	ContractPrefix = "RESULT: "
	// ContractForm is line 1's shape, for messages.
	ContractForm = "RESULT: <label> sha=<sha12>"
	// HeaderPattern is the rule a header's key follows.
	HeaderPattern = "[A-Z][A-Z0-9_-]*"
)

// The headers a card's parser reads.
const (
	BaseHeader      = "BASE"
	DeadlineHeader  = "DEADLINE"
	PathsHeader     = "PATHS"
	DependsOnHeader = "DEPENDS-ON"
	TestHeader      = "TEST"
	BudgetHeader    = "BUDGET"
	KindHeader      = "KIND"
	FeatureHeader   = "FEATURE"
	CandidateHeader = "CANDIDATE"
	BranchHeader    = "BRANCH"
	ReworkOfHeader  = "REWORK-OF"
)

// TypedHeaders lists the headers whose values a card's parser checks;
// any other header is the card's own text, unless its key is one letter
// or two from one of these (a typo, refused).
func TypedHeaders() []string {
	return []string{BaseHeader, DeadlineHeader, PathsHeader, DependsOnHeader, TestHeader, BudgetHeader, KindHeader, FeatureHeader, CandidateHeader, BranchHeader, ReworkOfHeader}
}

// CardError lists everything wrong with a card, in file order, each problem
// naming its line ("line 3: …"). A refusal CardInvalid wraps it.
type CardError struct {
	Problems []string
}

func (e *CardError) Error() string { return problemList(e.Problems) }

const cardRemedy = "write line 1 as `" + ContractForm + "`, then `KEY: value` headers up to a blank line, among them `BASE: <the full commit id>` whose first 12 digits are sha12 (and, if wanted, `DEADLINE:`, `PATHS:`, `DEPENDS-ON:`, `TEST:`, `BUDGET:`, `KIND:`, `FEATURE:`, `CANDIDATE:`, `BRANCH:`, `REWORK-OF:` as docs/swarm.md describes them), then the prompt; fix every problem listed"

// ParseCard reads a card. The file is at most MaxCardSize bytes of valid
// UTF-8 with no NUL, and its lines end with "\n". Line 1 is exactly
// `RESULT: <label> sha=<sha12>` — label per LabelPattern, sha12 twelve
// lowercase hex digits, single spaces, nothing after. The lines after it up
// to the first blank line (empty or only white space), or to the end, are
// headers `KEY: value`: KEY per HeaderPattern, one space after the colon,
// the value non-empty, with no control character and no white space at its
// end; a key given twice is a problem. BASE is required: 40 (or 64) lowercase hex
// digits whose first 12 are sha12. DEADLINE, when given, is a Go duration
// more than 0 and at most MaxDeadline. Every problem found is reported at
// once, in a refusal CardInvalid wrapping a *CardError. Whether BASE is a
// commit of the repository is the caller's question.
func ParseCard(b []byte) (*Card, error) {
	c, problems := parseCard(b)
	if len(problems) > 0 {
		return nil, cardRefusal(problems)
	}
	return c, nil
}

func cardRefusal(problems []string) error {
	cerr := &CardError{Problems: problems}
	return refusal.New(refusal.CardInvalid, cardRemedy, "%s", cerr).Wrap(cerr)
}

// parseCard is ParseCard's work: the card as far as it parsed (nil when
// it is empty), and every problem found.
func parseCard(b []byte) (*Card, []string) {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	if len(bytes.TrimSpace(b)) == 0 {
		return nil, []string{"the card is empty; its line 1 is `" + ContractForm + "`"}
	}
	if len(b) > MaxCardSize {
		add("the card is %d bytes, more than %d", len(b), MaxCardSize)
	}
	if i := bytes.IndexByte(b, 0); i >= 0 {
		add("the card holds a NUL byte at offset %d", i)
	}
	if !utf8.Valid(b) {
		add("the card is not valid UTF-8 (first bad byte at offset %d)", invalidUTF8At(b))
	}

	c := &Card{Text: bytes.Clone(b)}
	lines := strings.Split(string(b), "\n")
	c.ContractLine = lines[0]
	for _, p := range contractProblems(c, lines[0]) {
		add("line 1: %s", p)
	}

	firstAt := map[string]int{}
	for i := 1; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
		n := i + 1
		h, why := parseHeader(lines[i])
		if why != "" {
			add("line %d: %s", n, why)
			if _, dup := firstAt[h.Key]; h.Key != "" && !dup {
				firstAt[h.Key] = n // present though malformed: not also missing
			}
			continue
		}
		if first, dup := firstAt[h.Key]; dup {
			add("line %d: the header %s repeats line %d", n, h.Key, first)
			continue
		}
		firstAt[h.Key] = n
		c.Headers = append(c.Headers, h)
		switch h.Key {
		case BaseHeader:
			switch {
			case !isCommitID(h.Value):
				add("line %d: BASE %s is not a full commit id of 40 (or, in a SHA-256 repository, 64) lowercase hex digits", n, strconv.Quote(text.Truncate(h.Value, 80)))
			case c.Sha12 != "" && h.Value[:12] != c.Sha12:
				add("line %d: BASE %s does not begin with line 1's sha=%s", n, h.Value, c.Sha12)
			default:
				c.Base = h.Value
			}
		case DeadlineHeader:
			d, why := parseDeadline(h.Value)
			if why != "" {
				add("line %d: DEADLINE %s", n, why)
			}
			c.Deadline = d
		default:
			for _, why := range c.typedHeader(h) {
				add("line %d: %s", n, why)
			}
		}
	}
	if _, ok := firstAt[BaseHeader]; !ok {
		add("BASE: missing (a header `BASE: <the full commit id>` after line 1, before the first blank line)")
	}
	for _, why := range c.kindProblems(firstAt) {
		add("%s", why)
	}
	return c, problems
}

// contractProblems checks line 1 and fills c's Label and Sha12 from the
// parts that hold.
func contractProblems(c *Card, line string) []string {
	if strings.HasSuffix(line, "\r") {
		return []string{"ends with a carriage return (\\r\\n line ends); the card's lines end with \\n alone"}
	}
	q := strconv.Quote(text.Truncate(line, 120))
	if strings.TrimRight(line, " \t") != line {
		return []string{fmt.Sprintf("%s ends with white space; want exactly `%s`", q, ContractForm)}
	}
	rest, ok := strings.CutPrefix(line, ContractPrefix)
	label, sha, ok2 := strings.Cut(rest, " sha=")
	if !ok || !ok2 {
		return []string{fmt.Sprintf("%s is not `%s`", q, ContractForm)}
	}
	var p []string
	if names.Component(label, 100) {
		c.Label = label
	} else {
		p = append(p, fmt.Sprintf("the label %s does not match %s without \"..\" (single spaces only)", strconv.Quote(text.Truncate(label, 120)), LabelPattern))
	}
	if isLowerHex(sha, 12) {
		c.Sha12 = sha
	} else {
		p = append(p, fmt.Sprintf("sha=%s is not 12 lowercase hex digits (the first 12 of BASE)", strconv.Quote(text.Truncate(sha, 60))))
	}
	return p
}

// parseHeader reads `KEY: value`, returning why a line is not one (with
// the key alone when only the value is wrong).
func parseHeader(line string) (Header, string) {
	q := strconv.Quote(text.Truncate(line, 120))
	key, value, ok := strings.Cut(line, ":")
	switch {
	case !ok || !validHeaderKey(key):
		return Header{}, fmt.Sprintf("%s is not a header `KEY: value` (KEY matching %s; headers end at the first blank line)", q, HeaderPattern)
	case !strings.HasPrefix(value, " ") || strings.TrimSpace(value) == "":
		return Header{Key: key}, fmt.Sprintf("the header %s wants one space and a value after the colon", key)
	case strings.HasPrefix(value, "  "):
		return Header{Key: key}, fmt.Sprintf("the header %s has more than one space after the colon", key)
	case strings.TrimRight(value, " \t") != value:
		return Header{Key: key}, fmt.Sprintf("the header %s ends with white space", key)
	case hasControl(value):
		return Header{Key: key}, fmt.Sprintf("the header %s holds a control character", key)
	}
	return Header{Key: key, Value: value[1:]}, ""
}

func validHeaderKey(s string) bool {
	if s == "" || s[0] < 'A' || s[0] > 'Z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// isCommitID is a full commit id of a SHA-1 (40 hex digits) or SHA-256
// (64) repository; whether it is one of this repository's is the
// caller's question.
func isCommitID(s string) bool { return isLowerHex(s, 40) || isLowerHex(s, 64) }

func isLowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// invalidUTF8At is the offset of the first byte of b that does not begin a
// valid UTF-8 sequence, or -1.
func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}
