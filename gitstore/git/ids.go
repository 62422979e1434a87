package git

import (
	"crypto/sha1"
	"crypto/sha256"
	"hash"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/pjbgf/sha1cd"

	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/refusal"
)

// The git layer speaks oid.ID throughout, each id carrying its object
// format, and a Repo the format its config names (extensions.objectFormat):
// SHA-1 ids are 20 bytes, SHA-256 ids 32. An id of the other format names
// no object of the repository; it is refused by name wherever one comes in
// (checkID), never cut to the repository's size or padded to it, either of
// which would name another object, or none.

// checkID refuses (UnsupportedRepository) an id of another format than f;
// oid.Zero passes, as "no object" in any format.
func checkID(f oid.Format, id oid.ID) error {
	if id.IsZero() || id.Format() == f {
		return nil
	}
	return refusal.New(refusal.UnsupportedRepository,
		"give an object id of this repository's format (git rev-parse --show-object-format); nwdes never converts ids between SHA-1 and SHA-256",
		"object id %s is %s: this repository names its objects by %s", id, id.Format(), f)
}

// checkIDs is checkID of each id.
func checkIDs(f oid.Format, ids ...oid.ID) error {
	for _, id := range ids {
		if err := checkID(f, id); err != nil {
			return err
		}
	}
	return nil
}

// check refuses an id of another format than the repository's (checkID).
func (s *Repo) check(ids ...oid.ID) error { return checkIDs(s.format, ids...) }

// Format is the object format of the repository: the hash function that
// names its objects.
func (s *Repo) Format() oid.Format { return s.format }

// parseHex reads a full lowercase hex id of format f, as git writes them
// in refs, commits and tags; ok is false for anything else (another length,
// upper case, not hex). All zeros is oid.Zero.
func parseHex(f oid.Format, s string) (oid.ID, bool) {
	if len(s) != f.HexLen() || !isLowerHex(s) {
		return oid.Zero, false
	}
	id, err := oid.Parse(s)
	return id, err == nil
}

// IsHexID reports whether s is a full lowercase hex id of format f (40
// digits for SHA-1, 64 for SHA-256), as git names objects in refs and
// notes trees.
func IsHexID(f oid.Format, s string) bool {
	_, ok := parseHex(f, s)
	return ok
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// fromRaw is the id of format f whose digest is b (exactly f's size).
func fromRaw(f oid.Format, b []byte) (oid.ID, bool) {
	id, err := oid.FromBytesOf(f, b)
	return id, err == nil
}

// newHash is the format's hash function. SHA-1 is computed with collision
// detection (sha1cd, as go-git and git itself do), so an object written by
// nwdes has the id git gives it.
func newHash(f oid.Format) hash.Hash {
	if f == oid.SHA256 {
		return sha256.New()
	}
	return sha1cd.New()
}

// newChecksum is the format's hash function for a pack's and an index's
// trailing checksums: crypto/sha1 for SHA-1, faster than sha1cd, since a
// checksum over bytes nwdes wrote itself names no object.
func newChecksum(f oid.Format) hash.Hash {
	if f == oid.SHA256 {
		return sha256.New()
	}
	return sha1.New()
}

// hashOf is the id git gives an object of type t holding data, in format f.
func hashOf(f oid.Format, t plumbing.ObjectType, data []byte) oid.ID {
	h := newHash(f)
	h.Write(t.Bytes())
	h.Write([]byte{' '})
	h.Write(strconv.AppendInt(nil, int64(len(data)), 10))
	h.Write([]byte{0})
	h.Write(data)
	var sum [sha256.Size]byte
	id, _ := oid.FromBytes(h.Sum(sum[:0])) // 20 or 32 bytes: never an error
	return id
}
