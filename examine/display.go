package examine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/refusal"
)

// Display notes: the brief, also written into a notes ref that plain git
// log and forges read (git config nwdes.displayRef, refs/notes/commits
// say), as one block of the note between two marker lines. nwdes owns
// that block and rewrites only it, from the records; every byte outside
// it is the note's other writers' and is kept as it is.
const (
	DisplayBegin = "--- nwdes acceptance brief (kept by git nwdes from its records; write outside these lines) ---"
	DisplayEnd   = "--- end of the nwdes acceptance brief ---"
)

// RegisterDisplay declares ref as the display notes ref.
func RegisterDisplay(ref gitstore.RefName) func(*gitstore.Registry) error {
	return func(r *gitstore.Registry) error {
		if !strings.HasPrefix(string(ref), "refs/notes/") || ref == gitstore.NotesRef || ref.Validate() != nil {
			return refusal.New(refusal.ConfigurationMalformed, "set git config nwdes.displayRef to a notes ref such as refs/notes/commits",
				"nwdes.displayRef %q is not a notes ref other than %s", ref, gitstore.NotesRef)
		}
		return r.DeclareRef(gitstore.RefSpec{Ref: ref, Policy: gitstore.PolicyMerge, Notes: true,
			MergeNote: MergeDisplayNote, CheckNote: CheckDisplayNote})
	}
}

// displaySplit finds nwdes's block in a note: the text before it, the
// block's lines (markers included), and the text after it. A note with no
// block gives the whole note as before; more than one block, or a marker
// without its pair, is refused.
func displaySplit(note []byte) (before, block, after []byte, err error) {
	begin := bytes.Index(note, []byte(DisplayBegin+"\n"))
	if begin < 0 && bytes.Contains(note, []byte(DisplayEnd)) {
		return nil, nil, nil, fmt.Errorf("an end marker with no begin marker")
	}
	if begin < 0 {
		return note, nil, nil, nil
	}
	if begin > 0 && note[begin-1] != '\n' {
		return nil, nil, nil, fmt.Errorf("the begin marker is not at the start of a line")
	}
	rest := note[begin:]
	end := bytes.Index(rest, []byte("\n"+DisplayEnd+"\n"))
	if end < 0 {
		return nil, nil, nil, fmt.Errorf("a begin marker with no end marker")
	}
	stop := begin + end + len("\n"+DisplayEnd+"\n")
	if bytes.Contains(note[stop:], []byte(DisplayBegin)) || bytes.Contains(note[begin+len(DisplayBegin):begin+end], []byte(DisplayBegin)) {
		return nil, nil, nil, fmt.Errorf("more than one nwdes block")
	}
	return note[:begin], note[begin:stop], note[stop:], nil
}

func displayBlock(brief []byte) []byte {
	var b bytes.Buffer
	b.WriteString(DisplayBegin + "\n")
	b.Write(brief)
	if len(brief) > 0 && brief[len(brief)-1] != '\n' {
		b.WriteByte('\n')
	}
	b.WriteString(DisplayEnd + "\n")
	return b.Bytes()
}

// WithDisplayBlock returns note with nwdes's block set to brief (removed
// when brief is nil), every other byte kept: a new block goes after the
// note's text, separated by a blank line.
func WithDisplayBlock(note, brief []byte) ([]byte, error) {
	before, block, after, err := displaySplit(note)
	if err != nil {
		return nil, refusal.New(refusal.RecordMalformed, "restore the nwdes block's marker lines, or remove the block by hand; git nwdes notes sync writes it again",
			"the display note holds %v", err)
	}
	switch {
	case brief == nil && block == nil:
		return note, nil
	case brief == nil:
		return append(append([]byte{}, before...), after...), nil
	case block == nil:
		out := append([]byte{}, note...)
		if len(out) > 0 {
			if out[len(out)-1] != '\n' {
				out = append(out, '\n')
			}
			out = append(out, '\n')
		}
		return append(out, displayBlock(brief)...), nil
	}
	out := append(append([]byte{}, before...), displayBlock(brief)...)
	return append(out, after...), nil
}

