package odb

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// idxPrefixChunk is how many names one read fetches while collecting the
// run of names that share a prefix; an abbreviated id long enough to be
// unique needs one read.
const idxPrefixChunk = 8

// Prefix returns, in ascending order, the distinct ids of the objects whose
// hexadecimal form begins with prefix: 1 to 40 hexadecimal digits, of either
// case. With limit > 0 it returns at most limit ids, the smallest ones, so a
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
func (db *DB) Prefix(prefix string, limit int) ([]plumbing.Hash, error) {
	p, n, err := parsePrefix(prefix)
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

// parsePrefix returns the prefix as the smallest id it can begin (missing
// nibbles zero) and its length in nibbles.
func parsePrefix(s string) (plumbing.Hash, int, error) {
	var h plumbing.Hash
	if len(s) == 0 || len(s) > 2*hashLen {
		return h, 0, fmt.Errorf("want 1 to %d hexadecimal digits, have %d", 2*hashLen, len(s))
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
func hasPrefix(h, p plumbing.Hash, n int) bool {
	full := n / 2
	if !bytes.Equal(h[:full], p[:full]) {
		return false
	}
	return n%2 == 0 || h[full]>>4 == p[full]>>4
}

// prefix searches every store once, without rescanning.
func (db *DB) prefix(p plumbing.Hash, n, limit int) ([]plumbing.Hash, error) {
	var out []plumbing.Hash
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
	slices.SortFunc(out, func(a, b plumbing.Hash) int { return bytes.Compare(a[:], b[:]) })
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
func (x *idx) prefix(p plumbing.Hash, n, limit int, out []plumbing.Hash) ([]plumbing.Hash, error) {
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
	var name [hashLen]byte
	for hi-lo > idxScanMax {
		mid := lo + (hi-lo)/2
		if err := readAt(x.r, name[:], idxNamesOff+mid*hashLen); err != nil {
			return out, fmt.Errorf("read index name %d: %w", mid, err)
		}
		if bytes.Compare(name[:], p[:]) < 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < hi {
		var buf [idxScanMax * hashLen]byte
		run := buf[:(hi-lo)*hashLen]
		if err := readAt(x.r, run, idxNamesOff+lo*hashLen); err != nil {
			return out, fmt.Errorf("read index names %d..%d: %w", lo, hi, err)
		}
		i, j := 0, int(hi-lo)
		for i < j {
			m := i + (j-i)/2
			if bytes.Compare(run[m*hashLen:(m+1)*hashLen], p[:]) < 0 {
				i = m + 1
			} else {
				j = m
			}
		}
		lo += int64(i)
	}
	// lo is now the first name not below p; collect the run from there.
	found := 0
	var chunk [idxPrefixChunk * hashLen]byte
	for lo < end {
		k := min(end-lo, idxPrefixChunk)
		names := chunk[:k*hashLen]
		if err := readAt(x.r, names, idxNamesOff+lo*hashLen); err != nil {
			return out, fmt.Errorf("read index names %d..%d: %w", lo, lo+k, err)
		}
		for i := range int(k) {
			var h plumbing.Hash
			copy(h[:], names[i*hashLen:])
			if !hasPrefix(h, p, n) {
				return out, nil
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
func (s *store) loosePrefix(p plumbing.Hash, n, limit int, out []plumbing.Hash) ([]plumbing.Hash, error) {
	root, err := s.fs()
	if err != nil {
		return out, err
	}
	first, last := int(p[0]), int(p[0])
	if n == 1 {
		first, last = int(p[0]&0xf0), int(p[0]|0x0f)
	}
	var found []plumbing.Hash
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
			h, ok := looseName(byte(b), name)
			if ok && hasPrefix(h, p, n) {
				found = append(found, h)
			}
		}
	}
	if limit > 0 && len(found) > limit {
		slices.SortFunc(found, func(a, b plumbing.Hash) int { return bytes.Compare(a[:], b[:]) })
		found = found[:limit]
	}
	return append(out, found...), nil
}

// looseName parses the 38 lowercase hexadecimal digits git names a loose
// object file with, inside the fanout directory of first byte b. Anything
// else (temporary files, stray names) is not an object.
func looseName(b byte, name string) (plumbing.Hash, bool) {
	var h plumbing.Hash
	if len(name) != 2*hashLen-2 {
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
