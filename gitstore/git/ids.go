package git

import (
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/refusal"
)

// The git layer's API speaks oid.ID, nwdes's own object id; go-git's
// plumbing.Hash stays inside this package (and odb), so that the packages
// above carry no dependency's hash type. These convert at that boundary.

// toID is the oid.ID of a hash (oid.Zero for the zero hash).
func toID(h plumbing.Hash) oid.ID {
	id, _ := oid.FromBytes(h[:]) // 20 bytes: never an error
	return id
}

// toIDs converts a list.
func toIDs(hs []plumbing.Hash) []oid.ID {
	if hs == nil {
		return nil
	}
	out := make([]oid.ID, len(hs))
	for i, h := range hs {
		out[i] = toID(h)
	}
	return out
}

// toHash is the hash of an id (the zero hash for oid.Zero). The git layer
// opens SHA-1 repositories only (gitrepo refuses the rest), so no id it
// hands out is SHA-256; one made by a caller is refused by name
// (UnsupportedRepository), never cut to 20 bytes, which would name
// another object, or none.
func toHash(id oid.ID) (plumbing.Hash, error) {
	var h plumbing.Hash
	if id.IsZero() {
		return h, nil
	}
	if id.Format() != oid.SHA1 {
		return h, refusal.New(refusal.UnsupportedRepository,
			"give an object id of this repository, which is SHA-1 (nwdes reads SHA-1 repositories only)",
			"object id %s is %s: this repository names its objects by SHA-1", id, id.Format())
	}
	copy(h[:], id.Bytes())
	return h, nil
}

// toHashes converts a list (see toHash).
func toHashes(ids []oid.ID) ([]plumbing.Hash, error) {
	out := make([]plumbing.Hash, len(ids))
	for i, id := range ids {
		h, err := toHash(id)
		if err != nil {
			return nil, err
		}
		out[i] = h
	}
	return out, nil
}