// MergeDisplayNote joins two clones' versions of a display note: the text
// outside nwdes's block is merged three ways (a side that did not change
// it takes the other's; both changed keep both), and the block is ours
// (it is written again from the merged records right after).
func MergeDisplayNote(base, ours, theirs []byte) ([]byte, error) {
	text := func(n []byte) ([]byte, []byte) {
		before, block, after, err := displaySplit(n)
		if err != nil {
			return n, nil // not ours to judge: keep it whole as text
		}
		return append(append([]byte{}, before...), after...), block
	}
	b, _ := text(base)
	o, ob := text(ours)
	t, tb := text(theirs)
	var merged []byte
	switch {
	case bytes.Equal(o, t), bytes.Equal(t, b):
		merged = o
	case bytes.Equal(o, b):
		merged = t
	case bytes.Contains(o, t):
		merged = o
	case bytes.Contains(t, o):
		merged = t
	default:
		merged = append(append(append([]byte{}, bytes.TrimRight(o, "\n")...), "\n\n"...), t...)
	}
	block := ob
	if block == nil {
		block = tb
	}
	if block == nil {
		return merged, nil
	}
	before, after := merged, []byte(nil)
	if len(before) > 0 && !bytes.HasSuffix(before, []byte("\n\n")) {
		if before[len(before)-1] != '\n' {
			before = append(before, '\n')
		}
		before = append(before, '\n')
	}
	return append(append(append([]byte{}, before...), block...), after...), nil
}

// CheckDisplayNote is fsck's check of a display note: its nwdes block is
// what the records render (or there is none, for a commit no examination
// judged); the rest is not nwdes's to judge.
func CheckDisplayNote(st *gitstore.Store, commit oid.ID, note []byte) error {
	_, block, _, err := displaySplit(note)
	if err != nil {
		return fmt.Errorf("the display note on %s holds %v", commit.Short(), err)
	}
	want, err := BriefOf(st, commit)
	if err != nil {
		return err
	}
	switch {
	case want == nil && block != nil:
		return fmt.Errorf("the display note on %s holds an nwdes block, but no examination judged it", commit.Short())
	case want != nil && block == nil:
		return fmt.Errorf("the display note on %s has no nwdes block (git nwdes notes sync writes it)", commit.Short())
	case want != nil && !bytes.Equal(block, displayBlock(want)):
		return fmt.Errorf("the nwdes block of the display note on %s disagrees with the records (git nwdes notes sync rewrites it)", commit.Short())
	}
	return nil
}

// SyncDisplay writes the display note's block of each commit from the
// records (every commit with a brief when commits is empty) and returns
// the commits whose note changed. A note whose block cannot be found
// whole is refused, never rewritten.
func SyncDisplay(ctx context.Context, st *gitstore.Store, ref gitstore.RefName, commits []oid.ID) ([]oid.ID, error) {
	if len(commits) == 0 {
		var err error
		if commits, err = st.NotedCommits(); err != nil {
			return nil, err
		}
	}
	var changed []oid.ID
	for _, c := range commits {
		brief, err := BriefOf(st, c)
		if err != nil {
			return nil, err
		}
		moved := false
		_, err = st.UpdateNoteIn(ctx, ref, c, "display "+c.Short(), func(old []byte, found bool) ([]byte, error) {
			next, err := WithDisplayBlock(old, brief)
			if err != nil {
				return nil, err
			}
			if found && bytes.Equal(next, old) {
				return nil, errUnchanged
			}
			if !found && brief == nil {
				return nil, errUnchanged
			}
			moved = true
			return next, nil
		})
		if errors.Is(err, errUnchanged) {
			continue
		}
		if err != nil {
			return changed, err
		}
		if moved {
			changed = append(changed, c)
		}
	}
	return changed, nil
}

var errUnchanged = errors.New("unchanged")
