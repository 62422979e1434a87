package examine

import (
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/refusal"
)

// MergeBase returns the one best common ancestor of a and b, for a
// BASE...HEAD diff. Histories with several best merge bases (criss-cross
// merges) are refused: naming BASE..HEAD makes the choice explicit.
func MergeBase(st *gitstore.Store, a, b plumbing.Hash) (plumbing.Hash, error) {
	best, err := st.MergeBases(a, b)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	switch len(best) {
	case 0:
		return plumbing.ZeroHash, refusal.New(refusal.MissingFact, "name a BASE that shares history with HEAD",
			"%s and %s have no common ancestor", text.Short(a.String()), text.Short(b.String()))
	case 1:
		return best[0], nil
	}
	return plumbing.ZeroHash, refusal.New(refusal.PartInvalid, "name the base yourself with BASE..HEAD",
		"%s and %s have %d merge bases", text.Short(a.String()), text.Short(b.String()), len(best))
}
