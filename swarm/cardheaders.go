package swarm

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/internal/lazyre"
	"github.com/nwdes/nwdes/internal/names"
	"github.com/nwdes/nwdes/internal/text"
)

// TestRef names a feature's oracle as the gates name it: the feature and
// the E<n> of the criterion that carries the oracle.
type TestRef struct {
	Feature   string `json:"feature"`
	Criterion string `json:"criterion"`
}

func (t TestRef) String() string { return t.Feature + " " + t.Criterion }

// The bounds of the typed headers.
const (
	// MaxPaths bounds the globs of PATHS.
	MaxPaths = 64
	// MaxDependsOn bounds the labels of DEPENDS-ON.
	MaxDependsOn = 64
)

var (
	criterionID = lazyre.New(`^E[1-9][0-9]{0,5}$`)
)

// typedHeader checks one header other than BASE and DEADLINE, filling
// its field of c, and returns its problems. A key that is none of
// TypedHeaders but close to one is a typo.
func (c *Card) typedHeader(h Header) []string {
	switch h.Key {
	case PathsHeader:
		var p []string
		c.Paths, p = parsePaths(h.Value)
		return p
	case DependsOnHeader:
		var p []string
		c.DependsOn, p = parseDependsOn(h.Value, c.Label)
		return p
	case TestHeader:
		t, why := parseTest(h.Value)
		if why != "" {
			return []string{"TEST " + why}
		}
		c.Test = t
	case BudgetHeader:
		b, p := ParseBudget(h.Value)
		for i := range p {
			p[i] = "BUDGET " + p[i]
		}
		c.Budget = b
		return p
	case KindHeader:
		switch k := Kind(h.Value); k {
		case KindProduce, KindExamine:
			c.Kind = k
		default:
			return []string{"KIND " + strconv.Quote(text.Truncate(h.Value, 40)) + " is not produce or examine"}
		}
	case FeatureHeader:
		if !validFeature(h.Value) {
			return []string{"FEATURE " + strconv.Quote(text.Truncate(h.Value, 100)) + " is not a feature name ([A-Za-z0-9][A-Za-z0-9._-]{0,99})"}
		}
		c.Feature = h.Value
	case CandidateHeader:
		if !isCommitID(h.Value) {
			return []string{"CANDIDATE " + strconv.Quote(text.Truncate(h.Value, 80)) + " is not a full commit id of 40 (or 64) lowercase hex digits"}
		}
		c.Candidate = h.Value
	case BranchHeader:
		ref := h.Value
		if !strings.HasPrefix(ref, "refs/") {
			ref = "refs/heads/" + ref
		}
		if !strings.HasPrefix(ref, "refs/heads/") || ref == "refs/heads/" || gitstore.RefName(ref).Validate() != nil || strings.Contains(ref, "..") || strings.ContainsAny(ref, " ~^:?*[\\@{") {
			return []string{"BRANCH " + strconv.Quote(text.Truncate(h.Value, 100)) + " is not a branch name (like main, or refs/heads/main)"}
		}
		c.Branch = ref
	case ReworkOfHeader:
		r, why := parseReworkOf(h.Value, c.Label)
		if why != "" {
			return []string{"REWORK-OF " + why}
		}
		c.ReworkOf = r
	default:
		if near := text.Nearest(h.Key, TypedHeaders()); near != "" {
			return []string{fmt.Sprintf("the header %s is not one nwdes reads; did you mean %s?", h.Key, near)}
		}
	}
	return nil
}

// parsePaths reads PATHS: globs separated by single spaces, each a path
// relative to the tree's root as examine.MatchScope reads it.
func parsePaths(v string) ([]string, []string) {
	return headerList(PathsHeader, "globs", v, MaxPaths, func(g, q string) string {
		if strings.HasPrefix(g, "/") || g == ".." || strings.HasPrefix(g, "../") || strings.Contains(g, "/../") || strings.HasSuffix(g, "/..") {
			return "glob " + q + " is not a path inside the tree (no leading / and no ..)"
		}
		return ""
	})
}

// parseDependsOn reads DEPENDS-ON: card labels separated by single
// spaces, none the card's own.
func parseDependsOn(v, self string) ([]string, []string) {
	return headerList(DependsOnHeader, "cards", v, MaxDependsOn, func(l, q string) string {
		switch {
		case !validCard(l):
			return q + " is not a card label (" + LabelPattern + ")"
		case l == self:
			return "names the card itself (a cycle)"
		}
		return ""
	})
}

// headerList reads a header's list of items separated by single spaces:
// each once, at most most of them, each one that check finds no problem
// with (given the item and its quoted form). Problems begin with the key.
func headerList(key, items, v string, most int, check func(item, quoted string) string) ([]string, []string) {
	var list, p []string
	seen := map[string]bool{}
	for _, item := range strings.Split(v, " ") {
		q := strconv.Quote(text.Truncate(item, 80))
		if item == "" {
			p = append(p, key+" separates its "+items+" by single spaces")
		} else if why := check(item, q); why != "" {
			p = append(p, key+" "+why)
		} else if seen[item] {
			p = append(p, key+" names "+q+" twice")
		} else {
			list = append(list, item)
		}
		seen[item] = true
	}
	if len(list) > most {
		p = append(p, fmt.Sprintf("%s names %d %s, more than %d", key, len(list), items, most))
	}
	return list, p
}

