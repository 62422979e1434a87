package examine

import (
	"bytes"
	"testing"
)

// FuzzDisplayNote: a display note anyone could have pushed never panics
// the block writer or the merge; a rewrite keeps every byte outside the
// block, and a written block is found again whole.
func FuzzDisplayNote(f *testing.F) {
	blk := string(displayBlock([]byte("## nwdes acceptance brief: f: accepted\n")))
	for _, s := range []string{"", "Ada: ok.\n", "x\n" + blk + "y\n", DisplayBegin + "\n", "a " + DisplayEnd + " b\n", blk + blk} {
		f.Add([]byte(s), []byte("brief\n"+DisplayEnd+"\n"))
	}
	f.Fuzz(func(t *testing.T, note, brief []byte) {
		before, _, after, err := displaySplit(note)
		out, werr := WithDisplayBlock(note, brief)
		if (err == nil) != (werr == nil) {
			t.Fatalf("split %v, write %v", err, werr)
		}
		if werr == nil {
			if !bytes.HasPrefix(out, before) || !bytes.HasSuffix(out, after) {
				t.Fatalf("a rewrite changed text outside the block: %q -> %q", note, out)
			}
			_, block, _, err := displaySplit(out)
			if err != nil || !bytes.Equal(block, displayBlock(brief)) {
				t.Fatalf("the written block is not found again: %v %q", err, out)
			}
		}
		_, _ = MergeDisplayNote(note, out, brief)
	})
}
