package git

import (
	"fmt"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/nwdes/nwdes/gitstore/oid"
)

// ObjectType is the type of a git object.
type ObjectType int8

// The object types nwdes reads and writes (git's own numbering).
const (
	CommitObject ObjectType = ObjectType(plumbing.CommitObject)
	TreeObject   ObjectType = ObjectType(plumbing.TreeObject)
	BlobObject   ObjectType = ObjectType(plumbing.BlobObject)
	TagObject    ObjectType = ObjectType(plumbing.TagObject)
)

// String is git's name of the type ("commit", "tree", …).
func (t ObjectType) String() string { return plumbing.ObjectType(t).String() }

// Git tree entry modes nwdes distinguishes.
const (
	ModeTree    uint32 = 0o40000
	ModeFile    uint32 = 0o100644
	ModeExec    uint32 = 0o100755
	ModeSymlink uint32 = 0o120000
	ModeGitlink uint32 = 0o160000
)

// HashOf is the id git gives an object of type t holding data, in object
// format f (Repo.Format).
func HashOf(f oid.Format, t ObjectType, data []byte) oid.ID {
	return hashOf(f, plumbing.ObjectType(t), data)
}

// TreeEntry is one entry of a git tree.
type TreeEntry struct {
	Name string
	Mode uint32
	ID   oid.ID
}

// IsTree reports a directory entry: git's S_ISDIR, so a mode git only
// warns about (40755) is a directory too.
func (e TreeEntry) IsTree() bool { return e.Mode&0o170000 == ModeTree }

// EncodeTree is the content of the tree holding entries, in git's order
// (by name, a tree's name compared as if it ended in "/"; git fsck
// --strict checks this order). Every entry's id is of one object format,
// the tree's; a tree mixing SHA-1 and SHA-256 ids is refused
// (UnsupportedRepository), never written.
func EncodeTree(entries []TreeEntry) ([]byte, error) {
	es := make([]treeEntry, len(entries))
	var f oid.Format
	for i, e := range entries {
		if f == 0 {
			f = e.ID.Format()
		}
		if err := checkID(f, e.ID); err != nil {
			return nil, fmt.Errorf("tree entry %q: %w", e.Name, err)
		}
		if e.ID.IsZero() {
			return nil, fmt.Errorf("tree entry %q names no object", e.Name)
		}
		es[i] = treeEntry{name: e.Name, mode: e.Mode, hash: e.ID}
	}
	return encodeTree(es), nil
}

// DecodeTree reads the tree id holding b, refusing (TreeUnreadable) one
// git fsck rejects (see decodeTree). Its entries' ids are of id's format.
func DecodeTree(id oid.ID, b []byte) ([]TreeEntry, error) { return decodeTree(id, b) }

// Commit is what nwdes reads from a commit.
type Commit struct {
	Tree    oid.ID
	Parents []oid.ID
	Time    time.Time // the committer's
	Message string
}

func (c commitInfo) export() Commit {
	return Commit{Tree: c.Tree, Parents: c.Parents, Time: c.Time, Message: c.Message}
}

// DecodeCommit reads the commit id holding b; its tree and parents are
// ids of id's format.
func DecodeCommit(id oid.ID, b []byte) (Commit, error) {
	c, err := decodeCommit(id, b)
	return c.export(), err
}

// EncodeCommit is the content of a commit of tree with parents, whose
// author and committer are ident at when, with message msg (ended by a
// newline when it is not). The parents are of the tree's object format; a
// commit mixing formats is refused (UnsupportedRepository).
func EncodeCommit(tree oid.ID, parents []oid.ID, ident string, when time.Time, msg string) ([]byte, error) {
	if tree.IsZero() {
		return nil, fmt.Errorf("a commit names a tree")
	}
	if err := checkIDs(tree.Format(), parents...); err != nil {
		return nil, err
	}
	for _, p := range parents {
		if p.IsZero() {
			return nil, fmt.Errorf("a commit's parent names no object")
		}
	}
	return encodeCommit(tree, parents, ident, when, msg), nil
}

// Add puts an object in the batch, once, and returns its id (of the
// batch's format).
func (b *Batch) Add(t ObjectType, data []byte) oid.ID {
	return b.add(plumbing.ObjectType(t), data)
}
