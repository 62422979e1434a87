package swarm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/nwdes/nwdes/internal/boundedio"
)

// SpentName is the file in its job directory where a harness may report
// what it has spent so far ($NWDES_JOB_DIR/spent.json). No harness is
// required to write it.
const SpentName = "spent.json"

// MaxSpentSize bounds spent.json.
const MaxSpentSize = 4 << 10

// The bounds of one reading's values.
const (
	maxSpentCount = 1_000_000_000_000_000 // tokens, turns
	maxCostMicros = 1_000_000_000_000_000 // a billion dollars, in millionths
)

// Spent is what a harness reported it had spent, in all, when it last
// wrote spent.json: tokens, cost in millionths of a US dollar, and
// turns. A field the harness did not report is zero.
type Spent struct {
	Tokens     int64 `json:"tokens,omitempty"`
	CostMicros int64 `json:"cost_micro_usd,omitempty"`
	Turns      int64 `json:"turns,omitempty"`
}

// Add adds o to s (status sums the readings of every job).
func (s *Spent) Add(o Spent) {
	s.Tokens += o.Tokens
	s.CostMicros += o.CostMicros
	s.Turns += o.Turns
}

// Budget bounds what a job may spend; a zero field bounds nothing.
type Budget struct {
	Tokens     int64 `json:"tokens,omitempty"`
	CostMicros int64 `json:"cost_micro_usd,omitempty"`
	Turns      int64 `json:"turns,omitempty"`
}

// IsZero reports a budget that bounds nothing.
func (b Budget) IsZero() bool { return b == Budget{} }

// String is the budget as a BUDGET header writes it.
func (b Budget) String() string {
	var parts []string
	if b.Tokens > 0 {
		parts = append(parts, "tokens="+strconv.FormatInt(b.Tokens, 10))
	}
	if b.CostMicros > 0 {
		parts = append(parts, "cost_usd="+formatMicros(b.CostMicros))
	}
	if b.Turns > 0 {
		parts = append(parts, "turns="+strconv.FormatInt(b.Turns, 10))
	}
	return strings.Join(parts, " ")
}

// Tighter is the budget that bounds each field by the smaller of b's and
// o's (a card's and its worker's both hold).
func (b Budget) Tighter(o Budget) Budget {
	min := func(x, y int64) int64 {
		switch {
		case x == 0:
			return y
		case y == 0 || x < y:
			return x
		}
		return y
	}
	return Budget{Tokens: min(b.Tokens, o.Tokens), CostMicros: min(b.CostMicros, o.CostMicros), Turns: min(b.Turns, o.Turns)}
}

// Passed says which bound of b the reading s passes (is over), or "".
func (b Budget) Passed(s Spent) string {
	switch {
	case b.Tokens > 0 && s.Tokens > b.Tokens:
		return fmt.Sprintf("%d tokens, over the budget's %d", s.Tokens, b.Tokens)
	case b.CostMicros > 0 && s.CostMicros > b.CostMicros:
		return fmt.Sprintf("cost %s USD, over the budget's %s", formatMicros(s.CostMicros), formatMicros(b.CostMicros))
	case b.Turns > 0 && s.Turns > b.Turns:
		return fmt.Sprintf("%d turns, over the budget's %d", s.Turns, b.Turns)
	}
	return ""
}

// ParseBudget reads a BUDGET value (a card's header, a worker's budget):
// `tokens=N`, `cost_usd=D` and `turns=N`, separated by single spaces, each
// at most once and at least one; N a whole number over 0, D a decimal
// number of US dollars over 0 with at most 6 digits after the point.
func ParseBudget(v string) (Budget, []string) {
	var b Budget
	var p []string
	seen := map[string]bool{}
	for _, item := range strings.Split(v, " ") {
		key, val, ok := strings.Cut(item, "=")
		q := strconv.Quote(item)
		switch {
		case item == "":
			p = append(p, "separates its bounds by single spaces")
			continue
		case !ok:
			p = append(p, q+" is not key=value (tokens=N, cost_usd=D, turns=N)")
			continue
		case seen[key]:
			p = append(p, "names "+key+" twice")
			continue
		}
		seen[key] = true
		n, why := amount(key, val, &b.Tokens, &b.CostMicros, &b.Turns)
		if why == "" && n == 0 {
			why = key + " is 0: name a bound over 0, or leave " + key + " out"
		}
		if why != "" {
			p = append(p, why)
		}
	}
	return b, p
}

// amount reads the value of one key of a reading or a budget — tokens
// and turns whole numbers, cost_usd dollars — into the field it names,
// or says what is wrong with it.
func amount(key, val string, tokens, costMicros, turns *int64) (int64, string) {
	var n int64
	var why string
	switch key {
	case "tokens", "turns":
		n, why = parseCount(val)
	case "cost_usd":
		n, why = parseMicros(val)
	default:
		return 0, strconv.Quote(key) + " is not tokens, cost_usd or turns"
	}
	if why != "" {
		return 0, key + " " + why
	}
	switch key {
	case "tokens":
		*tokens = n
	case "turns":
		*turns = n
	default:
		*costMicros = n
	}
	return n, ""
}

