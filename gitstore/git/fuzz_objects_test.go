package git

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/gitstore/oid"
)

// FuzzDecodeTreeAndCommit feeds the tree and commit decoders nwdes uses
// on records any bytes: refuse or decode, never panic.
func FuzzDecodeTreeAndCommit(f *testing.F) {
	f.Add([]byte("100644 record.json\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13"))
	f.Add([]byte("40000 a\x00"))
	f.Add(treeBytes("40755 a", "100644 a.b")) // git fsck: treeNotSorted
	f.Add(treeBytes("120000 .gitmodules"))    // git fsck: gitmodulesSymlink
	f.Add(treeBytes("100644 a.b", "40755 a"))
	f.Add([]byte("tree 0123456789abcdef0123456789abcdef01234567\nparent 0123456789abcdef0123456789abcdef01234567\nauthor a <a> 1 +0000\ncommitter a <a> 1 +0000\n\nmsg\n"))
	f.Add([]byte("tree zz\n"))
	ids := []oid.ID{oid.MustParse(strings.Repeat("1", 40)), oid.MustParse(strings.Repeat("2", 64))}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, id := range ids {
			es, err := decodeTree(id, b)
			if err == nil {
				for _, e := range es {
					if e.Name == "" || e.ID.Format() != id.Format() && !e.ID.IsZero() {
						t.Fatal("decoded an entry with no name, or of another format")
					}
				}
			}
			// Two readers of one format: the strict check that adoption
			// applies to trees from elsewhere (checkTree) and the decoder
			// every read uses. What the strict one accepts, the decoder
			// reads to the same entries, and those encode back to the
			// very bytes (a tree git accepts has one encoding).
			if strict, problem := checkTree(id.Format(), b); problem == "" {
				if err != nil {
					t.Fatalf("checkTree accepts a tree decodeTree refuses: %v", err)
				}
				if len(strict) != len(es) {
					t.Fatalf("checkTree reads %d entries, decodeTree %d", len(strict), len(es))
				}
				for i, e := range es {
					if e.Name != strict[i].name || e.Mode != strict[i].mode || e.ID != strict[i].hash {
						t.Fatalf("entry %d: decodeTree %q %o %s, checkTree %q %o %s", i, e.Name, e.Mode, e.ID, strict[i].name, strict[i].mode, strict[i].hash)
					}
				}
				if enc, err := EncodeTree(es); err == nil && !bytes.Equal(enc, b) {
					t.Fatalf("a tree checkTree accepts encodes back differently:\n%q\n%q", b, enc)
				}
			}
			_, _ = decodeCommit(id, b)
			_, _, _ = checkCommit(id.Format(), b)
		}
	})
}

// FuzzTreeKeysAndModes holds decodeTree's helpers to what they stand in
// for: compareTreeKeys to comparing the keys treeKey builds, octal to
// strconv.ParseUint(s, 8, 32).
func FuzzTreeKeysAndModes(f *testing.F) {
	f.Add("a", true, "a.b", false)
	f.Add("a", false, "a", true)
	f.Add("a/", false, "a", true)
	f.Add("ab", true, "a", true)
	f.Add("100644", false, "040000", true)
	f.Add("37777777777", false, "40000000000", false)
	f.Fuzz(func(t *testing.T, a string, aTree bool, b string, bTree bool) {
		mode := func(tree bool) uint32 {
			if tree {
				return modeTree
			}
			return modeBlob
		}
		ea, eb := treeEntry{name: a, mode: mode(aTree)}, treeEntry{name: b, mode: mode(bTree)}
		if got, want := compareTreeKeys(ea, eb), strings.Compare(treeKey(ea), treeKey(eb)); got != want {
			t.Fatalf("compareTreeKeys(%q tree %v, %q tree %v) = %d, the keys compare %d", a, aTree, b, bTree, got, want)
		}
		for _, s := range []string{a, b} {
			v, ok := octal(s)
			want, err := strconv.ParseUint(s, 8, 32)
			if ok != (err == nil) || ok && uint64(v) != want {
				t.Fatalf("octal(%q) = %d, %v; ParseUint: %d, %v", s, v, ok, want, err)
			}
		}
	})
}
