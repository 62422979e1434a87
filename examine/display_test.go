package examine_test

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/internal/gittest"
)

func TestTheDisplayBlockIsTheOnlyPartOfTheNoteNwdesWrites(t *testing.T) {
	person := []byte("Reviewed by Ada.\r\nNo trailing newline")
	one, err := examine.WithDisplayBlock(person, []byte("## nwdes acceptance brief: f: accepted\n"))
	if err != nil || !bytes.HasPrefix(one, person) {
		t.Fatalf("a block added: %q %v", one, err)
	}
	two, err := examine.WithDisplayBlock(append(one, "after\n"...), []byte("## nwdes acceptance brief: f: rejected\n"))
	if err != nil || !bytes.HasPrefix(two, person) || !bytes.HasSuffix(two, []byte("after\n")) || bytes.Contains(two, []byte("accepted")) {
		t.Fatalf("a block replaced: %q %v", two, err)
	}
	none, err := examine.WithDisplayBlock(two, nil)
	if err != nil || bytes.Contains(none, []byte("nwdes")) || !bytes.HasPrefix(none, person) {
		t.Fatalf("a block removed: %q %v", none, err)
	}
	for _, bad := range []string{
		examine.DisplayBegin + "\nno end\n",
		"text\n" + examine.DisplayEnd + "\n",
		examine.DisplayBegin + "\na\n" + examine.DisplayEnd + "\n" + examine.DisplayBegin + "\nb\n" + examine.DisplayEnd + "\n",
	} {
		if _, err := examine.WithDisplayBlock([]byte(bad), []byte("x\n")); err == nil {
			t.Errorf("a note with a broken block was rewritten: %q", bad)
		}
	}
}

func TestTwoClonesDisplayNotesMergeKeepingEveryPersonsText(t *testing.T) {
	block := func(s string) string { return examine.DisplayBegin + "\n" + s + "\n" + examine.DisplayEnd + "\n" }
	base := "Ada: ok.\n\n" + block("brief 1")
	ours := "Ada: ok.\nAda: docs too.\n\n" + block("brief 2")
	theirs := "Ada: ok.\n\n" + block("brief 1") + "Grace: arm64 ok.\n"
	got, err := examine.MergeDisplayNote([]byte(base), []byte(ours), []byte(theirs))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Ada: ok.", "Ada: docs too.", "Grace: arm64 ok.", "brief 2"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("the merge lost %q:\n%s", want, got)
		}
	}
	if strings.Count(string(got), examine.DisplayBegin) != 1 {
		t.Errorf("the merge holds %d blocks:\n%s", strings.Count(string(got), examine.DisplayBegin), got)
	}
	// One side unchanged: the other's text, no duplicate.
	got, _ = examine.MergeDisplayNote([]byte(base), []byte(base), []byte(theirs))
	if strings.Count(string(got), "Ada: ok.") != 1 || !strings.Contains(string(got), "Grace") {
		t.Errorf("a one-sided change: %s", got)
	}
}

// A person's git notes append running beside nwdes rewriting its block:
// every append that git reported done is in the final note (nwdes writes
// by compare-and-swap, so it never drops a person's text). git notes
// append itself moves the ref without comparing, so it can drop one of
// nwdes's rewrites; the block is derived from records, and writing it
// again (notes sync, or the next close) restores it: once, the latest.
func TestConcurrentPersonAppendsAndBlockRewritesLoseNothing(t *testing.T) {
	dir := gittest.Init(t, false)
	loc, err := gitrepo.Discover(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := gitstore.NewRegistry(examine.Register, examine.RegisterDisplay("refs/notes/commits"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := gitstore.Open(loc, gitstore.Options{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	head, err := st.Resolve("HEAD")
	if err != nil {
		t.Fatal(err)
	}
	const n = 25
	var wg sync.WaitGroup
	var mu sync.Mutex
	var appended []string
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; i < n; i++ {
			line := fmt.Sprintf("person line %d", i)
			cmd := exec.Command("git", "notes", "append", "-m", line, "HEAD")
			cmd.Dir = dir
			cmd.Env = gittest.Env(dir + "/..")
			if cmd.Run() == nil { // a lost lock race is git's refusal, not a loss
				mu.Lock()
				appended = append(appended, line)
				mu.Unlock()
			}
		}
	}()
	go func() {
		defer wg.Done()
		for i := 0; i < n; i++ {
			brief := []byte(fmt.Sprintf("## nwdes acceptance brief: f: accepted\nrewrite %d\n", i))
			if _, err := st.UpdateNoteIn(context.Background(), "refs/notes/commits", head, "display", func(old []byte, _ bool) ([]byte, error) {
				return examine.WithDisplayBlock(old, brief)
			}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	wg.Wait()
	final := []byte(fmt.Sprintf("## nwdes acceptance brief: f: accepted\nrewrite %d\n", n-1))
	if _, err := st.UpdateNoteIn(context.Background(), "refs/notes/commits", head, "display", func(old []byte, _ bool) ([]byte, error) {
		return examine.WithDisplayBlock(old, final)
	}); err != nil {
		t.Fatal(err)
	}
	note := gittest.Git(t, dir, "notes", "show", "HEAD")
	if len(appended) == 0 {
		t.Fatal("no append of the person's succeeded")
	}
	for _, line := range appended {
		if !strings.Contains(note, line) {
			t.Errorf("lost %q", line)
		}
	}
	if strings.Count(note, examine.DisplayBegin) != 1 || !strings.Contains(note, fmt.Sprintf("rewrite %d", n-1)) {
		t.Errorf("nwdes's block:\n%s", note)
	}
	gittest.Git(t, dir, "fsck", "--strict")
}
