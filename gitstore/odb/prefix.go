package odb

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/nwdes/nwdes/gitstore/oid"
)

// idxPrefixChunk is how many names one read fetches while collecting the
// run of names that share a prefix; an abbreviated id long enough to be
// unique needs one read.
const idxPrefixChunk = 8

// Prefix returns, in ascending order, the distinct ids of the objects whose
// hexadecimal form begins with prefix: 1 to 40 hexadecimal digits (64 in a
// SHA-256 repository), of either case. With limit > 0 it returns at most limit ids, the smallest ones, so a
// caller that only needs to tell a unique prefix from an ambiguous one passes
// 2. Every store is searched, alternates included: the loose objects of the
// fanout directories the prefix selects, and each pack index by binary
// search over its sorted names (the index is never decoded whole).
//
// When nothing matches, the pack directories are rescanned once before the
// empty answer is given, as Read does before reporting ErrNotFound. An
// unreadable pack index is an error (wrapping its cause, often ErrCorrupt)
// rather than skipped as Read skips it: an object it hides could make an
// ambiguous prefix look unique.
func (db *DB) Prefix(prefix string, limit int) ([]oid.ID, error) {
	p, n, err := parsePrefix(prefix, db.f)
	if err != nil {
		return nil, fmt.Errorf("odb: prefix %q: %w", prefix, err)
	}
	out, err := db.prefix(p, n, limit)
	if err == nil && len(out) == 0 {
		if err = db.rescan(); err == nil {
			out, err = db.prefix(p, n, limit)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("odb: prefix %s: %w", strings.ToLower(prefix), err)
	}
	return out, nil
}

// idKey is an id's digest, or a prefix's with its missing nibbles zero,
// in the first Size bytes of the format's.
type idKey [maxHashLen]byte

// parsePrefix returns the prefix as the smallest id it can begin (missing
// nibbles zero) and its length in nibbles.
func parsePrefix(s string, f oid.Format) (idKey, int, error) {
	var h idKey
	if len(s) == 0 || len(s) > f.HexLen() {
		return h, 0, fmt.Errorf("want 1 to %d hexadecimal digits, have %d", f.HexLen(), len(s))
	}
	for i := 0; i < len(s); i++ {
		var v byte
		switch c := s[i]; {
		case '0' <= c && c <= '9':
			v = c - '0'
		case 'a' <= c && c <= 'f':
			v = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			v = c - 'A' + 10
		default:
			return h, 0, fmt.Errorf("%q is not a hexadecimal digit", c)
		}
		if i%2 == 0 {
			h[i/2] = v << 4
		} else {
			h[i/2] |= v
		}
	}
	return h, len(s), nil
}

// hasPrefix reports whether h begins with the first n nibbles of p.
func hasPrefix(h, p []byte, n int) bool {
	full := n / 2
	if !bytes.Equal(h[:full], p[:full]) {
		return false
	}
	return n%2 == 0 || h[full]>>4 == p[full]>>4
}

// prefix searches every store once, without rescanning.
func (db *DB) prefix(p idKey, n, limit int) ([]oid.ID, error) {
	var out []oid.ID
	for i := 0; ; i++ {
		s, err := db.store(i)
		if err != nil {
			return nil, err
		}
		if s == nil {
			break
		}
		packs, err := s.packList()
		if err != nil {
			return nil, err
		}
		for _, pk := range packs {
			x, err := pk.loadIdx()
			if err != nil {
				return nil, err
			}
			if x == nil {
				continue // deleted by a repack since it was listed
			}
			if out, err = x.prefix(p, n, limit, out); err != nil {
				return nil, fmt.Errorf("pack index %s.idx: %w", pk, err)
			}
		}
		if out, err = s.loosePrefix(p, n, limit, out); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(out, oid.Compare)
	out = slices.Compact(out)
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// prefix appends to out the ids in the index that begin with the first n
// nibbles of p, at most limit of them when limit > 0. The names are sorted,
// so the matches are one run: its start is found by binary search within
// the fanout bucket, narrowing with single-name probes as find does, and
// the run is then read forward in small chunks.
func (x *idx) prefix(p idKey, n, limit int, out []oid.ID) ([]oid.ID, error) {
	hashLen := x.hl
	key := p[:hashLen]
	first, last := int(p[0]), int(p[0])
	if n == 1 {
		first, last = int(p[0]&0xf0), int(p[0]|0x0f)
	}
	lo := int64(0)
	if first > 0 {
		lo = int64(x.fanout[first-1])
	}
	end := int64(x.fanout[last])
	hi := end
	var nameBuf [maxHashLen]byte
	name := nameBuf[:hashLen]
	for hi-lo > idxScanMax {
		mid := lo + (hi-lo)/2
		if err := readAt(x.r, name, idxNamesOff+mid*hashLen); err != nil {
			return out, fmt.Errorf("read index name %d: %w", mid, err)
		}
		if bytes.Compare(name, key) < 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < hi {
		var buf [idxScanMax * maxHashLen]byte
		run := buf[:(hi-lo)*hashLen]
		if err := readAt(x.r, run, idxNamesOff+lo*hashLen); err != nil {
			return out, fmt.Errorf("read index names %d..%d: %w", lo, hi, err)
		}
		i, j := 0, int(hi-lo)
		for i < j {
			m := i + (j-i)/2
			if bytes.Compare(run[int64(m)*hashLen:int64(m+1)*hashLen], key) < 0 {
				i = m + 1
			} else {
				j = m
			}
		}
		lo += int64(i)
	}
	// lo is now the first name not below p; collect the run from there.
	found := 0
	var chunk [idxPrefixChunk * maxHashLen]byte
	for lo < end {
		k := min(end-lo, idxPrefixChunk)
		names := chunk[:k*hashLen]
		if err := readAt(x.r, names, idxNamesOff+lo*hashLen); err != nil {
			return out, fmt.Errorf("read index names %d..%d: %w", lo, lo+k, err)
		}
		for i := range k {
			name := names[i*hashLen : (i+1)*hashLen]
			if !hasPrefix(name, key, n) {
				return out, nil
			}
			h, err := oid.FromBytes(name)
			if err != nil {
				return out, err
			}
			out = append(out, h)
			if found++; limit > 0 && found == limit {
				return out, nil
			}
		}
		lo += k
	}
	return out, nil
}

// loosePrefix appends to out the loose objects of s that begin with the
// first n nibbles of p, at most limit of them (the smallest) when limit > 0.
// A one-nibble prefix reads the 16 fanout directories it selects, a longer
// one the single directory named by its first byte.
func (s *store) loosePrefix(p idKey, n, limit int, out []oid.ID) ([]oid.ID, error) {
	root, err := s.fs()
	if err != nil {
		return out, err
	}
	first, last := int(p[0]), int(p[0])
	if n == 1 {
		first, last = int(p[0]&0xf0), int(p[0]|0x0f)
	}
	var found []oid.ID
	for b := first; b <= last; b++ {
		dir := fmt.Sprintf("%02x", b)
		d, err := root.Open(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return out, fmt.Errorf("loose objects in %s: %w", s.dir, err)
		}
		names, err := d.Readdirnames(-1)
		d.Close()
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return out, fmt.Errorf("loose objects in %s/%s: %w", s.dir, dir, err)
		}
		for _, name := range names {
			h, ok := looseName(byte(b), name, s.f)
			if ok && hasPrefix(h[:s.f.Size()], p[:s.f.Size()], n) {
				if id, err := oid.FromBytes(h[:s.f.Size()]); err == nil && !id.IsZero() {
					found = append(found, id)
				}
			}
		}
	}
	if limit > 0 && len(found) > limit {
		slices.SortFunc(found, oid.Compare)
		found = found[:limit]
	}
	return append(out, found...), nil
}

// looseName parses the 38 lowercase hexadecimal digits (62 for SHA-256) git
// names a loose object file with, inside the fanout directory of first byte
// b. Anything else (temporary files, stray names) is not an object.
func looseName(b byte, name string, f oid.Format) (idKey, bool) {
	var h idKey
	if len(name) != f.HexLen()-2 {
		return h, false
	}
	h[0] = b
	for i := 0; i < len(name); i++ {
		c := name[i]
		var v byte
		switch {
		case '0' <= c && c <= '9':
			v = c - '0'
		case 'a' <= c && c <= 'f':
			v = c - 'a' + 10
		default:
			return h, false
		}
		if i%2 == 0 {
			h[1+i/2] = v << 4
		} else {
			h[1+i/2] |= v
		}
	}
	return h, true
}
