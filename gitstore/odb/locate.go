package odb

import (
	"bytes"
	"path/filepath"

	"github.com/nwdes/nwdes/gitstore/oid"
)

// PackOf returns the path of a .pack file in the primary objects directory
// whose index lists h, from the packs already listed: it neither rescans
// the pack directory nor looks at loose objects or alternates. A writer uses
// it to decide whether an object is already stored (and to freshen that
// pack's mtime, as git does); a pack listed after the last scan is missed,
// which only makes the writer store the object once more.
func (db *DB) PackOf(h oid.ID) (string, bool, error) {
	if err := db.check(h); err != nil {
		return "", false, err
	}
	s, err := db.store(0)
	if err != nil || s == nil {
		return "", false, err
	}
	packs, err := s.packList()
	if err != nil {
		return "", false, err
	}
	for _, p := range packs {
		if _, ok, err := p.find(h); err == nil && ok {
			return filepath.Join(s.dir, "pack", p.name+".pack"), true, nil
		}
	}
	return "", false, nil
}

// Rescan lists the pack directories again, so that packs written since the
// last listing are searched without waiting for a miss.
func (db *DB) Rescan() error { return db.rescan() }

// PacksOf is PackOf for many ids at once: out[i] is the path of a .pack
// holding hs[i], or "" when no listed pack does. For a batch, each index's
// table of names is read once rather than probed once per id.
func (db *DB) PacksOf(hs []oid.ID) ([]string, error) {
	out := make([]string, len(hs))
	for _, h := range hs {
		if err := db.check(h); err != nil {
			return out, err
		}
	}
	hashLen := int64(db.f.Size())
	s, err := db.store(0)
	if err != nil || s == nil {
		return out, err
	}
	packs, err := s.packList()
	if err != nil {
		return out, err
	}
	for _, p := range packs {
		x, err := p.loadIdx()
		if err != nil || x == nil {
			continue
		}
		path := filepath.Join(s.dir, "pack", p.name+".pack")
		var names []byte
		if len(hs) >= 8 && x.n*hashLen <= 4<<20 {
			names = make([]byte, x.n*hashLen)
			if readAt(x.r, names, idxNamesOff) != nil {
				names = nil
			}
		}
		for i, h := range hs {
			if out[i] != "" {
				continue
			}
			if names == nil {
				if _, ok, err := x.find(h); err == nil && ok {
					out[i] = path
				}
				continue
			}
			raw := h.Raw()
			key := raw[:hashLen]
			lo, hi := 0, int(x.fanout[key[0]])
			if key[0] > 0 {
				lo = int(x.fanout[key[0]-1])
			}
			for lo < hi {
				m := lo + (hi-lo)/2
				c := bytes.Compare(key, names[int64(m)*hashLen:int64(m+1)*hashLen])
				if c == 0 {
					out[i] = path
					break
				}
				if c < 0 {
					hi = m
				} else {
					lo = m + 1
				}
			}
		}
	}
	return out, nil
}

// AddPack makes a pack just renamed into the primary objects directory
// (pack-<hex>, by its .idx) known without listing the directory again. It
// goes first in the search order: a writer's next read is usually of what
// it wrote last (its new tip).
func (db *DB) AddPack(name string) {
	if !validPackName(name, db.f) {
		return
	}
	s, err := db.store(0)
	if err != nil || s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.scanned || s.closed {
		return
	}
	for _, p := range s.packs {
		if p.name == name {
			return
		}
	}
	root, err := s.fsLocked()
	if err != nil {
		return
	}
	next := make([]*pack, 0, len(s.packs)+1)
	next = append(next, &pack{f: s.f, name: name, root: root, dir: s.dir})
	s.packs = append(next, s.packs...)
}

// Retired returns how many packs the DB has dropped from its listings (git
// or another writer deleted them) but still holds open, because a read may
// be using them; they are released by Close. A long-running writer whose
// DB has retired many packs replaces the DB (see gitstore's objects).
func (db *DB) Retired() int {
	db.mu.Lock()
	stores := append([]*store(nil), db.stores...)
	db.mu.Unlock()
	n := 0
	for _, s := range stores {
		s.mu.Lock()
		n += len(s.retired)
		s.mu.Unlock()
	}
	return n
}
