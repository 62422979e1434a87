package oid

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"strings"
)

// Format is an object format: the hash a repository names objects with.
type Format uint8

const (
	// SHA1 names objects by 20-byte SHA-1 digests (git's default through 2.x).
	SHA1 Format = 20
	// SHA256 names objects by 32-byte SHA-256 digests
	// (git init --object-format=sha256).
	SHA256 Format = 32
)

// Size is how many bytes an id of this format has.
func (f Format) Size() int { return int(f) }

// HexLen is how many hexadecimal digits an id of this format has.
func (f Format) HexLen() int { return 2 * int(f) }

// Valid reports whether f is one of the two formats git knows.
func (f Format) Valid() bool { return f == SHA1 || f == SHA256 }

// ParseFormat reads git's name of an object format (extensions.objectFormat,
// git rev-parse --show-object-format): "sha1" or "sha256", of either case.
func ParseFormat(name string) (Format, error) {
	switch strings.ToLower(name) {
	case "sha1":
		return SHA1, nil
	case "sha256":
		return SHA256, nil
	}
	return 0, fmt.Errorf("%q is not an object format (sha1 or sha256)", name)
}

func (f Format) String() string {
	switch f {
	case SHA1:
		return "sha1"
	case SHA256:
		return "sha256"
	}
	return fmt.Sprintf("format(%d)", uint8(f))
}

// ID names a git object. The zero value names nothing.
type ID struct {
	sum [32]byte
	f   Format
}

// Zero is the ID that names nothing.
var Zero ID

// FromBytes makes an ID of a raw digest: 20 bytes are SHA-1, 32 SHA-256.
func FromBytes(b []byte) (ID, error) {
	var id ID
	switch len(b) {
	case 20:
		id.f = SHA1
	case 32:
		id.f = SHA256
	default:
		return Zero, fmt.Errorf("an object id is 20 or 32 bytes, not %d", len(b))
	}
	copy(id.sum[:], b)
	if id.allZero() {
		return Zero, nil // git's "no object", in either format
	}
	return id, nil
}

// Parse reads a full lowercase or uppercase hex id: 40 digits for SHA-1,
// 64 for SHA-256. An all-zero id parses to Zero, as git's "no object".
func Parse(s string) (ID, error) {
	if len(s) != 40 && len(s) != 64 {
		return Zero, fmt.Errorf("%q is not an object id (40 or 64 hex digits)", s)
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return Zero, fmt.Errorf("%q is not an object id (40 or 64 hex digits)", s)
	}
	return FromBytes(b)
}

// ParseOf reads a full hex id of format f (40 or 64 digits, of either
// case), refusing an id of the other format's length: a repository of one
// format never names an object by the other's. An all-zero id is Zero.
func ParseOf(f Format, s string) (ID, error) {
	if !f.Valid() || len(s) != f.HexLen() {
		return Zero, fmt.Errorf("%q is not a %s object id (%d hex digits)", s, f, f.HexLen())
	}
	return Parse(s)
}

// FromBytesOf makes an ID of format f from a raw digest of f's size,
// refusing any other length: a longer digest is never cut, a shorter one
// never padded, either of which would name another object.
func FromBytesOf(f Format, b []byte) (ID, error) {
	if !f.Valid() || len(b) != f.Size() {
		return Zero, fmt.Errorf("a %s object id is %d bytes, not %d", f, f.Size(), len(b))
	}
	return FromBytes(b)
}

// MustParse is Parse for ids fixed in the source (tests, examples).
func MustParse(s string) ID {
	id, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return id
}

func (id ID) allZero() bool {
	for _, c := range id.sum {
		if c != 0 {
			return false
		}
	}
	return true
}

// IsZero reports whether id names nothing.
func (id ID) IsZero() bool { return id.f == 0 }

// Format is the id's object format; 0 for Zero.
func (id ID) Format() Format { return id.f }

// Bytes is the raw digest (nil for Zero).
func (id ID) Bytes() []byte {
	if id.f == 0 {
		return nil
	}
	return append([]byte(nil), id.sum[:id.f]...)
}

// Raw is the digest in an array, its first Format().Size() bytes used: for
// comparisons and lookups that must not allocate (Bytes copies to the heap).
func (id ID) Raw() [32]byte { return id.sum }

// String is the id in lowercase hex; Zero prints as "".
func (id ID) String() string {
	if id.f == 0 {
		return ""
	}
	return hex.EncodeToString(id.sum[:id.f])
}

// Short is the first 12 hex digits, as nwdes prints ids in messages.
func (id ID) Short() string {
	s := id.String()
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// Compare orders ids by format, then bytewise.
func Compare(a, b ID) int {
	if a.f != b.f {
		if a.f < b.f {
			return -1
		}
		return 1
	}
	return bytes.Compare(a.sum[:], b.sum[:])
}

// MarshalText writes the hex form, so ids read well in JSON.
func (id ID) MarshalText() ([]byte, error) { return []byte(id.String()), nil }

// UnmarshalText reads the hex form; "" is Zero.
func (id *ID) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*id = Zero
		return nil
	}
	v, err := Parse(string(b))
	if err != nil {
		return err
	}
	*id = v
	return nil
}