// parseTest reads TEST: `<feature> E<n>`.
func parseTest(v string) (*TestRef, string) {
	f, id, ok := strings.Cut(v, " ")
	q := strconv.Quote(text.Truncate(v, 120))
	switch {
	case !ok || strings.Contains(id, " "):
		return nil, q + " is not `<feature> E<n>` (a feature and the criterion whose oracle must be NOT-MET at BASE)"
	case !validFeature(f):
		return nil, "feature " + strconv.Quote(text.Truncate(f, 100)) + " is not a feature name ([A-Za-z0-9][A-Za-z0-9._-]{0,99})"
	case !criterionID.MatchString(id):
		return nil, "criterion " + strconv.Quote(text.Truncate(id, 20)) + " is not E<n>"
	}
	return &TestRef{Feature: f, Criterion: id}, ""
}

func validFeature(f string) bool {
	return names.Component(f, 100)
}

// Kind says what a card's job does.
type Kind string

// The kinds of card.
const (
	// KindProduce is a card whose job makes a head (the default).
	KindProduce Kind = "produce"
	// KindExamine is a card whose job examines CANDIDATE against
	// FEATURE's contract.
	KindExamine Kind = "examine"
)

// kindProblems checks the headers that go together: an examine card
// names the CANDIDATE it examines and the FEATURE it examines it
// against; a produce card names no CANDIDATE. A TEST and a FEATURE name
// one feature. Problems name no line: they are about the whole card.
func (c *Card) kindProblems(seen map[string]int) []string {
	var p []string
	if c.Kind == "" {
		if _, given := seen[KindHeader]; given {
			return nil // KIND was malformed: its line said so
		}
		c.Kind = KindProduce
	}
	_, hasCandidate := seen[CandidateHeader]
	_, hasFeature := seen[FeatureHeader]
	switch c.Kind {
	case KindExamine:
		if !hasCandidate {
			p = append(p, "KIND examine wants CANDIDATE: <the full commit id to examine>")
		}
		if !hasFeature {
			p = append(p, "KIND examine wants FEATURE: <the feature whose contract the candidate answers to>")
		}
	case KindProduce:
		if hasCandidate {
			p = append(p, "CANDIDATE is for KIND examine cards; a produce card works from BASE")
		}
	}
	if _, rework := seen[ReworkOfHeader]; rework && c.Kind == KindExamine {
		p = append(p, "REWORK-OF is for produce cards: a rework produces a new head from the earlier one")
	}
	if c.Test != nil && c.Feature != "" && c.Test.Feature != c.Feature {
		p = append(p, "TEST names feature "+c.Test.Feature+" but FEATURE names "+c.Feature+"; a card answers to one feature")
	}
	return p
}

// InPaths reports whether path is one a card's PATHS lets its job
// change: a glob matches it as a contract's FILE SCOPE would
// (examine.MatchScope).
func InPaths(globs []string, path string) bool {
	for _, g := range globs {
		if examine.MatchScope(g, path) {
			return true
		}
	}
	return false
}

// ReworkRef is a card's place in a lineage (REWORK-OF): the card whose
// harvested head it reworks, which is its BASE, and N, how many reworks
// the lineage holds with this one (1 for the first).
type ReworkRef struct {
	Card string `json:"card"`
	N    int    `json:"n"`
}

func (r ReworkRef) String() string { return r.Card + " " + strconv.Itoa(r.N) }

// MaxReworkNumber bounds REWORK-OF's number, whatever bound a lineage has.
const MaxReworkNumber = 99

// parseReworkOf reads REWORK-OF: `<label> <n>`, the label another card's.
func parseReworkOf(v, self string) (*ReworkRef, string) {
	label, num, ok := strings.Cut(v, " ")
	q := strconv.Quote(text.Truncate(v, 120))
	n, err := strconv.Atoi(num)
	switch {
	case !ok || strings.Contains(num, " "):
		return nil, q + " is not `<label> <n>` (the card whose head this card reworks, and its number in the lineage)"
	case !validCard(label):
		return nil, strconv.Quote(text.Truncate(label, 100)) + " is not a card label (" + LabelPattern + ")"
	case label == self:
		return nil, "names the card itself"
	case err != nil || n < 1 || n > MaxReworkNumber || strconv.Itoa(n) != num:
		return nil, fmt.Sprintf("number %s is not a whole number from 1 to %d", strconv.Quote(text.Truncate(num, 20)), MaxReworkNumber)
	}
	return &ReworkRef{Card: label, N: n}, ""
}
