package git

import (
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/nwdes/nwdes/gitstore/oid"
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

// toHash is the hash of an id. The git layer opens SHA-1 repositories only
// (gitrepo refuses the rest), so no id it hands out is SHA-256; one made by
// a caller becomes its first 20 bytes, which names no object here: every
// read of it fails as a missing object, never as an absent one.
func toHash(id oid.ID) plumbing.Hash {
	var h plumbing.Hash
	copy(h[:], id.Bytes())
	return h
}
