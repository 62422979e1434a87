package odb

import (
	"bytes"
	"compress/zlib"
	"errors"
	"github.com/nwdes/nwdes/gitstore/oid"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitPackSeeds returns idx/pack pairs written by git itself, one with
// OFS_DELTA and one with REF_DELTA entries, when git is installed.
func gitPackSeeds(f *testing.F) [][2][]byte {
	if _, err := exec.LookPath("git"); err != nil {
		return nil
	}
	var seeds [][2][]byte
	for _, ofs := range []string{"true", "false"} {
		repo := newHistoryRepo(f, 8)
		git(f, repo, nil, "-c", "repack.useDeltaBaseOffset="+ofs, "repack", "-q", "-a", "-d", "-f")
		idxs, _ := filepath.Glob(filepath.Join(objectsDir(repo), "pack", "*.idx"))
		for _, ip := range idxs {
			idx, err1 := os.ReadFile(ip)
			pack, err2 := os.ReadFile(strings.TrimSuffix(ip, ".idx") + ".pack")
			if err1 == nil && err2 == nil {
				seeds = append(seeds, [2][]byte{idx, pack})
			}
		}
	}
	return seeds
}

func FuzzReadIdx(f *testing.F) {
	good := buildIdx(largeOffsetEntries(), [maxHashLen]byte{1})
	f.Add(good)
	f.Add(good[8:])           // version 1 layout
	f.Add(good[:len(good)-1]) // truncated
	f.Add(buildIdx(nil, [maxHashLen]byte{}))
	f.Add(buildHandPack(false).idx)
	for _, s := range gitPackSeeds(f) {
		f.Add(s[0])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		x, err := parseIdx(bytes.NewReader(data), int64(len(data)), oid.SHA1)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, errors.ErrUnsupported) {
				t.Fatalf("parseIdx error %v is neither ErrCorrupt nor ErrUnsupported", err)
			}
			return
		}
		for i := range min(x.n, 256) {
			h, err := x.name(i)
			if err != nil {
				t.Fatalf("name(%d) of a parsed index: %v", i, err)
			}
			x.find(h)
			x.offset(i)
		}
		x.find(oid.Zero)
		x.find(oid.MustParse(strings.Repeat("ff", hashLen)))
		x.find(hashOf(string(data)))
	})
}

// FuzzReadPack reads every entry of a fuzzed pack, and entries at
// arbitrary offsets, through a DB with no base cache and through one with
// a small cache, which must agree on every result and every error: the
// cache only saves work. Each result of the cached DB is overwritten once
// compared, so a result sharing bytes with the cache would show as a
// later disagreement.
func FuzzReadPack(f *testing.F) {
	hp := buildHandPack(false)
	f.Add(hp.idx, hp.pack)
	for _, s := range gitPackSeeds(f) {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, idxData, packData []byte) {
		x, err := parseIdx(bytes.NewReader(idxData), int64(len(idxData)), oid.SHA1)
		if err != nil {
			return
		}
		checkPack(bytes.NewReader(packData), int64(len(packData)), x)
		// Skip the checksum match so that mutations of entry bytes reach
		// the entry parser, inflater and delta code.
		p := &pack{
			name: "pack-fuzz", idxState: opened, idx: x,
			dataState: opened, data: bytes.NewReader(packData), dataSize: int64(len(packData)),
		}
		plain := &DB{}
		// Small enough that a git pack's entries evict one another; its
		// pack bytes come from blocks from the first read.
		cached := &DB{bases: newBaseCache(16 << 10), blocks: newBlockCache(2*packBlockSize, 0)}
		read := func(off int64) {
			typ, data, links, err := plain.readPacked(p, off, 0)
			ctyp, cdata, clinks, cerr := cached.readPacked(p, off, 0)
			if (err == nil) != (cerr == nil) || err != nil && err.Error() != cerr.Error() {
				t.Fatalf("offset %d: uncached read: %v; cached read: %v", off, err, cerr)
			}
			if err != nil {
				return
			}
			if !isBaseType(typ) {
				t.Fatalf("readPacked returned type %v", typ)
			}
			if ctyp != typ || clinks != links || !bytes.Equal(cdata, data) {
				t.Fatalf("offset %d: uncached read %v of %d bytes (%d links), cached read %v of %d bytes (%d links)",
					off, typ, len(data), links, ctyp, len(cdata), clinks)
			}
			for i := range cdata {
				cdata[i] ^= 0xff
			}
		}
		for i := range min(x.n, 64) {
			off, err := x.offset(i)
			if err != nil {
				continue
			}
			read(off)
			read(off)
		}
		// Entries at arbitrary offsets reach header and delta-base
		// corner cases that well-formed offsets never do.
		for off := int64(packHeaderLen); off < min(int64(len(packData))-hashLen, 512); off++ {
			read(off)
		}
	})
}

func FuzzParseLoose(f *testing.F) {
	z := func(s string) []byte {
		var b bytes.Buffer
		w := zlib.NewWriter(&b)
		w.Write([]byte(s))
		w.Close()
		return b.Bytes()
	}
	f.Add(z("blob 3\x00abc"))
	f.Add(z("commit 0\x00"))
	f.Add(z("tree 4\x00abc"))
	f.Add(z("ofs-delta 1\x00a"))
	f.Add(z("blob 99999999999999999999\x00"))
	f.Add([]byte("not zlib"))
	f.Fuzz(func(t *testing.T, data []byte) {
		db := &DB{}
		typ, body, err := db.parseLoose(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("parseLoose error %v is not ErrCorrupt", err)
			}
			return
		}
		if !isBaseType(typ) {
			t.Fatalf("parseLoose returned type %v", typ)
		}
		_ = body
	})
}
