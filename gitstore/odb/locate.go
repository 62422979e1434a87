package odb

import (
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"
)

// PackOf returns the path of a .pack file in the primary objects directory
// whose index lists h, from the packs already listed: it neither rescans
// the pack directory nor looks at loose objects or alternates. A writer uses
// it to decide whether an object is already stored (and to freshen that
// pack's mtime, as git does); a pack listed after the last scan is missed,
// which only makes the writer store the object once more.
func (db *DB) PackOf(h plumbing.Hash) (string, bool, error) {
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
