package stage

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
	"sort"
	"time"

	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/refusal"
)

// entry is one file of a checkout's index: what git's racy-clean check
// compares (the stat data of the file as it was written) and what the
// file is (mode and object id).
type entry struct {
	name               string
	ctime, mtime       time.Time
	dev, ino, uid, gid uint32
	mode, size         uint32
	id                 oid.ID
}

// encodeIndex is the content of a version 2 index (git's
// Documentation/gitformat-index.txt) holding entries, for a repository of
// object format f: each entry's id is written at f's size and the file
// ends with f's hash of what precedes it, as git writes it. It is nwdes's
// own because go-git's writer holds 20-byte ids only. An id of another
// format is refused by name (UnsupportedRepository), never cut or padded:
// either would name another object.
func encodeIndex(f oid.Format, entries []entry) ([]byte, error) {
	var h hash.Hash
	switch f {
	case oid.SHA1:
		h = sha1.New()
	case oid.SHA256:
		h = sha256.New()
	default:
		return nil, refusal.New(refusal.UnsupportedRepository, "stage checkouts of SHA-1 or SHA-256 repositories",
			"object format %s is not one git's index holds", f)
	}
	sorted := append([]entry(nil), entries...)
	// git orders entries by name, byte by byte (stage 0 only here).
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].name < sorted[j].name })
	var b bytes.Buffer
	b.WriteString("DIRC")
	be := binary.BigEndian
	b.Write(be.AppendUint32(nil, 2))
	b.Write(be.AppendUint32(nil, uint32(len(sorted))))
	for i, e := range sorted {
		if e.id.Format() != f {
			return nil, refusal.New(refusal.UnsupportedRepository, "stage a commit of this repository's own object format",
				"object %s of %s is a %s id in a %s repository", e.id, e.name, e.id.Format(), f)
		}
		if e.name == "" || bytes.IndexByte([]byte(e.name), 0) >= 0 || (i > 0 && sorted[i-1].name == e.name) {
			return nil, fmt.Errorf("stage: index entry %q is empty, holds a NUL or repeats", e.name)
		}
		start := b.Len()
		for _, v := range []uint32{
			uint32(e.ctime.Unix()), uint32(e.ctime.Nanosecond()),
			uint32(e.mtime.Unix()), uint32(e.mtime.Nanosecond()),
			e.dev, e.ino, e.mode, e.uid, e.gid, e.size,
		} {
			b.Write(be.AppendUint32(nil, v))
		}
		b.Write(e.id.Bytes())
		// Flags: no assume-valid, no extended flags, stage 0, and the
		// name's length, or 0xFFF for a longer name.
		n := len(e.name)
		if n > 0xFFF {
			n = 0xFFF
		}
		b.Write(be.AppendUint16(nil, uint16(n)))
		b.WriteString(e.name)
		// One to eight NULs: the name ends with one and the entry's
		// length is a multiple of eight.
		pad := 8 - (b.Len()-start)%8
		b.Write(make([]byte, pad))
	}
	h.Write(b.Bytes())
	return h.Sum(b.Bytes()), nil
}
