package examine_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/examine"
)

// A brief renders text people wrote (a close's diagnostic, an
// observation). When that text holds the end marker's line, the block
// ends early: the rest of the brief is taken for a person's text after
// the block, and every later close keeps it and writes a new block
// before it, so the note grows by a copy of the brief's tail each close.
func TestReview16ABriefHoldingTheEndMarkerLineIsRewrittenInPlace(t *testing.T) {
	person := []byte("Reviewed by Ada.\n")
	brief := []byte("## nwdes acceptance brief: f: accepted\ndiagnostic:\n" + examine.DisplayEnd + "\ntail of the brief\n")
	one, err := examine.WithDisplayBlock(person, brief)
	if err != nil {
		t.Fatal(err)
	}
	two, err := examine.WithDisplayBlock(one, brief)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(one, two) {
		t.Fatalf("writing the same brief twice changed the note:\nonce:\n%s\ntwice:\n%s", one, two)
	}
}

// A brief holding the begin marker's line makes nwdes refuse its own
// block forever ("more than one nwdes block").
func TestReview16ABriefHoldingTheBeginMarkerLineCanBeWrittenAgain(t *testing.T) {
	brief := []byte("## nwdes acceptance brief: f: accepted\n" + examine.DisplayBegin + "\n")
	one, err := examine.WithDisplayBlock(nil, brief)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := examine.WithDisplayBlock(one, brief); err != nil {
		t.Fatalf("nwdes cannot rewrite a block it wrote itself: %v", err)
	}
}

func block(brief string) string {
	return examine.DisplayBegin + "\n" + brief + examine.DisplayEnd + "\n"
}

// The common flow: a close writes the block, a person runs git notes
// append (text below the block); the other clone closes again (only the
// block changed). The merge moves the person's text above the block and
// adds a leading blank line: bytes altered and reordered.
func TestReview16AMergeKeepsAPersonsTextBelowTheBlockWhereItWas(t *testing.T) {
	base := []byte(block("brief v1\n"))
	ours := []byte(block("brief v1\n") + "\nLGTM from Ada.\n") // git notes append
	theirs := []byte(block("brief v2\n"))                      // the other clone closed again
	got, err := examine.MergeDisplayNote(base, ours, theirs)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, ours) {
		t.Fatalf("merge moved the person's text:\nwant:\n%q\ngot:\n%q", ours, got)
	}
}

// Two peers that fetched each other (criss-cross) hold "A..B" and "B..A";
// MergeDisplayNote orders ours first (not symmetric, unlike treemerge's
// concat), so the next merge sees neither contained in the other and
// writes every person's text twice.
func TestReview16ACrissCrossMergeDoesNotDuplicateText(t *testing.T) {
	a, b := "Ada: ship it.\n", "Grace: checked on arm64.\n"
	atA, err := examine.MergeDisplayNote(nil, []byte(a), []byte(b))
	if err != nil {
		t.Fatal(err)
	}
	atB, err := examine.MergeDisplayNote(nil, []byte(b), []byte(a))
	if err != nil {
		t.Fatal(err)
	}
	got, err := examine.MergeDisplayNote([]byte(a), atA, atB)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(got), "Ada: ship it."); n != 1 {
		t.Fatalf("the person's text appears %d times after a criss-cross merge:\n%s", n, got)
	}
}
