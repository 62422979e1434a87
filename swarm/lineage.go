package swarm

import (
	"fmt"
	"strings"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/internal/text"
)

// MaxLineageCards bounds the cards a lineage report describes; Lineages
// says how many it left out.
const MaxLineageCards = 500

// CardLineage is one card's journey, from records alone: its attempts and
// their heads, what the gates showed there, the examination of each head
// and its outcome, and the cards that rework it.
type CardLineage struct {
	Card     string     `json:"label"`
	Feature  string     `json:"feature,omitempty"`
	ReworkOf *ReworkRef `json:"rework_of,omitempty"`
	Attempts []Attempt  `json:"attempts"`
	// ReworkedBy are the queued cards whose REWORK-OF names this one.
	ReworkedBy []string `json:"reworked_by"`
}

// Attempt is one recorded job of a card in its lineage.
type Attempt struct {
	Attempt int     `json:"attempt"`
	End     End     `json:"end"`
	Result  Verdict `json:"result"`
	Head    string  `json:"head,omitempty"`
	// Gate is what swarm run --gate recorded at the head.
	Gate *GateSummary `json:"gate,omitempty"`
	// Examination is the outcome of the newest examination of the head
	// (examine.Reader.Standing: none, invalid, or its derived outcome).
	Examination examine.Outcome `json:"examination,omitempty"`
	Problem     string          `json:"examination_problem,omitempty"`
}

// Lineages describes each queued card's lineage, oldest card first, at
// most MaxLineageCards of them (the count left out is returned), reading
// the examinations of each harvested head through rd, so that any clone
// that fetched the swarm's and examine's records sees the same journey.
func Lineages(rd *examine.Reader, queue []Queued, jobs []Job) ([]CardLineage, int, error) {
	byCard := map[string][]Job{}
	for _, j := range jobs {
		byCard[j.Label] = append(byCard[j.Label], j)
	}
	children := map[string][]string{}
	for _, q := range queue {
		if r := q.Card.ReworkOf; r != nil {
			children[r.Card] = append(children[r.Card], q.Card.Label)
		}
	}
	out := []CardLineage{}
	left := 0
	for _, q := range queue {
		if len(out) == MaxLineageCards {
			left++
			continue
		}
		l := CardLineage{Card: q.Card.Label, Feature: gateFeature(q.Card), ReworkOf: q.Card.ReworkOf, Attempts: []Attempt{}, ReworkedBy: children[q.Card.Label]}
		if l.ReworkedBy == nil {
			l.ReworkedBy = []string{}
		}
		for _, j := range byCard[q.Card.Label] {
			a := Attempt{Attempt: j.Attempt, End: j.End, Result: j.Result, Head: j.Head, Gate: j.Gate}
			if id, err := oid.Parse(j.Head); err == nil && l.Feature != "" {
				s, err := rd.Standing(id, l.Feature)
				if err != nil {
					return nil, 0, fmt.Errorf("read the examination of %s at %s: %w", l.Feature, id.Short(), err)
				}
				a.Examination, a.Problem = s.Outcome, text.OneLine(s.Problem)
			}
			l.Attempts = append(l.Attempts, a)
		}
		out = append(out, l)
	}
	return out, left, nil
}

// String is the lineage in one line, as swarm status prints it.
func (l *CardLineage) String() string {
	var b strings.Builder
	b.WriteString("lineage " + l.Card)
	if l.ReworkOf != nil {
		fmt.Fprintf(&b, " (rework %d, of %s)", l.ReworkOf.N, l.ReworkOf.Card)
	}
	b.WriteString(":")
	if len(l.Attempts) == 0 {
		b.WriteString(" not run yet")
	}
	for i, a := range l.Attempts {
		if i > 0 {
			b.WriteString(";")
		}
		fmt.Fprintf(&b, " #%d %s", a.Attempt, a.Result)
		if a.Head == "" {
			b.WriteString(", no head")
			continue
		}
		b.WriteString(", head " + text.Short(a.Head))
		if a.Gate != nil {
			b.WriteString(", " + a.Gate.String())
		}
		if a.Examination != "" {
			b.WriteString(", examination " + string(a.Examination))
		}
	}
	if len(l.ReworkedBy) > 0 {
		b.WriteString("; reworked by " + strings.Join(l.ReworkedBy, ", "))
	}
	return b.String()
}
