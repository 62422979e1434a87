package examine

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/nwdes/nwdes/internal/lazyre"
	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/refusal"
)

// ExpectationID is a stable label E<n> of one acceptance criterion. IDs are
// unique within a contract but need not be contiguous.
type ExpectationID string

// Num is the numeric part, used to order IDs (E2 before E10).
func (id ExpectationID) Num() int {
	n, _ := strconv.Atoi(strings.TrimPrefix(string(id), "E"))
	return n
}

// Oracle is a criterion's command oracle: MET only when Check exits 0 and
// its standard output contains Expect.
type Oracle struct {
	Check  string `json:"check"`
	Expect string `json:"expect"`
}

// Criterion is one acceptance criterion of a contract.
type Criterion struct {
	ID     ExpectationID `json:"id"`
	Text   string        `json:"text"`
	Oracle *Oracle       `json:"oracle,omitempty"`
	Line   int           `json:"line"`
}

// Contract is a feature's committed contract: what was asked, the criteria
// that say it was done, the files it may touch, and abandoned criteria.
type Contract struct {
	Request   string                   `json:"request"`
	Criteria  []Criterion              `json:"criteria"`
	FileScope []string                 `json:"file_scope"`
	Abandoned map[ExpectationID]string `json:"abandoned,omitempty"`
}

// IDs returns the criteria's IDs in contract order.
func (c *Contract) IDs() []ExpectationID {
	ids := make([]ExpectationID, len(c.Criteria))
	for i, cr := range c.Criteria {
		ids[i] = cr.ID
	}
	return ids
}

// Criterion returns the criterion with id, if any.
func (c *Contract) Criterion(id ExpectationID) (Criterion, bool) {
	for _, cr := range c.Criteria {
		if cr.ID == id {
			return cr, true
		}
	}
	return Criterion{}, false
}

// Bounds of a contract: its size and its number of criteria. Every
// parser is linear; the bounds keep what follows it (one oracle per
// criterion, one verdict per criterion) bounded too.
const (
	MaxContractBytes = 256 << 10
	MaxCriteria      = 1000
)

// firstInvalidUTF8 is the offset of the first byte that is not valid UTF-8.
func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return len(b)
}

// Sections of a contract, in any order, each at most once.
const (
	sectionRequest  = "REQUEST"
	sectionCriteria = "ACCEPTANCE CRITERIA"
	sectionScope    = "FILE SCOPE"
)

var (
	criterionLine = lazyre.New(`^E([1-9][0-9]*)\.(?:[ \t]+(.*))?$`)
	attributeLine = lazyre.New(`^[ \t]+([A-Z][A-Z_]*):(?:[ \t]*(.*))?$`)
	abandonLine   = lazyre.New(`^ABANDON:[ \t]*(E[1-9][0-9]*)(?:[ \t]+(.*))?$`)
	idRef         = lazyre.New(`^E[1-9][0-9]*$`)
)

