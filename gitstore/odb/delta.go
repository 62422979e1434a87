package odb

import (
	"errors"
	"fmt"
	"math"
)

// errDelta is what applyDelta's errors wrap: the delta cannot be applied
// to its base as git's patch_delta (patch-delta.c) would apply it.
var errDelta = errors.New("invalid delta")

// applyDelta returns src patched by delta, by the rules of git's
// patch_delta: at least 4 bytes; the header's source size must be
// len(src); each copy must lie inside src and each insert inside the
// delta; the result must have the header's target size, and every byte of
// the delta must be used (a last command that does not fit a result
// already full is read and left, as git leaves it).
//
// It writes into one slice sized from the header, where go-git's
// packfile.PatchDelta writes each command through a bytes.Buffer: a cold
// read applies every delta of a chain (48 for the examination ref's
// published tree in the hook benchmark's fixture), and the buffer's
// bookkeeping was a tenth of the hook's judgment in a profile.
// FuzzApplyDelta holds it to patch_delta's answers (a transliteration of
// it in the test), and TestReadAgreesWithGit to git's objects.
func applyDelta(src, delta []byte) ([]byte, error) {
	return applyDeltaInto(nil, src, delta)
}

// applyDeltaInto is applyDelta writing into out's memory when it is large
// enough (out must not overlap src), and into new memory otherwise.
func applyDeltaInto(out, src, delta []byte) ([]byte, error) {
	// git's DELTA_SIZE_MIN: two sizes and one command.
	if len(delta) < 4 {
		return nil, fmt.Errorf("delta of %d bytes: %w", len(delta), errDelta)
	}
	srcSize, rest, err := deltaHeaderSize(delta)
	if err != nil {
		return nil, err
	}
	if srcSize != uint64(len(src)) {
		return nil, fmt.Errorf("delta expects a %d-byte base, have %d bytes: %w", srcSize, len(src), errDelta)
	}
	dstSize, rest, err := deltaHeaderSize(rest)
	if err != nil {
		return nil, err
	}
	// The declared size comes from the pack: a damaged one must not make
	// us allocate what it claims before anything is written. A real
	// delta's result is about its base's size, so this covers them, and
	// append grows the rest as the bytes arrive.
	if want := min(dstSize, uint64(2*len(src)+len(delta)+64<<10)); out == nil || uint64(cap(out)) < want {
		out = make([]byte, 0, want)
	}
	out = out[:0]
	for len(rest) > 0 {
		cmd := rest[0]
		rest = rest[1:]
		switch {
		case cmd&0x80 != 0:
			var off, n uint64
			for i := range 7 {
				if cmd&(1<<i) == 0 {
					continue
				}
				if len(rest) == 0 {
					return nil, fmt.Errorf("delta copy command truncated: %w", errDelta)
				}
				if i < 4 {
					off |= uint64(rest[0]) << (8 * i)
				} else {
					n |= uint64(rest[0]) << (8 * (i - 4))
				}
				rest = rest[1:]
			}
			if n == 0 {
				n = 0x10000
			}
			if off+n > uint64(len(src)) || n > dstSize-uint64(len(out)) {
				if fullAtEnd(out, rest, dstSize) {
					return out, nil
				}
				return nil, fmt.Errorf("delta copies %d bytes at %d of a %d-byte base into %d bytes left: %w", n, off, len(src), dstSize-uint64(len(out)), errDelta)
			}
			out = append(out, src[off:off+n]...)
		case cmd != 0:
			n := int(cmd)
			if uint64(n) > dstSize-uint64(len(out)) && fullAtEnd(out, rest, dstSize) {
				return out, nil
			}
			if n > len(rest) || uint64(n) > dstSize-uint64(len(out)) {
				return nil, fmt.Errorf("delta inserts %d bytes, %d left in the delta and %d in the result: %w", n, len(rest), dstSize-uint64(len(out)), errDelta)
			}
			out = append(out, rest[:n]...)
			rest = rest[n:]
		default:
			return nil, fmt.Errorf("unexpected delta opcode 0: %w", errDelta)
		}
	}
	if uint64(len(out)) != dstSize {
		return nil, fmt.Errorf("delta made %d bytes, declared %d: %w", len(out), dstSize, errDelta)
	}
	return out, nil
}

// fullAtEnd says whether a delta whose next command cannot be applied is
// still one git applies: patch_delta stops at such a command and accepts
// the delta when that command was its last bytes and the result is full.
func fullAtEnd(out, rest []byte, dstSize uint64) bool {
	return len(rest) == 0 && uint64(len(out)) == dstSize
}

// deltaHeaderSize reads one of a delta header's two sizes: 7 bits a byte,
// least significant first, as git's get_delta_hdr_size reads them (which
// also ends at the end of the delta, continuation bit or not); a size
// past 64 bits is refused. A delta that ends before a size is refused:
// git reads the byte past its end there (a NUL) and then refuses the
// delta as gone past its end.
func deltaHeaderSize(b []byte) (uint64, []byte, error) {
	if len(b) == 0 {
		return 0, nil, fmt.Errorf("delta ends before its sizes: %w", errDelta)
	}
	var v uint64
	for i := 0; ; i++ {
		c := b[i]
		// Bits past the 64th are refused (git's shift would be undefined
		// there); zero payloads past them are padding git reads as such.
		if p := uint64(c & 0x7f); p != 0 && (7*i >= 64 || p > math.MaxUint64>>(7*i)) {
			return 0, nil, fmt.Errorf("delta header size overflows: %w", errDelta)
		} else if 7*i < 64 {
			v |= p << (7 * i)
		}
		if c&0x80 == 0 || i+1 == len(b) {
			return v, b[i+1:], nil
		}
	}
}
