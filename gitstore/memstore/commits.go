package memstore

import (
	"fmt"
	"sort"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/refusal"
)

// Commit is a candidate commit made elsewhere (by git, in a real
// repository): what a test of a package that reads candidates gives
// AddCommit.
type Commit struct {
	// Files are the commit's regular files by slash-separated path.
	Files map[string][]byte
	// Parents are earlier commits of the store, in order.
	Parents []oid.ID
	// Author is "Name <email>", also the committer; gitstore.Identity
	// when empty.
	Author string
	// Message is the commit message.
	Message string
}

// AddCommit stores c, makes it HEAD (as git commit does) and returns its
// id. A bad path or an unknown parent is refused.
func (s *Store) AddCommit(c Commit) (oid.ID, error) {
	files := make(map[string]file, len(c.Files))
	blobs := map[oid.ID][]byte{}
	for p, data := range c.Files {
		key, err := clean(p)
		if err != nil || key == "" {
			return oid.Zero, fmt.Errorf("commit file %q: %w", p, err)
		}
		id := gitstore.BlobID(oid.SHA1, data)
		files[key], blobs[id] = file{mode: gitstore.ModeFile, blob: id}, data
	}
	for _, p := range c.Parents {
		if _, err := s.commit(p); err != nil {
			return oid.Zero, err
		}
	}
	author := c.Author
	if author == "" {
		author = gitstore.Identity
	}
	msg := c.Message
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	id, err := s.newID(fmt.Sprintf("candidate %s %v", msg, c.Parents))
	if err != nil {
		return oid.Zero, err
	}
	for b, data := range blobs {
		s.blobs[b] = data
	}
	s.commits[id] = &commit{files: files, parents: c.Parents, time: s.opts.Now(), message: msg, author: author}
	s.head = id
	return id, nil
}

// Resolve implements gitstore.CommitReader for what a test names: HEAD
// (or ""),
// a commit's full id, or a ref of the store. Anything else is MissingFact,
// as the git store refuses what it cannot resolve.
func (s *Store) Resolve(rev string) (oid.ID, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if (rev == "" || rev == "HEAD") && !s.head.IsZero() {
		return s.head, nil
	}
	if id, ok := s.refs[gitstore.RefName(rev)]; ok && !id.IsZero() {
		return id, nil
	}
	if id, err := oid.Parse(rev); err == nil {
		if _, ok := s.commits[id]; ok {
			return id, nil
		}
	}
	return oid.Zero, refusal.New(refusal.MissingFact, "name an existing commit (git rev-parse REV shows what git makes of it)",
		"unknown revision %q", rev)
}

// Files implements gitstore.CommitReader.
func (s *Store) Files(commit oid.ID) (gitstore.View, error) {
	return s.view(gitstore.RefName("commit "+commit.String()), commit)
}

// ReadFile implements gitstore.CommitReader.
func (s *Store) ReadFile(commit oid.ID, path string) (gitstore.File, error) {
	c, err := s.commit(commit)
	if err != nil {
		return gitstore.File{}, err
	}
	key, err := clean(path)
	f, ok := c.files[key]
	if err != nil || !ok {
		return gitstore.File{}, fmt.Errorf("%s at %s is not a committed file: %w", path, commit, gitstore.ErrNotFound)
	}
	data, err := s.ReadBlob(f.blob)
	if err != nil {
		return gitstore.File{}, err
	}
	return gitstore.File{Path: key, Blob: f.blob, Mode: f.mode, Data: data}, nil
}

// Walk implements gitstore.CommitReader.
func (s *Store) Walk(commit oid.ID, fn func(path string, mode uint32, blob oid.ID) error) error {
	c, err := s.commit(commit)
	if err != nil {
		return err
	}
	keys := make([]string, 0, len(c.files))
	for k := range c.files {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := fn(k, c.files[k].mode, c.files[k].blob); err != nil {
			return err
		}
	}
	return nil
}

// ReadBlob implements gitstore.CommitReader.
func (s *Store) ReadBlob(id oid.ID) ([]byte, error) {
	if b, ok := s.blob(id); ok {
		return b, nil
	}
	return nil, fmt.Errorf("blob %s: %w", id, gitstore.ErrObjectMissing)
}

// CommitMeta implements gitstore.CommitReader: the commit's author as
// author and committer, unsigned.
func (s *Store) CommitMeta(commit oid.ID) (gitstore.CommitMeta, error) {
	c, err := s.commit(commit)
	if err != nil {
		return gitstore.CommitMeta{}, err
	}
	who := c.author
	if who == "" {
		who = gitstore.Identity
	}
	return gitstore.CommitMeta{Author: who, Committer: who, Payload: []byte(c.message)}, nil
}
