package git

import (
	"strings"
	"testing"

	"github.com/nwdes/nwdes/gitstore/oid"
)

// FuzzDecodeTreeAndCommit feeds the tree and commit decoders nwdes uses
// on records any bytes: refuse or decode, never panic.
func FuzzDecodeTreeAndCommit(f *testing.F) {
	f.Add([]byte("100644 record.json\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13"))
	f.Add([]byte("40000 a\x00"))
	f.Add([]byte("tree 0123456789abcdef0123456789abcdef01234567\nparent 0123456789abcdef0123456789abcdef01234567\nauthor a <a> 1 +0000\ncommitter a <a> 1 +0000\n\nmsg\n"))
	f.Add([]byte("tree zz\n"))
	ids := []oid.ID{oid.MustParse(strings.Repeat("1", 40)), oid.MustParse(strings.Repeat("2", 64))}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, id := range ids {
			if es, err := decodeTree(id, b); err == nil {
				for _, e := range es {
					if e.name == "" || e.hash.Format() != id.Format() && !e.hash.IsZero() {
						t.Fatal("decoded an entry with no name, or of another format")
					}
				}
			}
			_, _ = decodeCommit(id, b)
			_, _ = checkTree(id.Format(), b)
			_, _, _ = checkCommit(id.Format(), b)
		}
	})
}
