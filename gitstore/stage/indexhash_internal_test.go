package stage

import (
	"bytes"
	"testing"

	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/refusal"
)

// TestIndexHashRefusesALongIDNeverCutsIt: the one place an oid.ID becomes
// a 20-byte hash. A 32-byte id whose first 20 bytes are a SHA-1 id is
// refused by name; cutting it would name that other object.
func TestIndexHashRefusesALongIDNeverCutsIt(t *testing.T) {
	short := bytes.Repeat([]byte{0xab}, 20)
	sha1, err := oid.FromBytes(short)
	if err != nil {
		t.Fatal(err)
	}
	if h, err := indexHash(sha1); err != nil || !bytes.Equal(h[:], short) {
		t.Fatalf("indexHash(SHA-1) = %x, %v", h, err)
	}
	long, err := oid.FromBytes(append(append([]byte{}, short...), bytes.Repeat([]byte{0xcd}, 12)...))
	if err != nil {
		t.Fatal(err)
	}
	h, err := indexHash(long)
	if !refusal.Named(err, refusal.UnsupportedRepository) {
		t.Fatalf("indexHash(SHA-256) = %x, %v; want UnsupportedRepository", h, err)
	}
	if bytes.Equal(h[:], short) {
		t.Fatal("indexHash cut a SHA-256 id to its first 20 bytes")
	}
	if _, err := indexHash(oid.Zero); err == nil {
		t.Fatal("indexHash(Zero) accepted")
	}
}
