package gitstore

import (
	"context"
	"errors"
	"fmt"
	"github.com/nwdes/nwdes/gitstore/git"

	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/refusal"
)

// NotesRef is where nwdes keeps its notes, in git's notes layout, so that
// `git notes --ref nwdes show <commit>` and `git log --notes=nwdes` show them.
const NotesRef RefName = "refs/notes/nwdes"

// notePaths lists where git may keep the note for h: flat, or under one or
// more two-hex-digit fanout directories. git reads all of these.
func notePaths(h oid.ID) []string {
	hex := h.String()
	return []string{
		hex[:2] + "/" + hex[2:],
		hex,
		hex[:2] + "/" + hex[2:4] + "/" + hex[4:],
	}
}

// noteAt finds the note for commit in tx, returning its path.
func noteAt(tx *Tx, commit oid.ID) ([]byte, string, error) {
	for _, p := range notePaths(commit) {
		b, err := tx.ReadBlob(p)
		if err == nil {
			return b, p, nil
		}
		if !errors.Is(err, ErrNotFound) {
			return nil, "", err
		}
	}
	return nil, "", fmt.Errorf("note for %s: %w", commit, ErrNotFound)
}

// Note returns the note nwdes keeps on commit, or an error wrapping
// ErrNotFound.
func (s *Store) Note(commit oid.ID) ([]byte, error) { return s.NoteIn(NotesRef, commit) }

// NoteIn returns the note on commit in the notes ref ref (NotesRef, or a
// declared display ref), or an error wrapping ErrNotFound.
func (s *Store) NoteIn(ref RefName, commit oid.ID) ([]byte, error) {
	tx, err := s.view(ref)
	if err != nil {
		return nil, err
	}
	b, _, err := noteAt(tx, commit)
	return b, err
}

// UpdateNote sets the note on commit to what fn returns given the current
// note (nil, false when there is none). It is a compare-and-swap append on
// the notes ref like any other update; fn may run more than once. A new note
// goes under a one-level fanout (xx/38 hex digits), which git reads at any
// size; an existing note is rewritten where it already is.
func (s *Store) UpdateNote(ctx context.Context, commit oid.ID, message string, fn func(old []byte, found bool) ([]byte, error), opts ...UpdateOption) (oid.ID, error) {
	return s.UpdateNoteIn(ctx, NotesRef, commit, message, fn, opts...)
}

// UpdateNoteIn is UpdateNote on the notes ref ref (NotesRef, or a
// declared display ref).
func (s *Store) UpdateNoteIn(ctx context.Context, ref RefName, commit oid.ID, message string, fn func(old []byte, found bool) ([]byte, error), opts ...UpdateOption) (oid.ID, error) {
	if !s.opts.Registry.isNotes(ref) {
		return oid.ID{}, refusal.New(refusal.RefNotDeclared, "declare the display notes ref (git config nwdes.displayRef)", "%s is not a notes ref nwdes keeps", ref)
	}
	return s.updateTx(ctx, ref, message, func(tx *Tx) error {
		old, path, err := noteAt(tx, commit)
		found := err == nil
		if err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
		next, err := fn(old, found)
		if err != nil {
			return err
		}
		if !found {
			path = notePaths(commit)[0]
		}
		return tx.WriteBlob(path, next)
	}, opts...)
}

// NotedCommits lists the commits the tip of NotesRef holds a note for.
func (s *Store) NotedCommits() ([]oid.ID, error) {
	tx, err := s.view(NotesRef)
	if err != nil {
		return nil, err
	}
	var out []oid.ID
	var walk func(dir, prefix string) error
	walk = func(dir, prefix string) error {
		es, err := tx.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, e := range es {
			p := e.Name
			if dir != "" {
				p = dir + "/" + e.Name
			}
			if e.Mode == ModeTree {
				if err := walk(p, prefix+e.Name); err != nil {
					return err
				}
				continue
			}
			if id := prefix + e.Name; git.IsHexID(s.git.Format(), id) {
				out = append(out, oid.MustParse(id))
			}
		}
		return nil
	}
	if err := walk("", ""); err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	return out, nil
}
