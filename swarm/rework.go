package swarm

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/judge"
	"github.com/nwdes/nwdes/refusal"
)

// DefaultReworks is how many reworks a lineage holds unless told
// otherwise (swarm rework --limit, git config nwdes.swarm.reworks).
const DefaultReworks = 2

// The bounds of a rework card's gap list.
const (
	// MaxGaps bounds the gaps a rework card lists.
	MaxGaps = 64
	// maxGapText bounds one cited observation's text in a card.
	maxGapText = 2000
	// maxTaskText bounds the lineage's task carried into a card.
	maxTaskText = 64 << 10
)

// GapKind says what a gap is.
type GapKind string

// The kinds of gap.
const (
	// GapUnmet: an examiner judged an expectation unmet.
	GapUnmet GapKind = "unmet"
	// GapGate: an oracle is not MET at the candidate.
	GapGate GapKind = "gate"
	// GapVerify: verify judged a criterion NOT-MET.
	GapVerify GapKind = "verify"
	// GapScope: the candidate changes a file outside the FILE SCOPE.
	GapScope GapKind = "scope"
)

// Gap is one thing a rework must close.
type Gap struct {
	Kind        GapKind `json:"kind"`
	Expectation string  `json:"expectation,omitempty"`
	Criterion   string  `json:"criterion,omitempty"`
	// Class is an unmet verdict's class (product_violation, oracle_gap…).
	Class  string `json:"class,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Observations are the texts the unmet verdict cites, each bounded.
	Observations []string `json:"observations,omitempty"`
	// Tail is the end of a NOT-MET oracle's output.
	Tail []string `json:"tail,omitempty"`
	Path string   `json:"path,omitempty"`
}

// ReworkOptions are what a rework is asked.
type ReworkOptions struct {
	Feature string
	// Candidate is the revision reworked: a head a card's job produced.
	Candidate string
	// Limit is the lineage's bound of reworks: 0 allows none (callers
	// pass DefaultReworks unless told otherwise).
	Limit int
	// Label names the new card ("<the lineage's first card>-r<n>" when "").
	Label string
	// Question is the judgment asked of the candidate, with the judging
	// side's settings (Proof, Gates, Now); its Commit is set here.
	Question judge.Question
	// Check is what the new card is checked against (AddCard).
	Check CheckOptions
	By    string
	Now   time.Time
}

// Rework is a queued rework card and what it carries.
type Rework struct {
	Label     string    `json:"label"`
	Base      string    `json:"base"`
	Feature   string    `json:"feature"`
	ReworkOf  ReworkRef `json:"rework_of"`
	Lineage   string    `json:"lineage"`
	Limit     int       `json:"limit"`
	Outcome   string    `json:"outcome"`
	Gaps      []Gap     `json:"gaps"`
	GapsCount int       `json:"gaps_count"`
	Warnings  []string  `json:"warnings"`
	Card      string    `json:"card"`
}

// ReworkCard turns a judged outcome of a candidate that a card's job
// produced into a new card, queued through AddCard: BASE the candidate,
// FEATURE, PATHS the feature's FILE SCOPE, REWORK-OF the card that made
// it with the lineage's count, and as its text every gap the judgment
// found, then the lineage's task. The outcome is asked of judge.Judge
// (a published examination) or, where there is none, read from the
// newest recorded verify of the candidate; it is never derived again
// here. It refuses NothingToRework (accepted, CONFORME), NeedsPerson
// (what a worker cannot rework: the refusal says what a person must
// decide) and ReworkLimit (the lineage holds its bound); nothing is
// written then.
func ReworkCard(ctx context.Context, o ReworkOptions) (*Rework, error) {
	st := o.Check.Store
	if err := examine.ValidFeature(o.Feature); err != nil {
		return nil, err
	}
	commit, err := st.Resolve(o.Candidate)
	if err != nil {
		return nil, err
	}
	limit := o.Limit
	if limit < 0 || limit > MaxReworkNumber {
		return nil, refusal.New(refusal.PartInvalid, fmt.Sprintf("give a bound from 0 to %d", MaxReworkNumber), "a lineage's bound of %d reworks is out of range", limit)
	}
	queue, err := Queue(st)
	if err != nil {
		return nil, err
	}
	jobs, err := Jobs(st)
	if err != nil {
		return nil, err
	}
	parent, err := producer(commit, queue, jobs)
	if err != nil {
		return nil, err
	}
	for _, q := range queue {
		if r := q.Card.ReworkOf; r != nil && r.Card == parent.Card.Label && q.Card.Base == commit.String() {
			return nil, refusal.New(refusal.CardExists, "run it (git nwdes swarm run), or drop it first (git nwdes swarm drop "+q.Card.Label+")",
				"card %s already reworks %s", q.Card.Label, commit.Short())
		}
	}
	rw := &Rework{Feature: o.Feature, Base: commit.String(), Limit: limit, Gaps: []Gap{}, Warnings: []string{}}
	if err := judged(st, o, commit, parent, rw); err != nil {
		return nil, err
	}
	root := lineageRoot(parent, queue)
	rw.Lineage = root.Card.Label
	n := 1
	if parent.Card.ReworkOf != nil {
		n = parent.Card.ReworkOf.N + 1
	}
	if n > limit {
		return nil, refusal.New(refusal.ReworkLimit,
			fmt.Sprintf("a person decides: examine %s and accept it as it is, amend the contract of %s, raise the bound (--limit, git config nwdes.swarm.reworks), or drop the lineage (git nwdes swarm drop %s)", commit.Short(), o.Feature, parent.Card.Label),
			"the lineage of card %s holds %s already, its bound (%s)", rw.Lineage, text.Plural(n-1, "rework", "reworks"), rw.Outcome)
	}
	rw.ReworkOf = ReworkRef{Card: parent.Card.Label, N: n}
	rw.Label = o.Label
	if rw.Label == "" {
		rw.Label = text.Truncate(root.Card.Label, 90) + "-r" + strconv.Itoa(n)
	}
	rw.GapsCount = len(rw.Gaps)
	if len(rw.Gaps) > MaxGaps {
		rw.Gaps = rw.Gaps[:MaxGaps]
	}
	contract, err := examine.Load(st, examine.Target{Feature: o.Feature, Candidate: commit.String()})
	if err != nil {
		return nil, err
	}
	rw.Card = reworkText(rw, parent.Card, root.Card, contract.Contract.FileScope)
	check, err := AddCard(ctx, []byte(rw.Card), o.Check, o.By, o.Now)
	if err != nil {
		return nil, err
	}
	rw.Warnings = append(rw.Warnings, check.Warnings...)
	return rw, nil
}

// reworkProblems checks REWORK-OF against the queue and the jobs: it
// names a queued card, one of whose jobs harvested this card's BASE, and
// its number follows that card's in the lineage.
func reworkProblems(c *Card, queue []Queued, jobs []Job) []string {
	r := c.ReworkOf
	var parent *Card
	for i := range queue {
		if queue[i].Card.Label == r.Card {
			parent = queue[i].Card
		}
	}
	if parent == nil {
		return []string{"REWORK-OF names " + r.Card + ", which is not a queued card"}
	}
	var p []string
	harvested := false
	for _, j := range jobs {
		harvested = harvested || (j.Label == r.Card && j.Head == c.Base && c.Base != "")
	}
	if !harvested {
		p = append(p, "REWORK-OF names "+r.Card+", but no job of it harvested BASE "+text.Short(c.Base)+": a rework is staged on the earlier attempt's head")
	}
	want := 1
	if parent.ReworkOf != nil {
		want = parent.ReworkOf.N + 1
	}
	if r.N != want {
		p = append(p, fmt.Sprintf("REWORK-OF numbers this card %d in its lineage, but %s is number %d: this one is %d", r.N, r.Card, want-1, want))
	}
	return p
}

// producer is the queued card one of whose jobs harvested commit as its
// head.
func producer(commit oid.ID, queue []Queued, jobs []Job) (*Queued, error) {
	label := ""
	for _, j := range jobs {
		if j.Head == commit.String() {
			label = j.Label
		}
	}
	if label == "" {
		return nil, refusal.New(refusal.NeedsPerson, "a person decides what to ask for and writes a card for it (git nwdes swarm add); rework continues a card's lineage",
			"%s is no head a card's job produced (no job record names it; fetch refs/nwdes/swarm/jobs if another clone ran it)", commit.Short())
	}
	for i := range queue {
		if queue[i].Card.Label == label {
			return &queue[i], nil
		}
	}
	return nil, refusal.NewUnreadable(refusal.MissingFact, "fetch refs/nwdes/swarm/queue from the clone that queued it",
		"card %s, whose job produced %s, is not in the queue here", label, commit.Short())
}

// lineageRoot follows REWORK-OF back to the lineage's first card, as far
// as the queue holds it.
func lineageRoot(q *Queued, queue []Queued) *Queued {
	byLabel := map[string]*Queued{}
	for i := range queue {
		byLabel[queue[i].Card.Label] = &queue[i]
	}
	for i := 0; i <= MaxReworkNumber && q.Card.ReworkOf != nil; i++ {
		p, ok := byLabel[q.Card.ReworkOf.Card]
		if !ok {
			break
		}
		q = p
	}
	return q
}

// needsPerson is the refusal of an outcome no worker can rework.
func needsPerson(decide, format string, args ...any) error {
	return refusal.New(refusal.NeedsPerson, "a person decides: "+decide, format, args...)
}

// judged asks the one judgment of the candidate and fills rw's outcome
// and gaps, or refuses.
func judged(st judge.Store, o ReworkOptions, commit oid.ID, parent *Queued, rw *Rework) error {
	q := o.Question
	q.Commit = commit
	j, err := judge.Judge(st, q)
	if err != nil {
		return err
	}
	var f *judge.Feature
	for i := range j.Features {
		if j.Features[i].Feature == o.Feature {
			f = &j.Features[i]
		}
	}
	short := commit.Short()
	if f == nil || f.Contract == nil {
		return refusal.NewUnreadable(refusal.MissingFact, "name a feature whose contract the candidate holds (.nwave/features/<feature>.md)",
			"%s holds no contract of %s that parses", short, o.Feature)
	}
	if f.OK() {
		return refusal.New(refusal.NothingToRework, "land it, or examine it again if it should not stand",
			"the examination of %s at %s is accepted", o.Feature, short)
	}
	if ids := abandoned(f.Contract); len(ids) > 0 {
		return needsPerson("the criteria of "+o.Feature+" marked ABANDON: restore them, or retire the feature",
			"the contract of %s at %s abandons %s: an abandonment stands until a person lifts it", o.Feature, short, strings.Join(ids, ", "))
	}
	switch {
	case f.Outcome == examine.Rejected:
		rw.Outcome = "the examination of " + short + " rejected it"
		if ex := f.Examination; ex != nil {
			for _, row := range ex.Rows {
				if row.Verdict != examine.Unmet {
					continue
				}
				if row.Class == "expectation_defect" {
					return needsPerson("whether to amend the contract of "+o.Feature+" (its expectation "+string(row.Expectation)+" is judged defective), then examine again",
						"the examination of %s at %s finds %s an expectation_defect: a worker cannot rework the contract", o.Feature, short, row.Expectation)
				}
				g := Gap{Kind: GapUnmet, Expectation: string(row.Expectation), Criterion: row.Criterion, Class: string(row.Class), Reason: row.Reason}
				for _, c := range row.Cites {
					if c >= 0 && c < len(ex.Texts) {
						g.Observations = append(g.Observations, text.Truncate(cardSafe(string(ex.Texts[c].Text)), maxGapText))
					}
				}
				rw.Gaps = append(rw.Gaps, g)
			}
		}
		rw.Gaps = append(rw.Gaps, gateGaps(f.Gates)...)
	case f.Outcome == examine.Invalid && f.Refusal == refusal.GateNotMet:
		rw.Outcome = "the examination of " + short + " met expectations whose oracles are not MET (GateNotMet)"
		rw.Gaps = append(rw.Gaps, gateGaps(f.Gates)...)
	case f.Outcome == examine.Invalid:
		what := f.Refusal
		if what == "" {
			what = "the examination does not hold up"
		}
		return needsPerson(decideFor(f.Refusal, o.Feature, short), "%s of %s at %s: %s", what, o.Feature, short, text.OneLine(f.Problem))
	case f.Outcome == examine.Indeterminate:
		return needsPerson("finish the examination of "+short+" (some expectation is not_examined), or examine it again",
			"the examination of %s at %s is indeterminate", o.Feature, short)
	default: // no examination: the newest recorded verify
		if err := verified(st, o, commit, f, rw); err != nil {
			return err
		}
	}
	if f.Outcome != examine.None {
		out, err := outOfScope(st, f.Contract, parent.Card.Base, commit)
		if err != nil {
			return err
		}
		rw.Gaps = append(rw.Gaps, out...)
	}
	if len(rw.Gaps) == 0 {
		return needsPerson("examine "+short+" again, naming what is unmet",
			"%s at %s is refused (%s) but names no gap a worker could close", o.Feature, short, rw.Outcome)
	}
	return nil
}

// abandoned lists the criteria a contract abandons, in contract order,
// each with why.
func abandoned(c *examine.Contract) []string {
	var out []string
	for _, id := range c.IDs() {
		if why, ok := c.Abandoned[id]; ok {
			out = append(out, string(id)+" ("+text.OneLine(why)+")")
		}
	}
	return out
}

// decideFor says what a person decides about an examination a rule refused.
func decideFor(rule, feature, short string) string {
	switch rule {
	case refusal.CriterionAbandoned:
		return "the criteria of " + feature + " marked ABANDON: restore them, or retire the feature, and examine " + short + " again"
	case refusal.GateVacuous, refusal.GateUnproven:
		return "whether the oracle of " + feature + " shows the change (it passes without it, or was never run at a base): sharpen it, or run gate run --base, then examine " + short + " again"
	}
	return "whether the examination of " + short + " should stand (its signature, its signer, or its record is refused): examine it again"
}

// verified reads the newest verify recorded for the candidate: ECARTS
// with NOT-MET criteria or files out of scope is reworked; the rest
// routes to a person.
func verified(st judge.Store, o ReworkOptions, commit oid.ID, f *judge.Feature, rw *Rework) error {
	short := commit.Short()
	v, err := examine.LatestVerify(st, commit, o.Feature)
	if err != nil {
		return err
	}
	if v == nil {
		return refusal.NewUnreadable(refusal.MissingFact, "examine it (git nwdes examine open --feature "+o.Feature+") or run git nwdes verify, then rework what they find",
			"%s at %s has no examination and no verify recorded: nothing says what to rework", o.Feature, short)
	}
	rw.Outcome = "verify of " + short + " said " + v.Token()
	switch v.Verdict {
	case examine.VerdictConforme:
		return refusal.New(refusal.NothingToRework, "examine it, so that it can be accepted",
			"the verify of %s at %s is CONFORME", o.Feature, short)
	case examine.VerdictAbandoned:
		return needsPerson("the criteria of "+o.Feature+" marked ABANDON: restore them, or retire the feature",
			"the verify of %s at %s is %s", o.Feature, short, v.Token())
	case examine.VerdictError:
		return needsPerson("why verify cannot judge "+short+" ("+text.OneLine(v.Reason)+"), and fix that",
			"the verify of %s at %s is %s", o.Feature, short, v.Token())
	}
	tails := map[string][]string{}
	if f.Gates != nil {
		for _, row := range f.Gates.Rows {
			if row.Evidence != nil && row.State != examine.GateMet {
				tails[string(row.Expectation)] = row.Evidence.FailureTail(3)
			}
		}
	}
	var unverifiable []string
	for _, row := range v.Rows {
		switch row.Status {
		case examine.StatusNotMet:
			rw.Gaps = append(rw.Gaps, Gap{Kind: GapVerify, Expectation: string(row.Expectation), Criterion: row.Criterion,
				Reason: cardSafe(row.Detail), Tail: tails[string(row.Expectation)]})
		case examine.StatusUnverifiable:
			unverifiable = append(unverifiable, string(row.Expectation))
		}
	}
	for _, p := range v.OutOfScope {
		rw.Gaps = append(rw.Gaps, Gap{Kind: GapScope, Path: cardSafe(p)})
	}
	if len(rw.Gaps) == 0 {
		return needsPerson("examine "+short+": its criteria "+strings.Join(unverifiable, ", ")+" have no oracle and no examination",
			"the verify of %s at %s is %s only for criteria it could not verify", o.Feature, short, v.Token())
	}
	if len(unverifiable) > 0 {
		rw.Warnings = append(rw.Warnings, "criteria "+strings.Join(unverifiable, ", ")+" are UNVERIFIABLE at "+short+": an examiner judges them")
	}
	return nil
}

// gateGaps are the oracles not MET at the candidate, with their output's
// end.
func gateGaps(rep *examine.GateReport) []Gap {
	if rep == nil {
		return nil
	}
	var out []Gap
	for _, row := range rep.Rows {
		if row.State == examine.GateMet || row.State == examine.GateAbandoned {
			continue
		}
		g := Gap{Kind: GapGate, Expectation: string(row.Expectation), Criterion: row.Criterion, Reason: string(row.State) + ": " + cardSafe(row.Note)}
		if row.Evidence != nil {
			g.Tail = row.Evidence.FailureTail(3)
		}
		out = append(out, g)
	}
	return out
}

// outOfScope are the files the candidate changes since the card's base
// that no glob of the FILE SCOPE matches (as verify reads them).
func outOfScope(st judge.Store, c *examine.Contract, base string, commit oid.ID) ([]Gap, error) {
	from, err := oid.Parse(base)
	if err != nil {
		return nil, nil
	}
	files, err := examine.TouchedFiles(st, from, commit)
	if err != nil {
		return nil, err
	}
	scope := examine.CompileScope(c.FileScope)
	var out []Gap
	for _, p := range files {
		if !scope.Match(p) {
			out = append(out, Gap{Kind: GapScope, Path: cardSafe(p)})
		}
	}
	return out, nil
}

// cardSafe keeps text a card can hold: valid UTF-8, no NUL, no control
// character but newline and tab.
func cardSafe(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || (r >= 0x20 && r != 0x7f) {
			return r
		}
		return '\uFFFD'
	}, s)
}

// reworkText writes the rework card: its headers, the gaps, then the
// lineage's task (the first card's text after its headers).
func reworkText(rw *Rework, parent, root *Card, scope []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s%s sha=%s\n", ContractPrefix, rw.Label, rw.Base[:12])
	fmt.Fprintf(&b, "%s: %s\n%s: %s\n", BaseHeader, rw.Base, FeatureHeader, rw.Feature)
	if len(scope) > 0 {
		fmt.Fprintf(&b, "%s: %s\n", PathsHeader, strings.Join(scope, " "))
	}
	fmt.Fprintf(&b, "%s: %s\n", ReworkOfHeader, rw.ReworkOf)
	for _, k := range []string{DeadlineHeader, BudgetHeader, BranchHeader} {
		if v, ok := parent.Lookup(k); ok {
			fmt.Fprintf(&b, "%s: %s\n", k, v)
		}
	}
	if t := parent.Test; t != nil && t.Feature == rw.Feature {
		for _, g := range rw.Gaps {
			if (g.Kind == GapGate || g.Kind == GapVerify) && g.Expectation == t.Criterion {
				// Still RED at the earlier head: it must be proven again.
				fmt.Fprintf(&b, "%s: %s\n", TestHeader, t)
				break
			}
		}
	}
	fmt.Fprintf(&b, "\nRework %d of at most %d in the lineage of card %s: %s.\n", rw.ReworkOf.N, rw.Limit, rw.Lineage, rw.Outcome)
	fmt.Fprintf(&b, "BASE is that earlier attempt (card %s). Close every gap below, change only what PATHS allows, and commit.\n", rw.ReworkOf.Card)
	b.WriteString("\nGAPS\n")
	for i, g := range rw.Gaps {
		fmt.Fprintf(&b, "%d. %s\n", i+1, g.line())
		if g.Reason != "" && g.Kind != GapGate {
			fmt.Fprintf(&b, "   reason: %s\n", text.OneLine(g.Reason))
		}
		for _, o := range g.Observations {
			b.WriteString("   observed:\n")
			for _, l := range strings.Split(strings.TrimRight(o, "\n"), "\n") {
				fmt.Fprintf(&b, "   > %s\n", l)
			}
		}
		for _, l := range g.Tail {
			fmt.Fprintf(&b, "   | %s\n", l)
		}
	}
	if rw.GapsCount > len(rw.Gaps) {
		fmt.Fprintf(&b, "(and %d more gaps not listed)\n", rw.GapsCount-len(rw.Gaps))
	}
	fmt.Fprintf(&b, "\nTHE TASK (card %s)\n", root.Label)
	task := taskText(root)
	if budget := MaxCardSize - b.Len() - 256; len(task) > budget || len(task) > maxTaskText {
		task = text.Truncate(task, min(max(budget, 0), maxTaskText))
	}
	b.WriteString(task)
	if !strings.HasSuffix(task, "\n") {
		b.WriteString("\n")
	}
	return b.String()
}

// line is a gap's first line in a rework card.
func (g Gap) line() string {
	switch g.Kind {
	case GapUnmet:
		return fmt.Sprintf("%s unmet (%s): %s", g.Expectation, g.Class, text.OneLine(g.Criterion))
	case GapGate:
		return fmt.Sprintf("%s oracle %s — %s", g.Expectation, text.OneLine(g.Reason), text.OneLine(g.Criterion))
	case GapVerify:
		return fmt.Sprintf("%s NOT-MET (verify): %s", g.Expectation, text.OneLine(g.Criterion))
	}
	return "out of the FILE SCOPE: " + text.OneLine(g.Path) + " (revert it)"
}

// taskText is a card's text after its headers.
func taskText(c *Card) string {
	s := string(c.Text)
	if _, rest, ok := strings.Cut(s, "\n\n"); ok {
		return strings.TrimLeft(rest, "\n")
	}
	return ""
}
