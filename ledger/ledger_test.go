package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/gitstore/memstore"
	gitremote "github.com/nwdes/nwdes/gitstore/remote"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/ledger"
	"github.com/nwdes/nwdes/refusal"
)

func open(t testing.TB, dir string) *gitstore.Store {
	t.Helper()
	loc, err := gitrepo.Discover(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := gitstore.NewRegistry(ledger.Register)
	if err != nil {
		t.Fatal(err)
	}
	st, err := gitstore.Open(loc, gitstore.Options{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// inMemory is a store for what is not about git: ledger's own rules.
func inMemory(t *testing.T) *memstore.Store {
	t.Helper()
	reg, err := gitstore.NewRegistry(ledger.Register)
	if err != nil {
		t.Fatal(err)
	}
	st, err := memstore.New(memstore.Options{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func appendN(t *testing.T, st ledger.Store, n int) {
	t.Helper()
	for i := 1; i <= n; i++ {
		if _, err := ledger.Append(context.Background(), st, "trial", []byte(fmt.Sprintf(`{"n": %d, "kind": "step", "at": "2026-01-01T00:00:0%dZ"}`, i, i%10))); err != nil {
			t.Fatal(err)
		}
	}
}

func name(err error) string {
	var r *refusal.Error
	if errors.As(err, &r) {
		return r.Name
	}
	return ""
}

// withEntries makes a repository with a ledger "trial" of n entries.
func withEntries(t *testing.T, n int) (string, *gitstore.Store) {
	t.Helper()
	dir := gittest.Init(t, false)
	st := open(t, dir)
	appendN(t, st, n)
	return dir, st
}

func TestAppendChainsEveryEntryAndVerifyRederivesIt(t *testing.T) {
	dir, st := withEntries(t, 5)
	entries, seal, err := ledger.Entries(st, "trial")
	if err != nil || seal != nil || len(entries) != 5 {
		t.Fatalf("entries: %d %v %v", len(entries), seal, err)
	}
	prev := ledger.Genesis
	for i, e := range entries {
		if e.Seq != i+1 || e.Prev != prev || len(e.Digest) != 64 {
			t.Fatalf("entry %d: %+v", i+1, e)
		}
		prev = e.Digest
	}
	if string(entries[0].Event) != `{"at":"2026-01-01T00:00:01Z","kind":"step","n":1}` {
		t.Fatalf("the event is not stored canonical: %s", entries[0].Event)
	}
	rep, err := ledger.Verify(st, "trial")
	if err != nil || rep.Entries != 5 || rep.Commits != 5 || rep.Final != prev {
		t.Fatalf("verify: %+v %v", rep, err)
	}
	// One commit per entry, in a line, and git agrees the objects are sound.
	if n := gittest.Git(t, dir, "rev-list", "--count", "refs/nwdes/ledgers/trial"); n != "5" {
		t.Fatalf("%s commits", n)
	}
	gittest.Git(t, dir, "fsck", "--strict")

	// Sealed: the count and final digest recorded, appends refused.
	s, err := ledger.SealLedger(context.Background(), st, "trial", time.Now())
	if err != nil || s.Count != 5 || s.Final != prev {
		t.Fatalf("seal: %+v %v", s, err)
	}
	if _, err := ledger.Append(context.Background(), st, "trial", []byte(`{"late": true}`)); name(err) != refusal.LedgerSealed {
		t.Fatalf("an append after the seal: %v", err)
	}
	if rep, err := ledger.Verify(st, "trial"); err != nil || !rep.Sealed {
		t.Fatalf("verify of a sealed ledger: %+v %v", rep, err)
	}
}

func TestEventsThatAreNotOneJSONObjectAreRefused(t *testing.T) {
	st := inMemory(t)
	for _, ev := range []string{``, `[]`, `"x"`, `null`, `{"a":1} {"b":2}`, `{"a":1,"a":2}`, `{`, `{"a": [1, {"b": 1, "b": 2}]}`} {
		if _, err := ledger.Append(context.Background(), st, "l", []byte(ev)); name(err) != refusal.InputUnreadable {
			t.Errorf("event %q: %v", ev, err)
		}
	}
	if tip, _ := st.Tip("refs/nwdes/ledgers/l"); !tip.IsZero() {
		t.Fatal("a refused event wrote something")
	}
	for _, n := range []string{"", "a/b", "..", "x.lock", "-x"} {
		if _, err := ledger.Append(context.Background(), st, n, []byte(`{}`)); name(err) != refusal.RefNameInvalid {
			t.Errorf("ledger name %q: %v", n, err)
		}
	}
}

func TestTextThatIsNotUTF8IsRefusedNotMappedToTheReplacementCharacter(t *testing.T) {
	for _, ev := range []string{
		"{\"a\":\"\xff\"}",
		"{\"\xc3\":1}",
		`{"a":"\ud800"}`,
		`{"a":"\udc00"}`,
		`{"a":"\ud800x"}`,
		`{"a":"\ud800\u0041"}`,
		`{"a":["ok", "\uDBFF"]}`,
	} {
		if _, err := ledger.CanonicalEvent([]byte(ev)); name(err) != refusal.InputNotUTF8 {
			t.Errorf("event %q: %v", ev, err)
		}
	}
	for ev, want := range map[string]string{
		`{"a":"\ud83d\ude00"}`:   `{"a":"😀"}`,
		`{"a":"\\ud800"}`:        `{"a":"\\ud800"}`,
		`{"a":"\u00e9","b":"é"}`: `{"a":"é","b":"é"}`,
		"{\"a\":\"\uFFFD\"}":     "{\"a\":\"\uFFFD\"}",
	} {
		if c, err := ledger.CanonicalEvent([]byte(ev)); err != nil || string(c) != want {
			t.Errorf("event %q = %s, %v; want %s", ev, c, err, want)
		}
	}
}

func TestAnEventNestedTooDeeplyIsRefusedByThatName(t *testing.T) {
	at := func(n int) string { return `{"a":` + strings.Repeat("[", n-1) + strings.Repeat("]", n-1) + `}` }
	if _, err := ledger.CanonicalEvent([]byte(at(ledger.MaxEventDepth))); err != nil {
		t.Fatalf("an event %d levels deep: %v", ledger.MaxEventDepth, err)
	}
	for _, ev := range []string{at(ledger.MaxEventDepth + 1), at(20000), `{"a":"` + strings.Repeat("[", 100) + `"}`} {
		_, err := ledger.CanonicalEvent([]byte(ev))
		r, ok := refusal.As(err)
		if strings.HasPrefix(ev, `{"a":"`) {
			if err != nil {
				t.Errorf("brackets inside a string count as depth: %v", err)
			}
			continue
		}
		if !ok || r.Name != refusal.InputUnreadable || !strings.Contains(r.Detail, fmt.Sprintf("nests deeper than %d levels", ledger.MaxEventDepth)) {
			t.Errorf("an event %d bytes deep: %v", len(ev), err)
		}
	}
}

// rewrite runs a shell script in the repository with $L the ledger's ref,
// to damage it the way anyone with push access could, with git itself.
func rewrite(t *testing.T, dir, script string) {
	t.Helper()
	cmd := exec.Command("sh", "-ec", script)
	cmd.Dir = dir
	cmd.Env = append(gittest.Env(filepath.Dir(dir)), "L=refs/nwdes/ledgers/trial")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
}

// editEntry commits, on top of the ledger, a tree whose entry path holds
// other bytes (the same record, one character changed).
const editEntry = `
p=entries/000000/0000000002/record.json
old=$(git rev-parse "$L:$p")
new=$(git cat-file blob "$old" | sed 's/"n":2/"n":9/' | git hash-object -w --stdin)
git read-tree --index-output=.git/tmpidx "$L"
GIT_INDEX_FILE=.git/tmpidx git update-index --cacheinfo 100644,$new,$p
tree=$(GIT_INDEX_FILE=.git/tmpidx git write-tree)
`

func TestEveryKindOfTamperingIsNamedByVerifyAndFsck(t *testing.T) {
	for _, c := range []struct {
		name, script, verify string
		fsck                 bool
	}{
		{"an entry edited in place (history rewritten)", editEntry + `
c=$(git commit-tree -m append -p $(git rev-parse "$L^") "$tree")
git update-ref "$L" "$c"`, "edited", true},
		{"an entry edited by a new commit on top", editEntry + `
c=$(git commit-tree -m append -p $(git rev-parse "$L") "$tree")
git update-ref "$L" "$c"`, "edited", true},
		{"an entry dropped", `
git read-tree --index-output=.git/tmpidx "$L"
GIT_INDEX_FILE=.git/tmpidx git rm -q --cached -r entries/000000/0000000003
tree=$(GIT_INDEX_FILE=.git/tmpidx git write-tree)
git update-ref "$L" $(git commit-tree -m drop -p $(git rev-parse "$L") "$tree")`, "dropped", true},
		{"two entries swapped", `
a=$(git rev-parse "$L:entries/000000/0000000002")
b=$(git rev-parse "$L:entries/000000/0000000003")
git read-tree --index-output=.git/tmpidx "$L"
GIT_INDEX_FILE=.git/tmpidx git rm -q --cached -r entries/000000/0000000002 entries/000000/0000000003
GIT_INDEX_FILE=.git/tmpidx git update-index --add --cacheinfo 100644,$(git rev-parse $b:record.json),entries/000000/0000000002/record.json
GIT_INDEX_FILE=.git/tmpidx git update-index --add --cacheinfo 100644,$(git rev-parse $a:record.json),entries/000000/0000000003/record.json
tree=$(GIT_INDEX_FILE=.git/tmpidx git write-tree)
git update-ref "$L" $(git commit-tree -m swap -p $(git rev-parse "$L") "$tree")`, "out of its place", true},
		{"the last entries truncated by a commit on top", `
git read-tree --index-output=.git/tmpidx "$L"
GIT_INDEX_FILE=.git/tmpidx git rm -q --cached -r entries/000000/0000000004 entries/000000/0000000005
tree=$(GIT_INDEX_FILE=.git/tmpidx git write-tree)
git update-ref "$L" $(git commit-tree -m truncate -p $(git rev-parse "$L") "$tree")`, "history rewritten", false},
		{"a foreign parent under the first entry", `
prev=$(git commit-tree -m foreign $(git hash-object -w -t tree /dev/null))
for c in $(git rev-list --reverse "$L"); do prev=$(git commit-tree -m append -p $prev $(git rev-parse "$c^{tree}")); done
git update-ref "$L" $prev`, "foreign parent", false},
		{"an entry appended by hand after the seal", `SEAL`, "out of its place", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, st := withEntries(t, 5)
			script := c.script
			if script == "SEAL" {
				if _, err := ledger.SealLedger(context.Background(), st, "trial", time.Now()); err != nil {
					t.Fatal(err)
				}
				// copy entry 5 as entry 6, by hand
				script = `
e=$(git rev-parse "$L:entries/000000/0000000005/record.json")
git read-tree --index-output=.git/tmpidx "$L"
GIT_INDEX_FILE=.git/tmpidx git update-index --add --cacheinfo 100644,$e,entries/000000/0000000006/record.json
tree=$(GIT_INDEX_FILE=.git/tmpidx git write-tree)
git update-ref "$L" $(git commit-tree -m extend -p $(git rev-parse "$L") "$tree")`
			}
			rewrite(t, dir, script)
			st = open(t, dir) // a fresh reader
			_, err := ledger.Verify(st, "trial")
			if name(err) != refusal.LedgerBroken || !strings.Contains(err.Error(), c.verify) {
				t.Fatalf("verify: %v, want LedgerBroken naming %q", err, c.verify)
			}
			if c.fsck {
				rep, err := st.Fsck()
				if err != nil || len(rep.Problems) == 0 {
					t.Fatalf("fsck names nothing: %+v %v", rep, err)
				}
			}
		})
	}
}

func TestALedgerOnlyMovesForwardBetweenClones(t *testing.T) {
	dir, st := withEntries(t, 2)
	bare := gittest.Init(t, true)
	gittest.Git(t, dir, "remote", "add", "origin", bare)
	sync := gitstore.SyncOptions{Environ: gittest.Env(os.TempDir())}
	if _, err := gitremote.New(st).Push(context.Background(), "origin", sync); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "other")
	gittest.Git(t, filepath.Dir(other), "clone", "-q", bare, other)
	ost := open(t, other)
	if _, err := gitremote.New(ost).Fetch(context.Background(), "origin", sync); err != nil {
		t.Fatal(err)
	}
	// Both clones append: the ledgers diverge, and that is refused, never merged.
	if _, err := ledger.Append(context.Background(), st, "trial", []byte(`{"by":"a"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := ledger.Append(context.Background(), ost, "trial", []byte(`{"by":"b"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := gitremote.New(st).Push(context.Background(), "origin", sync); err != nil {
		t.Fatal(err)
	}
	_, err := gitremote.New(ost).Fetch(context.Background(), "origin", sync)
	if name(err) != refusal.ChainDiverged {
		t.Fatalf("a diverged ledger: %v", err)
	}
}

func TestALedgerAcrossBucketsVerifies(t *testing.T) {
	if testing.Short() {
		t.Skip("600 appends")
	}
	st := inMemory(t)
	appendN(t, st, 600)
	rep, err := ledger.Verify(st, "trial")
	if err != nil || rep.Entries != 600 || rep.Commits != 600 {
		t.Fatalf("%+v %v", rep, err)
	}
}

func TestNothingIsAppendedOnALedgerWhoseLastEntryWasEdited(t *testing.T) {
	dir, st := withEntries(t, 2)
	rewrite(t, dir, `
p=entries/000000/0000000002/record.json
new=$(git cat-file blob "$L:$p" | sed 's/"n":2/"n":9/' | git hash-object -w --stdin)
git read-tree --index-output=.git/tmpidx "$L"
GIT_INDEX_FILE=.git/tmpidx git update-index --cacheinfo 100644,$new,$p
git update-ref "$L" $(git commit-tree -m edit -p $(git rev-parse "$L") $(GIT_INDEX_FILE=.git/tmpidx git write-tree))`)
	st = open(t, dir)
	tip, _ := st.Tip("refs/nwdes/ledgers/trial")
	if _, err := ledger.Append(context.Background(), st, "trial", []byte(`{"after":1}`)); name(err) != refusal.LedgerBroken {
		t.Fatalf("an append on an edited last entry: %v", err)
	}
	if now, _ := st.Tip("refs/nwdes/ledgers/trial"); now != tip {
		t.Fatal("a refused append moved the ledger")
	}
}

func TestALedgerMovedBackPastItsSealIsBrokenInOneRepository(t *testing.T) {
	for _, c := range []struct{ name, script string }{
		{"moved back past the seal and entry 5 appended again by hand", `
t=$(git rev-parse "$L~1^{tree}")
git update-ref "$L" $(git commit-tree -m append -p $(git rev-parse "$L~2") $t)`},
		{"moved back past the seal", `git update-ref "$L" "$L~1"`},
		{"rebuilt from entry 1", `
prev=
for c in $(git rev-list --reverse "$L~1"); do prev=$(git commit-tree -m append ${prev:+-p $prev} $(git rev-parse "$c^{tree}")); done
git update-ref "$L" $prev`},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, st := withEntries(t, 5)
			if _, err := ledger.SealLedger(context.Background(), st, "trial", time.Now()); err != nil {
				t.Fatal(err)
			}
			rewrite(t, dir, c.script)
			st = open(t, dir)
			if _, err := ledger.Verify(st, "trial"); name(err) != refusal.LedgerBroken || !errors.Is(err, &refusal.Error{Name: refusal.HistoryRewritten}) {
				t.Fatalf("verify: %v, want LedgerBroken (history rewritten)", err)
			}
			if _, err := ledger.Append(context.Background(), st, "trial", []byte(`{"after":1}`)); name(err) != refusal.LedgerBroken {
				t.Fatalf("append: %v, want LedgerBroken", err)
			}
			rep, err := st.Fsck()
			if err != nil || rep.OK() {
				t.Fatalf("fsck names nothing: %+v %v", rep, err)
			}
		})
	}
}
