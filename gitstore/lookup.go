package gitstore

import (
	"fmt"

	"github.com/nwdes/nwdes/gitstore/oid"
)

// RecordModeProblem says what is wrong with an entry of mode in the tree of
// a nwdes ref, "" when nothing is. Such a tree holds directories and
// regular files only: git writes a symbolic link or a gitlink there
// without complaint, but nwdes never does, and a reader that took one
// for a file would read what it points at, or nothing.
func RecordModeProblem(mode uint32) string {
	switch mode {
	case ModeTree, ModeFile, ModeExec:
		return ""
	case ModeSymlink:
		return "mode 120000 (a symbolic link): a tree of nwdes records holds only directories and regular files"
	case ModeGitlink:
		return "mode 160000 (a gitlink): a tree of nwdes records holds only directories and regular files"
	}
	return fmt.Sprintf("mode %o: a tree of nwdes records holds only directories and regular files", mode)
}

// DirEntry is one entry of a committed directory.
type DirEntry struct {
	Name string
	Mode uint32
	Hash oid.ID
}

// Tree returns a read-only view of commit's tree. Everything read through
// one view is loaded once, so a caller asking several questions of one
// commit (the hook: is there a .nwave/features, what is in it, what does a
// contract hold) reads each object once.
func (s *Store) commitFiles(commit oid.ID) (*Tx, error) {
	c, err := s.git.ReadCommit((commit))
	if err != nil {
		return nil, err
	}
	return &Tx{s: s, ref: RefName("commit " + commit.String()), readOnly: true, commitTree: true, root: &node{ID: c.Tree}}, nil
}

// Lookup returns the entry at path (found false when there is none). It
// does not follow symbolic links: a link is returned as such.
func (tx *Tx) Lookup(path string) (DirEntry, bool, error) {
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
	return DirEntry{Name: parts[len(parts)-1], Mode: e.Mode, Hash: (e.ID)}, true, nil
}

// Altered returns the first file under one of dirs (top-level directories
// of the trees) that the tree of commit old holds and the tree of commit
// next lacks or holds with other content or mode, "" when every such file
// is still there unchanged: additions are what append-only allows.
// Subtrees with equal ids are skipped, so the cost is what changed. It is
// the comparison VerifyHistory makes of each commit with its parents.
func (s *Store) Altered(old, next oid.ID, dirs []string) (string, error) {
	oc, err := s.git.ReadCommit((old))
	if err != nil {
		return "", err
	}
	nc, err := s.git.ReadCommit((next))
	if err != nil {
		return "", err
	}
	p, _, err := s.alteredTrees(oc.Tree, nc.Tree, dirs, nil)
	return p, err
}
