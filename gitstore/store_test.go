package gitstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nwdes/nwdes/gitstore/oid"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/refusal"
)

const testRef = gitstore.RefName("refs/nwdes/test")

var fixedClock = func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }

func openStore(t *testing.T, dir string, opts gitstore.Options) *gitstore.Store {
	t.Helper()
	loc, err := gitrepo.Discover(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if opts.Now == nil {
		opts.Now = fixedClock
	}
	if opts.Registry == nil {
		opts.Registry = gitstore.MustRegistry(gitstore.OpenRegistry(gitstore.KindSpec{Kind: "test.note", Version: 1}))
	}
	s, err := gitstore.Open(loc, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type noteBody struct {
	Title string   `json:"title"`
	Tags  []string `json:"tags"`
	N     int      `json:"n"`
}

func TestARecordRoundTripsWithPayloadsByteForByte(t *testing.T) {
	dir := gittest.Init(t, false)
	s := openStore(t, dir, gitstore.Options{})
	payload := []byte("line one\r\nline two\n\n```\n\x00\xff trailing")
	rec, err := gitstore.NewRecord("test.note", 1, noteBody{Title: "é <&>", Tags: []string{"b", "a"}, N: 3})
	if err != nil {
		t.Fatal(err)
	}
	rec.Payloads = map[string][]byte{"text": payload, "empty": {}}
	tip, err := s.Change(context.Background(), testRef, "put", func(tx gitstore.Edit) error {
		return tx.Put("notes/one", rec)
	})
	if err != nil {
		t.Fatal(err)
	}
	tx, err := s.Records(testRef)
	if err != nil {
		t.Fatal(err)
	}
	if tx.Base() != tip {
		t.Fatalf("view at %s, want %s", tx.Base(), tip)
	}
	got, err := tx.Get("notes/one")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Payloads["text"], payload) || len(got.Payloads["empty"]) != 0 {
		t.Fatalf("payloads changed: %q", got.Payloads)
	}
	var body noteBody
	if err := got.Decode(&body); err != nil || body.Title != "é <&>" || body.N != 3 {
		t.Fatalf("body = %+v, %v", body, err)
	}
	raw := gittest.Git(t, dir, "cat-file", "blob", string(testRef)+":notes/one/record.json")
	if want := `{"body":{"n":3,"tags":["b","a"],"title":"é <&>"},"kind":"test.note","v":1}`; raw != want {
		t.Fatalf("stored json = %s, want canonical %s", raw, want)
	}
	gittest.Git(t, dir, "fsck", "--strict", "--no-dangling")
}

func TestCanonicalJSONSortsKeysAndRefusesWhatIsNotCanonical(t *testing.T) {
	got, err := gitstore.Canonical([]byte(`{ "b": [1, {"z":1,"a":2}], "a": "x" }`))
	if err != nil || string(got) != `{"a":"x","b":[1,{"a":2,"z":1}]}` {
		t.Fatalf("canonical = %s, %v", got, err)
	}
	for _, bad := range []string{`{"a":1,"a":2}`, `{"a":1} {}`, "{\"a\":\"\xff\"}", `{"b":1,"a":2}`, `{"a": 1}`} {
		if err := gitstore.CheckCanonical([]byte(bad)); !refusal.Named(err, "RecordMalformed") {
			t.Errorf("%q: err = %v, want RecordMalformed", bad, err)
		}
	}
}

func TestARecordOverTheLimitIsRefusedAndNothingMoves(t *testing.T) {
	dir := gittest.Init(t, false)
	s := openStore(t, dir, gitstore.Options{MaxRecordBytes: 1000})
	rec, _ := gitstore.NewRecord("test.note", 1, noteBody{})
	rec.Payloads = map[string][]byte{"big": bytes.Repeat([]byte("x"), 1000)}
	_, err := s.Change(context.Background(), testRef, "put", func(tx gitstore.Edit) error { return tx.Put("big", rec) })
	if !refusal.Named(err, "RecordTooLarge") || !strings.Contains(err.Error(), "limit of 1000 bytes") {
		t.Fatalf("err = %v, want RecordTooLarge naming the limit", err)
	}
	if tip, _ := s.Tip(testRef); !tip.IsZero() {
		t.Fatal("ref moved after a refusal")
	}
	if gitstore.DefaultMaxRecordBytes != 1<<20 {
		t.Fatal("default record limit is 1 MiB")
	}
}

func TestUpdateRerunsItsFunctionAfterAConflictAndNoRetryRefuses(t *testing.T) {
	dir := gittest.Init(t, false)
	s := openStore(t, dir, gitstore.Options{Sleep: func(time.Duration) {}})
	ctx := context.Background()
	put := func(tx gitstore.Edit, v string) error { return tx.WriteBlob("v", []byte(v)) }
	if _, err := s.Change(ctx, testRef, "one", func(tx gitstore.Edit) error { return put(tx, "1") }); err != nil {
		t.Fatal(err)
	}
	runs := 0
	_, err := s.Change(ctx, testRef, "two", func(tx gitstore.Edit) error {
		runs++
		if runs == 1 {
			// Another writer moves the ref between our read and our swap.
			if _, err := s.Change(ctx, testRef, "sneak", func(tx gitstore.Edit) error { return put(tx, "sneak") }); err != nil {
				return err
			}
		}
		old, err := tx.ReadBlob("v")
		if err != nil {
			return err
		}
		return put(tx, string(old)+"+2")
	})
	if err != nil || runs != 2 {
		t.Fatalf("err = %v, runs = %d, want a rerun", err, runs)
	}
	if got := gittest.Git(t, dir, "cat-file", "blob", string(testRef)+":v"); got != "sneak+2" {
		t.Fatalf("v = %q: the rerun must see the other writer's value", got)
	}

	first := true
	_, err = s.Change(ctx, testRef, "three", func(tx gitstore.Edit) error {
		if first {
			first = false
			if _, err := s.Change(ctx, testRef, "sneak", func(tx gitstore.Edit) error { return put(tx, "again") }); err != nil {
				return err
			}
		}
		return put(tx, "three")
	}, gitstore.NoRetry())
	if !refusal.Named(err, "Conflict") || !errors.Is(err, gitstore.ErrConflict) {
		t.Fatalf("err = %v, want a Conflict refusal", err)
	}
	if got := gittest.Git(t, dir, "cat-file", "blob", string(testRef)+":v"); got != "again" {
		t.Fatalf("v = %q after a refused update", got)
	}
}

func TestConcurrentGoroutinesLoseNoUpdate(t *testing.T) {
	dir := gittest.Init(t, false)
	s := openStore(t, dir, gitstore.Options{})
	const writers, each = 4, 25
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				_, err := s.Change(context.Background(), testRef, "add", func(tx gitstore.Edit) error {
					return tx.WriteBlob(fmt.Sprintf("log/%d-%d", w, i), []byte("x"))
				})
				if err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	tx, _ := s.Records(testRef)
	names, _ := tx.List("log")
	if len(names) != writers*each {
		t.Fatalf("%d entries, want %d", len(names), writers*each)
	}
	commits := 0
	if err := s.Log(testRef, func(gitstore.Entry) bool { commits++; return true }); err != nil {
		t.Fatal(err)
	}
	if commits != writers*each {
		t.Fatalf("%d commits in the chain, want %d", commits, writers*each)
	}
}

func TestAHistoryWalkIsBounded(t *testing.T) {
	dir := gittest.Init(t, false)
	s := openStore(t, dir, gitstore.Options{MaxWalk: 3})
	for i := 0; i < 4; i++ {
		s.Change(context.Background(), testRef, "n", func(tx gitstore.Edit) error { return tx.WriteBlob("n", []byte{byte(i)}) })
	}
	err := s.Log(testRef, func(gitstore.Entry) bool { return true })
	if !refusal.Named(err, "WalkLimit") || !strings.Contains(err.Error(), "3 commits") {
		t.Fatalf("err = %v, want WalkLimit naming the bound", err)
	}
}

func TestNotesAreReadableByGit(t *testing.T) {
	dir := gittest.Init(t, false)
	s := openStore(t, dir, gitstore.Options{})
	head := oid.MustParse(gittest.Git(t, dir, "rev-parse", "HEAD"))
	_, err := s.UpdateNote(context.Background(), head, "brief", func(old []byte, found bool) ([]byte, error) {
		if found {
			t.Fatal("no note yet")
		}
		return []byte("## greeting: accepted\n"), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := gittest.Git(t, dir, "notes", "--ref", "nwdes", "show", "HEAD"); got != "## greeting: accepted" {
		t.Fatalf("git notes show = %q", got)
	}
	if got := gittest.Git(t, dir, "log", "-1", "--notes=nwdes"); !strings.Contains(got, "Notes (nwdes):\n    ## greeting: accepted") {
		t.Fatalf("git log --notes=nwdes:\n%s", got)
	}
	// A note git itself wrote (flat layout) is found and updated in place.
	gittest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "second")
	second := oid.MustParse(gittest.Git(t, dir, "rev-parse", "HEAD"))
	gittest.Git(t, dir, "notes", "--ref", "nwdes", "add", "-m", "from git", "HEAD")
	_, err = s.UpdateNote(context.Background(), second, "append", func(old []byte, found bool) ([]byte, error) {
		if !found || string(old) != "from git\n" {
			t.Fatalf("old = %q, %v", old, found)
		}
		return append(old, "and nwdes\n"...), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := gittest.Git(t, dir, "notes", "--ref", "nwdes", "show", "HEAD"); got != "from git\nand nwdes" {
		t.Fatalf("git notes show = %q", got)
	}
	if b, err := s.Note(head); err != nil || string(b) != "## greeting: accepted\n" {
		t.Fatalf("Note = %q, %v", b, err)
	}
	gittest.Git(t, dir, "fsck", "--strict", "--no-dangling")
}

func TestFsckNamesEachProblem(t *testing.T) {
	dir := gittest.Init(t, false)
	s := openStore(t, dir, gitstore.Options{})
	rec, _ := gitstore.NewRecord("test.note", 1, noteBody{Title: "ok"})
	if _, err := s.Change(context.Background(), testRef, "ok", func(tx gitstore.Edit) error { return tx.Put("good", rec) }); err != nil {
		t.Fatal(err)
	}
	rep, err := s.Fsck()
	if err != nil || !rep.OK() || rep.Records != 1 {
		t.Fatalf("fsck of a good store: %+v, %v", rep, err)
	}
	// Put refuses these; another program (or a newer nwdes) can still
	// write them, as blobs.
	unknown, _ := gitstore.Canonical(map[string]any{"body": noteBody{}, "kind": "test.other", "v": 1})
	newer, _ := gitstore.Canonical(map[string]any{"body": noteBody{}, "kind": "test.note", "v": 2})
	_, err = s.Change(context.Background(), testRef, "bad", func(tx gitstore.Edit) error {
		gitstore.WriteRaw(tx, "unknown/record.json", unknown)
		gitstore.WriteRaw(tx, "newer/record.json", newer)
		return gitstore.WriteRaw(tx, "ugly/record.json", []byte(`{"kind": "test.note"}`))
	})
	if err != nil {
		t.Fatal(err)
	}
	rep, _ = s.Fsck()
	var got []string
	for _, p := range rep.Problems {
		got = append(got, p.Path+": "+p.What)
	}
	want := []string{`kind "test.other" is unknown`, "test.note v2 is newer", "not in canonical form"}
	for _, w := range want {
		if !strings.Contains(strings.Join(got, "\n"), w) {
			t.Errorf("fsck problems %q do not mention %q", got, w)
		}
	}
	// A missing object is named too. The store writes packs: unpack them
	// so that one object can be removed on its own.
	unpackAll(t, dir)
	tree := gittest.Git(t, dir, "rev-parse", string(testRef)+":good")
	obj := filepath.Join(dir, ".git", "objects", tree[:2], tree[2:])
	if err := os.Remove(obj); err != nil {
		t.Fatal(err)
	}
	// A fresh store: this one still holds the removed packs open.
	s = openStore(t, dir, gitstore.Options{})
	rep, _ = s.Fsck()
	if !strings.Contains(fmt.Sprint(rep.Problems), "tree "+tree+" unreadable") {
		t.Fatalf("missing tree not reported: %v", rep.Problems)
	}
}

func TestABodyWhoseFieldNamesDifferOnlyInCaseIsRefused(t *testing.T) {
	rec := &gitstore.Record{Kind: "test.note", V: 1, Body: []byte(`{"N":3,"tags":[],"title":"x"}`)}
	var b noteBody
	if err := rec.Decode(&b); !refusal.Named(err, "RecordMalformed") {
		t.Fatalf("err = %v, want RecordMalformed for \"N\" standing in for \"n\"", err)
	}
	rec.Body = []byte(`{"n":3,"tags":[],"title":"x"}`)
	if err := rec.Decode(&b); err != nil || b.N != 3 {
		t.Fatalf("the exact spelling must decode: %v", err)
	}
}

func TestOpeningAndClosingStoresForHoursHoldsNoGrowingNumberOfDescriptors(t *testing.T) {
	dir := gittest.Init(t, false)
	loc, err := gitrepo.Discover(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := gitstore.Open(loc, gitstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		if _, err := st.Change(context.Background(), "refs/nwdes/fd", "put", func(tx gitstore.Edit) error {
			return tx.WriteBlob(fmt.Sprintf("f%d", i), []byte("x"))
		}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	gittest.Git(t, dir, "repack", "-adq")
	fds := func() int {
		ents, _ := os.ReadDir("/proc/self/fd")
		return len(ents)
	}
	use := func() {
		st, err := gitstore.Open(loc, gitstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		tx, err := st.Records("refs/nwdes/fd")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ReadBlob("f7"); err != nil {
			t.Fatal(err)
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Records("refs/nwdes/fd"); err == nil {
			if tx, _ := st.Records("refs/nwdes/fd"); tx != nil {
				if _, err := tx.ReadBlob("f7"); err == nil {
					t.Fatal("a closed store still reads")
				}
			}
		}
	}
	use()
	before := fds()
	for i := 0; i < 300; i++ {
		use()
	}
	if after := fds(); after > before+2 {
		t.Fatalf("descriptors grew from %d to %d over 300 opened and closed stores", before, after)
	}
}

// unpackAll turns every pack of the repository at dir into loose objects.
func unpackAll(t *testing.T, dir string) {
	t.Helper()
	packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "pack-*.pack"))
	for _, p := range packs {
		base := strings.TrimSuffix(p, ".pack")
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		// unpack-objects skips objects the repository already has: the
		// pack must be gone first.
		for _, ext := range []string{".idx", ".pack"} {
			if err := os.Remove(base + ext); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command("git", "unpack-objects", "-q")
		cmd.Dir = dir
		cmd.Stdin = bytes.NewReader(b)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git unpack-objects: %v: %s", err, out)
		}
	}
}

func TestARecordReadAgainIsDecodedAsStrictlyAsTheFirstTime(t *testing.T) {
	dir := gittest.Init(t, false)
	s := openStore(t, dir, gitstore.Options{})
	rec, err := gitstore.NewRecord("test.note", 1, noteBody{Title: "t", Tags: []string{}, N: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Change(context.Background(), testRef, "put", func(tx gitstore.Edit) error { return tx.Put("notes/one", rec) }); err != nil {
		t.Fatal(err)
	}
	get := func() *gitstore.Record {
		t.Helper()
		tx, err := s.Records(testRef)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tx.Get("notes/one")
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	for i := range 2 {
		var body noteBody
		if err := get().Decode(&body); err != nil || body.Title != "t" || body.N != 1 {
			t.Fatalf("read %d: body = %+v, %v", i+1, body, err)
		}
	}
	// The body a caller changed after the read is checked afresh: a field
	// in another case is refused, though this type read back before.
	r := get()
	r.Body = []byte(`{"N":1,"tags":[],"title":"t"}`)
	if err := r.Decode(&noteBody{}); !refusal.Named(err, "RecordMalformed") {
		t.Fatalf("Decode of a changed body = %v, want RecordMalformed", err)
	}
}
