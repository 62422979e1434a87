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
		if !strings.HasPrefix(string(ref), "refs/notes/") || ref == gitstore.NotesRef || strings.HasPrefix(string(ref), string(gitstore.NotesRef)+"/") || ref.Validate() != nil {
			return refusal.New(refusal.ConfigurationMalformed, "set git config nwdes.displayRef to a notes ref such as refs/notes/commits",
				"nwdes.displayRef %q is not a notes ref other than %s", ref, gitstore.NotesRef)
		}
		return r.DeclareRef(gitstore.RefSpec{Ref: ref, Policy: gitstore.PolicyMerge, Notes: true,
			MergeNote: MergeDisplayNote, CheckNote: func(s *gitstore.Store, c oid.ID, note []byte) error { return CheckDisplayNote(s, c, note) }})
	}
}

// markerLines lists where a marker stands as a whole line of note: a
// marker quoted inside a person's sentence is text, not a marker.
func markerLines(note []byte, marker string) []int {
	var at []int
	for i := 0; i <= len(note)-len(marker); {
		j := bytes.Index(note[i:], []byte(marker))
		if j < 0 {
			break
		}
		k := i + j
		startOK := k == 0 || note[k-1] == '\n'
		endOK := k+len(marker) < len(note) && note[k+len(marker)] == '\n'
		if startOK && endOK {
			at = append(at, k)
		}
		i = k + 1
	}
	return at
}

// displaySplit finds nwdes's block in a note: the text before it, the
// block's lines (markers included), and the text after it. Markers count
// only as whole lines. A note with no block gives the whole note as
// before; more than one block, or a marker line without its pair, is
// refused.
func displaySplit(note []byte) (before, block, after []byte, err error) {
	begins, ends := markerLines(note, DisplayBegin), markerLines(note, DisplayEnd)
	switch {
	case len(begins) == 0 && len(ends) == 0:
		return note, nil, nil, nil
	case len(begins) > 1 || len(ends) > 1:
		return nil, nil, nil, fmt.Errorf("more than one nwdes block")
	case len(begins) == 0:
		return nil, nil, nil, fmt.Errorf("an end marker line with no begin marker")
	case len(ends) == 0 || ends[0] < begins[0]:
		return nil, nil, nil, fmt.Errorf("a begin marker line with no end marker after it")
	}
	stop := ends[0] + len(DisplayEnd) + 1
	return note[:begins[0]], note[begins[0]:stop], note[stop:], nil
}

// displayBlock is brief between the marker lines; a line of the brief that
// would read as a marker (a diagnostic quoting one) is indented by a
// space, so that the block always ends where nwdes ended it.
func displayBlock(brief []byte) []byte {
	var b bytes.Buffer
	b.WriteString(DisplayBegin + "\n")
	for _, line := range bytes.SplitAfter(brief, []byte("\n")) {
		if t := bytes.TrimRight(line, "\n"); string(t) == DisplayBegin || string(t) == DisplayEnd {
			b.WriteByte(' ')
		}
		b.Write(line)
	}
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
		return nil, refusal.NewUnreadable(refusal.RecordMalformed, "restore the nwdes block's marker lines, or remove the block by hand; git nwdes notes sync writes it again",
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
// before nwdes's block and the text after it are each merged three ways (a
// side that did not change it takes the other's; both changed keep both,
// in byte order, so that merges in either direction agree), and the block
// is put back between them (ours; it is written again from the merged
// records right after).
func MergeDisplayNote(base, ours, theirs []byte) ([]byte, error) {
	type parts struct{ before, block, after []byte }
	split := func(n []byte) parts {
		before, block, after, err := displaySplit(n)
		if err != nil {
			return parts{before: n} // not ours to judge: all of it is text
		}
		return parts{before, block, after}
	}
	b, o, t := split(base), split(ours), split(theirs)
	three := func(b, o, t []byte) []byte {
		switch {
		case bytes.Equal(o, t), bytes.Equal(t, b):
			return o
		case bytes.Equal(o, b):
			return t
		case bytes.Contains(o, t):
			return o
		case bytes.Contains(t, o):
			return t
		}
		x, y := o, t
		if bytes.Compare(x, y) > 0 {
			x, y = y, x
		}
		return append(append(append([]byte{}, bytes.TrimRight(x, "\n")...), "\n\n"...), y...)
	}
	before, after := three(b.before, o.before, t.before), three(b.after, o.after, t.after)
	block := o.block
	if block == nil {
		block = t.block
	}
	if block == nil {
		return append(append([]byte{}, before...), after...), nil
	}
	if len(before) > 0 && before[len(before)-1] != '\n' {
		before = append(append([]byte{}, before...), '\n')
	}
	return append(append(append([]byte{}, before...), block...), after...), nil
}

// CheckDisplayNote is fsck's check of a display note: its nwdes block is
// what the records render (or there is none, for a commit no examination
// judged); the rest is not nwdes's to judge.
func CheckDisplayNote(st Reading, commit oid.ID, note []byte) error {
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

// DisplayGaps is fsck's other half of CheckDisplayNote, which sees only
// the notes there are: each commit an examination judged that has no
// display note at all (a repository that set nwdes.displayRef after its
// closes, or a clone that fetched the records but not the display ref). A
// note that cannot be read is a problem too, never taken for an absent
// one.
func DisplayGaps(st Store, ref gitstore.RefName) ([]gitstore.Problem, error) {
	commits, err := st.NotedCommits()
	if err != nil {
		return nil, err
	}
	var gaps []gitstore.Problem
	for _, c := range commits {
		brief, err := BriefOf(st, c)
		if err != nil {
			// fsck names the record or note that stops the brief.
			continue
		}
		if brief == nil {
			continue
		}
		switch _, err := st.NoteIn(ref, c); {
		case errors.Is(err, gitstore.ErrNotFound):
			gaps = append(gaps, gitstore.Problem{Ref: ref, Commit: c.String(),
				What: fmt.Sprintf("an examination judged %s, but it has no display note (git nwdes notes sync writes it)", c.Short())})
		case err != nil:
			gaps = append(gaps, gitstore.Problem{Ref: ref, Commit: c.String(), What: "display note unreadable: " + err.Error()})
		}
	}
	return gaps, nil
}

// SyncDisplay writes the display note's block of each commit from the
// records (every commit with a brief when commits is empty) and returns
// the commits whose note changed, and what it left alone: a note whose
// block cannot be found whole is never rewritten, and one such note does
// not stop the others (or a push).
func SyncDisplay(ctx context.Context, st Store, ref gitstore.RefName, commits []oid.ID) ([]oid.ID, []string, error) {
	if len(commits) == 0 {
		var err error
		if commits, err = st.NotedCommits(); err != nil {
			return nil, nil, err
		}
	}
	var changed []oid.ID
	var left []string
	for _, c := range commits {
		brief, err := BriefOf(st, c)
		if err != nil {
			return nil, nil, err
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
		if r, ok := refusal.As(err); ok && r.Name == refusal.RecordMalformed {
			left = append(left, fmt.Sprintf("%s: %s", c.Short(), r.Detail))
			continue
		}
		if err != nil {
			return changed, left, err
		}
		if moved {
			changed = append(changed, c)
		}
	}
	return changed, left, nil
}

var errUnchanged = errors.New("unchanged")