// parseCount reads a whole number 0 to maxSpentCount written in decimal
// digits alone.
func parseCount(s string) (int64, string) {
	if s == "" || strings.Trim(s, "0123456789") != "" || len(s) > 19 {
		return 0, strconv.Quote(s) + " is not a whole number"
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n > maxSpentCount {
		return 0, strconv.Quote(s) + " is more than " + strconv.FormatInt(maxSpentCount, 10)
	}
	return n, ""
}

// parseMicros reads a decimal number of dollars (digits, then at most 6
// after a point) as millionths.
func parseMicros(s string) (int64, string) {
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" || strings.Trim(whole, "0123456789") != "" || strings.Trim(frac, "0123456789") != "" || len(frac) > 6 || strings.HasSuffix(s, ".") {
		return 0, strconv.Quote(s) + " is not a decimal number with at most 6 digits after the point"
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return 0, strconv.Quote(s) + " is not a decimal number"
	}
	r.Mul(r, big.NewRat(1_000_000, 1))
	if !r.IsInt() || r.Num().Cmp(big.NewInt(maxCostMicros)) > 0 {
		return 0, strconv.Quote(s) + " is out of range"
	}
	return r.Num().Int64(), ""
}

func formatMicros(m int64) string {
	s := fmt.Sprintf("%d.%06d", m/1_000_000, m%1_000_000)
	return strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
}

// ParseSpent reads spent.json strictly: one JSON object holding at least
// one of tokens (a whole number), cost_usd (a decimal number, at most 6
// digits after the point) and turns (a whole number), each at least 0,
// each once, and nothing else. A problem is returned as what is wrong,
// for the job record.
func ParseSpent(b []byte) (Spent, string) {
	var s Spent
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return s, "not a JSON object"
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return Spent{}, "not valid JSON: " + err.Error()
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return Spent{}, "not valid JSON: " + err.Error()
		}
		if seen[key] {
			return Spent{}, strconv.Quote(key) + " is given twice"
		}
		seen[key] = true
		if _, why := amount(key, string(raw), &s.Tokens, &s.CostMicros, &s.Turns); why != "" {
			return Spent{}, why
		}
	}
	if _, err := dec.Token(); err != nil {
		return Spent{}, "not valid JSON: " + err.Error()
	}
	if _, err := dec.Token(); err != io.EOF {
		return Spent{}, "data follows the object"
	}
	if len(seen) == 0 {
		return Spent{}, "names none of tokens, cost_usd and turns"
	}
	return s, ""
}

// spentLimit bounds spent.json.
var spentLimit = boundedio.Limit{Bytes: MaxSpentSize, Of: "spent.json",
	Remedy: "report tokens, cost_usd and turns in one small JSON object"}

// reading is one look at spent.json: raw is what it held (nil when
// there was none), problem why it was refused.
type reading struct {
	raw     []byte
	spent   Spent
	problem string
}

// readSpentAt reads the job's spent.json as the job left it, with its
// modification time: the job directory is the job's, so the file is
// opened without following a link or blocking on a FIFO, must be a
// regular file, and is read bounded. No file is no reading and no
// problem.
func readSpentAt(dir string) (reading, string) {
	r, mod := readSpentFile(dir)
	if r.raw == nil && r.problem != "" {
		// Something is there that is no file to read: a reading, refused.
		r.raw = []byte{}
	}
	return r, mod
}

func readSpentFile(dir string) (reading, string) {
	f, err := openInJob(dir, SpentName)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return reading{}, ""
	case err != nil:
		return reading{problem: err.Error()}, ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return reading{problem: SpentName + " is not a regular file"}, ""
	}
	mod := "\x00" + fi.ModTime().Format(time.RFC3339Nano)
	b, err := boundedio.ReadAll(f, SpentName, spentLimit)
	if err != nil {
		return reading{raw: []byte{}, problem: err.Error()}, mod
	}
	s, why := ParseSpent(b)
	if why != "" {
		return reading{raw: b, problem: SpentName + " is refused: " + why}, mod
	}
	return reading{raw: b, spent: s}, mod
}

// spendWatch follows a job's readings of spent.json against its budget.
type spendWatch struct {
	budget Budget
	// within is how soon, under a budget, a reading must follow the one
	// before it.
	within time.Duration
	// seen is the last file looked at (its bytes and time), arrived when
	// the last new one came.
	seen    string
	arrived time.Time
	spent   *Spent
	problem string
}

// look reads spent.json at t and says whether the job must end: a
// reading that passes the budget, or, under a budget, none new within
// the window since the last. A file rewritten, even with the same
// values, is a new reading; one refused is none (and named).
func (w *spendWatch) look(dir string, t time.Time) (stopCause, string) {
	r, mod := readSpentAt(dir)
	if r.raw != nil && string(r.raw)+mod != w.seen {
		w.seen = string(r.raw) + mod
		if r.problem == "" {
			s := r.spent
			w.spent, w.problem, w.arrived = &s, "", t
		}
	}
	if r.problem != "" {
		w.problem = r.problem
	}
	if w.budget.IsZero() {
		return notStopped, ""
	}
	if w.spent != nil {
		if over := w.budget.Passed(*w.spent); over != "" {
			return stopBudget, "budget: " + over
		}
		if t.Sub(w.arrived) >= w.within {
			why := fmt.Sprintf("budget-unverifiable: no new reading of %s for %s under the budget %s", SpentName, w.within, w.budget)
			if w.problem != "" {
				why += " (" + w.problem + ")"
			}
			return stopUnverifiable, why
		}
	}
	return notStopped, ""
}

// final takes the last reading, once the job has ended, and says how it
// passes the budget, if it does.
func (w *spendWatch) final(dir string) string {
	r, _ := readSpentAt(dir)
	switch {
	case r.problem != "":
		w.problem = r.problem
	case r.raw != nil:
		s := r.spent
		w.spent, w.problem = &s, ""
	}
	if w.spent == nil || w.budget.IsZero() {
		return ""
	}
	if over := w.budget.Passed(*w.spent); over != "" {
		return "budget: " + over
	}
	return ""
}
