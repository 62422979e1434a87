package examine

import (
	"github.com/nwdes/nwdes/gitstore/oid"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/refusal"
)

// MergeBase returns the one best common ancestor of a and b, for a
// BASE...HEAD diff. Histories with several best merge bases (criss-cross
// merges) are refused: naming BASE..HEAD makes the choice explicit.
func MergeBase(st gitstore.Ancestry, a, b oid.ID) (oid.ID, error) {
	best, err := st.MergeBases(a, b)
	if err != nil {
		return oid.Zero, err
	}
	switch len(best) {
	case 0:
		return oid.Zero, refusal.New(refusal.MissingFact, "name a BASE that shares history with HEAD",
			"%s and %s have no common ancestor", text.Short(a.String()), text.Short(b.String()))
	case 1:
		return best[0], nil
	}
	return oid.Zero, refusal.New(refusal.PartInvalid, "name the base yourself with BASE..HEAD",
		"%s and %s have %d merge bases", text.Short(a.String()), text.Short(b.String()), len(best))
}
