package gitstore

import "github.com/go-git/go-git/v5/plumbing"

// Git tree entry modes nwdes distinguishes.
const (
	ModeTree    uint32 = 0o40000
	ModeFile    uint32 = 0o100644
	ModeExec    uint32 = 0o100755
	ModeSymlink uint32 = 0o120000
	ModeGitlink uint32 = 0o160000
)

// DirEntry is one entry of a committed directory.
type DirEntry struct {
	Name string
	Mode uint32
	Hash plumbing.Hash
}

// Lookup returns the entry at path in commit's tree (found false when there
// is none). It does not follow symbolic links: a link is returned as such.
func (s *Store) Lookup(commit plumbing.Hash, path string) (DirEntry, bool, error) {
	tx, err := s.commitTree(commit)
	if err != nil {
		return DirEntry{}, false, err
	}
	parts, err := splitPath(path)
	if err != nil || len(parts) == 0 {
		return DirEntry{}, false, err
	}
	dir, _, err := tx.walk(parts[:len(parts)-1], false)
	if err != nil || dir == nil {
		return DirEntry{}, false, err
	}
	e := dir.entries[parts[len(parts)-1]]
	if e == nil {
		return DirEntry{}, false, nil
	}
	return DirEntry{Name: parts[len(parts)-1], Mode: e.mode, Hash: e.hash}, true, nil
}

// ReadDir returns the entries directly under dir in commit's tree, sorted
// by name; none when dir is absent or not a directory.
func (s *Store) ReadDir(commit plumbing.Hash, dir string) ([]DirEntry, error) {
	tx, err := s.commitTree(commit)
	if err != nil {
		return nil, err
	}
	return tx.ReadDir(dir)
}
