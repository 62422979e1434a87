package memstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/refusal"
)

// Note implements gitstore.NoteKeeper.
func (s *Store) Note(commit oid.ID) ([]byte, error) { return s.NoteIn(gitstore.NotesRef, commit) }

// NoteIn implements gitstore.NoteKeeper.
func (s *Store) NoteIn(ref gitstore.RefName, commit oid.ID) ([]byte, error) {
	v, err := s.Records(ref)
	if err != nil {
		return nil, err
	}
	return noteAt(v, commit)
}

func noteAt(v gitstore.View, commit oid.ID) ([]byte, error) {
	b, err := v.ReadBlob(gitstore.NotePath(commit))
	if errors.Is(err, gitstore.ErrNotFound) {
		return nil, fmt.Errorf("note for %s: %w", commit, gitstore.ErrNotFound)
	}
	return b, err
}

// UpdateNote implements gitstore.NoteKeeper.
func (s *Store) UpdateNote(ctx context.Context, commit oid.ID, message string, fn func(old []byte, found bool) ([]byte, error), opts ...gitstore.UpdateOption) (oid.ID, error) {
	return s.UpdateNoteIn(ctx, gitstore.NotesRef, commit, message, fn, opts...)
}

// UpdateNoteIn implements gitstore.NoteKeeper.
func (s *Store) UpdateNoteIn(ctx context.Context, ref gitstore.RefName, commit oid.ID, message string, fn func(old []byte, found bool) ([]byte, error), opts ...gitstore.UpdateOption) (oid.ID, error) {
	if !s.opts.Registry.IsNotes(ref) {
		return oid.ID{}, refusal.New(refusal.RefNotDeclared, "declare the display notes ref (git config nwdes.displayRef)", "%s is not a notes ref nwdes keeps", ref)
	}
	return s.Change(ctx, ref, message, func(e gitstore.Edit) error {
		old, err := noteAt(e, commit)
		found := err == nil
		if err != nil && !errors.Is(err, gitstore.ErrNotFound) {
			return err
		}
		next, err := fn(old, found)
		if err != nil {
			return err
		}
		return e.WriteBlob(gitstore.NotePath(commit), next)
	}, opts...)
}

// NotedCommits lists the commits the tip of NotesRef holds a note for.
func (s *Store) NotedCommits() ([]oid.ID, error) {
	v, err := s.Records(gitstore.NotesRef)
	if err != nil {
		return nil, err
	}
	var out []oid.ID
	for _, rel := range v.(*view).under("") {
		id, err := oid.Parse(rel[:2] + rel[3:])
		if err != nil || rel[2] != '/' {
			continue
		}
		out = append(out, id)
	}
	return out, nil
}

// VerifiedRecords implements gitstore.AppendOnly: every commit of the
// store was made by Change, which keeps immutable files, so the history of
// every tip is whole.
func (s *Store) VerifiedRecords(ref gitstore.RefName) (gitstore.View, error) {
	return s.Records(ref)
}

// CheckHistory implements gitstore.AppendOnly: only a commit the store
// does not hold can fail it.
func (s *Store) CheckHistory(ref gitstore.RefName, tip oid.ID) error {
	if tip.IsZero() {
		return nil
	}
	_, err := s.commit(tip)
	return err
}

// Altered implements gitstore.AppendOnly.
func (s *Store) Altered(old, next oid.ID, dirs []string) (string, error) {
	o, err := s.commit(old)
	if err != nil {
		return "", err
	}
	n, err := s.commit(next)
	if err != nil {
		return "", err
	}
	path, _ := altered(o.files, n.files, dirs)
	return path, nil
}

// Parents implements gitstore.Ancestry over the store's own commits.
func (s *Store) Parents(commit oid.ID) ([]oid.ID, time.Time, error) {
	c, err := s.commit(commit)
	if err != nil {
		return nil, time.Time{}, err
	}
	return c.parents, c.time, nil
}

// ancestors is every commit reachable from id, id included.
func (s *Store) ancestors(id oid.ID) (map[oid.ID]bool, error) {
	seen := map[oid.ID]bool{}
	todo := []oid.ID{id}
	for len(todo) > 0 {
		h := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if seen[h] {
			continue
		}
		if len(seen) >= s.opts.MaxWalk {
			return nil, refusal.New(refusal.WalkLimit, "narrow the walk, or raise nwdes.maxWalk",
				"history below %s is longer than the walk limit of %d commits", id, s.opts.MaxWalk)
		}
		c, err := s.commit(h)
		if err != nil {
			return nil, err
		}
		seen[h] = true
		todo = append(todo, c.parents...)
	}
	return seen, nil
}

// IsAncestor implements gitstore.Ancestry.
func (s *Store) IsAncestor(anc, desc oid.ID) (bool, error) {
	all, err := s.ancestors(desc)
	return all[anc], err
}

// MergeBases implements gitstore.Ancestry: the common ancestors no other
// common ancestor descends from, sorted by id.
func (s *Store) MergeBases(a, b oid.ID) ([]oid.ID, error) {
	ofA, err := s.ancestors(a)
	if err != nil {
		return nil, err
	}
	ofB, err := s.ancestors(b)
	if err != nil {
		return nil, err
	}
	var common []oid.ID
	for h := range ofA {
		if ofB[h] {
			common = append(common, h)
		}
	}
	var out []oid.ID
	for _, h := range common {
		best := true
		for _, o := range common {
			if o == h {
				continue
			}
			if up, err := s.IsAncestor(h, o); err != nil {
				return nil, err
			} else if up {
				best = false
				break
			}
		}
		if best {
			out = append(out, h)
		}
	}
	slices.SortFunc(out, oid.Compare)
	return out, nil
}
