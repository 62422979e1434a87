package gitstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/nwdes/nwdes/refusal"
)

var headPrefix = regexp.MustCompile(`^(HEAD|@)([~^].*)?$`)

// Resolve turns a revision (HEAD, a branch or tag, a full or abbreviated
// commit id, with ~n and ^n suffixes) into a commit id. HEAD is this
// worktree's own HEAD, read from the per-worktree git directory; go-git
// would read the main worktree's. Tags are peeled to their commit.
func (s *Store) Resolve(rev string) (plumbing.Hash, error) {
	unknown := func(cause error) error {
		return refusal.New("MissingFact", "name an existing commit (git rev-parse REV shows what git makes of it)",
			"revision %q does not name a commit", rev).Wrap(cause)
	}
	if rev == "" {
		rev = "HEAD"
	}
	if m := headPrefix.FindStringSubmatch(rev); m != nil {
		h, err := s.head()
		if err != nil {
			return plumbing.ZeroHash, unknown(err)
		}
		if m[2] == "" {
			return s.peelToCommit(h, rev)
		}
		rev = h.String() + m[2]
	}
	if isHex40(rev) {
		return s.peelToCommit(plumbing.NewHash(rev), rev)
	}
	repo, err := git.Open(s.obj.storage(), nil)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("resolve %s: %w", rev, err)
	}
	h, err := repo.ResolveRevision(plumbing.Revision(rev))
	if err != nil {
		return plumbing.ZeroHash, unknown(err)
	}
	return s.peelToCommit(*h, rev)
}

func (s *Store) head() (plumbing.Hash, error) {
	b, err := os.ReadFile(filepath.Join(s.loc.GitDir, "HEAD"))
	if err != nil {
		return plumbing.ZeroHash, err
	}
	v := strings.TrimSpace(string(b))
	if target, ok := strings.CutPrefix(v, "ref:"); ok {
		h, err := s.refs.Read(RefName(strings.TrimSpace(target)))
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if h.IsZero() {
			return plumbing.ZeroHash, errors.New("HEAD points at a branch with no commits yet")
		}
		return h, nil
	}
	if !isHex40(v) {
		return plumbing.ZeroHash, fmt.Errorf("HEAD holds %q", truncate(v, 50))
	}
	return plumbing.NewHash(v), nil
}

func (s *Store) peelToCommit(h plumbing.Hash, rev string) (plumbing.Hash, error) {
	for i := 0; i < 10; i++ {
		t, b, err := s.obj.read(h)
		if err != nil {
			return plumbing.ZeroHash, refusal.New("MissingFact", "fetch the commit or name another", "revision %q: %v", rev, err).Wrap(err)
		}
		switch t {
		case plumbing.CommitObject:
			return h, nil
		case plumbing.TagObject:
			line, _, _ := strings.Cut(string(b), "\n")
			target, ok := strings.CutPrefix(line, "object ")
			if !ok || !isHex40(target) {
				return plumbing.ZeroHash, fmt.Errorf("tag %s is malformed", h)
			}
			h = plumbing.NewHash(target)
		default:
			return plumbing.ZeroHash, refusal.New("MissingFact", "name a commit", "revision %q is a %s, not a commit", rev, t)
		}
	}
	return plumbing.ZeroHash, fmt.Errorf("revision %q: tag chain too long", rev)
}

// File is one file read from a commit's tree.
type File struct {
	Path string
	Blob plumbing.Hash
	Mode uint32
	Data []byte
}

// ReadFile returns the committed file at path in commit's tree, or an error
// wrapping ErrNotFound. Only committed content is read, never a work tree.
func (s *Store) ReadFile(commit plumbing.Hash, path string) (File, error) {
	tx, err := s.commitTree(commit)
	if err != nil {
		return File{}, err
	}
	parts, err := splitPath(path)
	if err != nil || len(parts) == 0 {
		return File{}, fmt.Errorf("%s: %w", path, ErrNotFound)
	}
	dir, _, err := tx.walk(parts[:len(parts)-1], false)
	if err != nil {
		return File{}, err
	}
	if dir == nil || dir.entries[parts[len(parts)-1]] == nil {
		return File{}, fmt.Errorf("%s at %s: %w", path, commit, ErrNotFound)
	}
	e := dir.entries[parts[len(parts)-1]]
	if e.mode == modeTree || e.mode == 0o160000 {
		return File{}, fmt.Errorf("%s at %s is not a file: %w", path, commit, ErrNotFound)
	}
	data, err := tx.ReadBlob(path)
	if err != nil {
		return File{}, err
	}
	return File{Path: path, Blob: e.hash, Mode: e.mode, Data: data}, nil
}

// ListFiles returns the names directly under dir in commit's tree.
func (s *Store) ListFiles(commit plumbing.Hash, dir string) ([]string, error) {
	tx, err := s.commitTree(commit)
	if err != nil {
		return nil, err
	}
	return tx.List(dir)
}

// Walk calls fn for every file (not directory) in commit's tree, in order,
// with its slash-separated path and mode.
func (s *Store) Walk(commit plumbing.Hash, fn func(path string, mode uint32, blob plumbing.Hash) error) error {
	tx, err := s.commitTree(commit)
	if err != nil {
		return err
	}
	var walk func(n *node, prefix string) error
	walk = func(n *node, prefix string) error {
		if err := tx.load(n); err != nil {
			return err
		}
		names := make([]string, 0, len(n.entries))
		for k := range n.entries {
			names = append(names, k)
		}
		sortStrings(names)
		for _, name := range names {
			e := n.entries[name]
			if e.mode == modeTree {
				if e.sub == nil {
					e.sub = &node{hash: e.hash}
				}
				if err := walk(e.sub, prefix+name+"/"); err != nil {
					return err
				}
				continue
			}
			if err := fn(prefix+name, e.mode, e.hash); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(tx.root, "")
}

// ReadBlob returns a blob's content by id.
func (s *Store) ReadBlob(h plumbing.Hash) ([]byte, error) {
	t, b, err := s.obj.read(h)
	if err != nil {
		return nil, err
	}
	if t != plumbing.BlobObject {
		return nil, fmt.Errorf("object %s is a %s, not a blob", h, t)
	}
	return b, nil
}

func (s *Store) commitTree(commit plumbing.Hash) (*Tx, error) {
	c, err := s.readCommit(commit)
	if err != nil {
		return nil, err
	}
	return &Tx{s: s, ref: RefName("commit " + commit.String()), readOnly: true, root: &node{hash: c.Tree}}, nil
}