// parseContract parses a contract. It fails closed: anything it does not
// understand is refused with ConfigurationMalformed naming the line, and no
// partial contract is returned, so nothing downstream (least of all an
// oracle) ever acts on a contract that was half read.
//
// Grammar: "# REQUEST" (free text), "# ACCEPTANCE CRITERIA" (lines
// "E<n>. text", each optionally followed by indented "CHECK:", "EXPECT:" and
// "EVIDENCE:" lines), "# FILE SCOPE" (one glob per line), and, outside the
// request, "ABANDON: E<n> reason" lines. Blank lines are ignored; text
// before the first section is refused.
func parseContract(path string, src []byte) (*Contract, []error) {
	var problems []error
	bad := func(line int, format string, args ...any) error {
		err := refusal.New(refusal.ConfigurationMalformed,
			"fix the contract and commit it; docs/gates.md gives the grammar",
			"%s:%d: %s", path, line, fmt.Sprintf(format, args...))
		problems = append(problems, err)
		return err
	}
	if len(src) > MaxContractBytes {
		return nil, []error{refusal.New(refusal.ContractTooLarge, "split the feature into several contracts",
			"%s is %d bytes; a contract may hold at most %d", path, len(src), MaxContractBytes)}
	}
	if !utf8.Valid(src) {
		// Every verb reads the same bytes the same way: a contract that is
		// not UTF-8 is refused by all, never run by one and judged by another.
		line := 1 + bytes.Count(src[:firstInvalidUTF8(src)], []byte("\n"))
		bad(line, "the contract is not valid UTF-8")
		return nil, problems
	}
	c := &Contract{Abandoned: map[ExpectationID]string{}}
	body := strings.ReplaceAll(string(src), "\r\n", "\n")
	section := ""
	seenSection := map[string]bool{}
	var request []string
	var cur *Criterion
	type attrs struct{ check, expect, evidence int }
	curAttrs := map[ExpectationID]*attrs{}
	abandonAt := map[ExpectationID]int{}
	criterionAt := map[ExpectationID]int{}
	for i, line := range strings.Split(body, "\n") {
		n := i + 1
		if strings.HasPrefix(line, "# ") || line == "#" {
			name := strings.TrimSpace(strings.TrimPrefix(line, "#"))
			switch name {
			case sectionRequest, sectionCriteria, sectionScope:
			default:
				bad(n, "unknown section %q (known: REQUEST, ACCEPTANCE CRITERIA, FILE SCOPE)", name)
				continue
			}
			if seenSection[name] {
				bad(n, "section %q appears twice", name)
				continue
			}
			seenSection[name] = true
			section, cur = name, nil
			continue
		}
		if section == sectionRequest {
			request = append(request, line)
			continue
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		if m := abandonLine.FindStringSubmatch(line); m != nil {
			id := ExpectationID(m[1])
			if strings.TrimSpace(m[2]) == "" {
				bad(n, "ABANDON %s has no reason", id)
				continue
			}
			if _, dup := c.Abandoned[id]; dup {
				bad(n, "%s is abandoned twice", id)
				continue
			}
			c.Abandoned[id] = strings.TrimSpace(m[2])
			abandonAt[id] = n
			cur = nil
			continue
		}
		if strings.HasPrefix(line, "ABANDON:") {
			bad(n, "ABANDON line must read \"ABANDON: E<n> <reason>\"")
			continue
		}
		switch section {
		case "":
			bad(n, "text before the first section")
			continue
		case sectionScope:
			if line != strings.TrimLeft(line, " \t") {
				bad(n, "a FILE SCOPE glob must not be indented")
				continue
			}
			c.FileScope = append(c.FileScope, strings.TrimSpace(line))
		case sectionCriteria:
			if m := attributeLine.FindStringSubmatch(line); m != nil {
				if cur == nil {
					bad(n, "attribute %s: is not under a criterion", m[1])
					continue
				}
				a := curAttrs[cur.ID]
				val := strings.TrimSpace(m[2])
				switch m[1] {
				case "CHECK", "EXPECT", "EVIDENCE":
				default:
					bad(n, "unknown attribute %s: under %s (known: CHECK, EXPECT, EVIDENCE)", m[1], cur.ID)
					continue
				}
				slot := map[string]*int{"CHECK": &a.check, "EXPECT": &a.expect, "EVIDENCE": &a.evidence}[m[1]]
				if *slot != 0 {
					bad(n, "%s has a second %s: (first on line %d)", cur.ID, m[1], *slot)
					continue
				}
				*slot = n
				if m[1] != "EVIDENCE" && val == "" {
					bad(n, "%s: under %s is empty", m[1], cur.ID)
					continue
				}
				if cur.Oracle == nil && m[1] != "EVIDENCE" {
					cur.Oracle = &Oracle{}
				}
				switch m[1] {
				case "CHECK":
					cur.Oracle.Check = val
				case "EXPECT":
					cur.Oracle.Expect = val
				}
				continue
			}
			if strings.HasPrefix(strings.TrimLeft(line, " \t"), "CHECK:") || strings.HasPrefix(strings.TrimLeft(line, " \t"), "EXPECT:") || strings.HasPrefix(strings.TrimLeft(line, " \t"), "EVIDENCE:") {
				bad(n, "attribute %q must be indented under its criterion", strings.TrimSpace(line))
				continue
			}
			m := criterionLine.FindStringSubmatch(line)
			if m == nil {
				bad(n, "expected a criterion \"E<n>. text\" or an indented attribute, got %q", text.Truncate(line, 60))
				continue
			}
			id := ExpectationID("E" + m[1])
			if strings.TrimSpace(m[2]) == "" {
				bad(n, "criterion %s has no text", id)
				continue
			}
			if first, dup := criterionAt[id]; dup {
				bad(n, "duplicate criterion %s (first on line %d)", id, first)
				continue
			}
			if len(c.Criteria) == MaxCriteria {
				return nil, append(problems, refusal.New(refusal.ContractTooLarge, "split the feature into several contracts",
					"%s:%d: a contract may hold at most %d criteria", path, n, MaxCriteria))
			}
			criterionAt[id] = n
			c.Criteria = append(c.Criteria, Criterion{ID: id, Text: strings.TrimSpace(m[2]), Line: n})
			cur = &c.Criteria[len(c.Criteria)-1]
			curAttrs[id] = &attrs{}
		}
	}
	for _, need := range []string{sectionRequest, sectionCriteria} {
		if !seenSection[need] {
			bad(1, "section %q is missing", need)
		}
	}
	for _, cr := range c.Criteria {
		a := curAttrs[cr.ID]
		if (a.check != 0) != (a.expect != 0) {
			line, has, lacks := a.check, "CHECK", "EXPECT"
			if a.expect != 0 {
				line, has, lacks = a.expect, "EXPECT", "CHECK"
			}
			bad(line, "%s has %s: but no %s: (an oracle needs both)", cr.ID, has, lacks)
		}
	}
	for id, line := range abandonAt {
		if _, ok := criterionAt[id]; !ok {
			bad(line, "ABANDON names %s, which is not a criterion", id)
		}
	}
	if len(c.Criteria) == 0 && len(problems) == 0 {
		bad(1, "ACCEPTANCE CRITERIA lists no criterion")
	}
	if len(problems) > 0 {
		return nil, problems
	}
	c.Request = strings.TrimSpace(strings.Join(request, "\n"))
	sort.SliceStable(c.Criteria, func(i, j int) bool { return c.Criteria[i].Line < c.Criteria[j].Line })
	return c, nil
}

// ParseContract parses a contract and refuses it with its first problem
// (see parseContract); ContractProblems lists them all.
func ParseContract(path string, src []byte) (*Contract, error) {
	c, problems := parseContract(path, src)
	if len(problems) > 0 {
		return nil, problems[0]
	}
	return c, nil
}

// ContractProblems lists every problem of a contract at once, in line
// order (empty when it parses), for linting before a commit.
func ContractProblems(path string, src []byte) []error {
	_, problems := parseContract(path, src)
	return problems
}
