package ledger_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/ledger"
	"github.com/nwdes/nwdes/refusal"
)

// git runs a shell script in dir (no $L preset).
func git15(t *testing.T, dir, script string) {
	t.Helper()
	cmd := exec.Command("sh", "-ec", script)
	cmd.Dir = dir
	cmd.Env = gittest.Env(filepath.Dir(dir))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
}

func appendAll(t *testing.T, dir string, ledgerName string, events ...string) {
	t.Helper()
	st := open(t, dir)
	for _, e := range events {
		if _, err := ledger.Append(context.Background(), st, ledgerName, []byte(e)); err != nil {
			t.Fatal(err)
		}
	}
}

// fsck caches what it has checked by path and tree id across every ref,
// but a ledger entry's (and a seal's) check depends on its neighbours. A
// second ledger that shares records with a first one is then not checked:
// damage to it that verify names, fsck does not.
func TestFsckChecksALedgerThatSharesRecordsWithAnother(t *testing.T) {
	e1, e2 := `{"at":"2026-01-01T00:00:01Z","n":1}`, `{"at":"2026-01-01T00:00:02Z","n":2}`
	t.Run("entry 1 replaced by a self-consistent one", func(t *testing.T) {
		dir := gittest.Init(t, false)
		appendAll(t, dir, "a", e1, e2)
		appendAll(t, dir, "b", e1, e2)
		appendAll(t, dir, "c", `{"at":"2026-01-01T00:00:01Z","n":"forged"}`)
		// b's entry 1 becomes c's entry 1 (a valid entry 1 with its own
		// digest): b's entry 2 no longer follows it.
		git15(t, dir, `
B=refs/nwdes/ledgers/b
git read-tree --index-output=.git/tmpidx "$B"
GIT_INDEX_FILE=.git/tmpidx git rm -q --cached -r entries/000000/0000000001
GIT_INDEX_FILE=.git/tmpidx git update-index --add --cacheinfo 100644,$(git rev-parse refs/nwdes/ledgers/c:entries/000000/0000000001/record.json),entries/000000/0000000001/record.json
tree=$(GIT_INDEX_FILE=.git/tmpidx git write-tree)
git update-ref "$B" $(git commit-tree -m edit -p $(git rev-parse "$B") "$tree")
git update-ref -d refs/nwdes/ledgers/c`)
		st := open(t, dir)
		if _, err := ledger.Verify(st, "b"); name(err) != refusal.LedgerBroken {
			t.Fatalf("verify b: %v", err)
		}
		rep, err := st.Fsck()
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, p := range rep.Problems {
			if strings.Contains(string(p.Ref), "ledgers/b") {
				found = true
			}
		}
		if !found {
			t.Fatalf("fsck names nothing wrong with ledger b, which verify calls broken: %+v", rep.Problems)
		}
	})
	t.Run("an entry after the seal", func(t *testing.T) {
		dir := gittest.Init(t, false)
		appendAll(t, dir, "a", e1, e2)
		appendAll(t, dir, "b", e1, e2)
		appendAll(t, dir, "c", e1, e2, `{"at":"2026-01-01T00:00:03Z","n":3}`)
		st := open(t, dir)
		at := time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)
		for _, l := range []string{"a", "b"} {
			if _, err := ledger.SealLedger(context.Background(), st, l, at); err != nil {
				t.Fatal(err)
			}
		}
		// c's entry 3 (chained on the same entry 2) added to sealed b.
		git15(t, dir, `
B=refs/nwdes/ledgers/b
git read-tree --index-output=.git/tmpidx "$B"
GIT_INDEX_FILE=.git/tmpidx git update-index --add --cacheinfo 100644,$(git rev-parse refs/nwdes/ledgers/c:entries/000000/0000000003/record.json),entries/000000/0000000003/record.json
tree=$(GIT_INDEX_FILE=.git/tmpidx git write-tree)
git update-ref "$B" $(git commit-tree -m extend -p $(git rev-parse "$B") "$tree")
git update-ref -d refs/nwdes/ledgers/c`)
		st = open(t, dir)
		if _, err := ledger.Verify(st, "b"); name(err) != refusal.LedgerBroken {
			t.Fatalf("verify b: %v", err)
		}
		rep, err := st.Fsck()
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, p := range rep.Problems {
			if strings.Contains(string(p.Ref), "ledgers/b") {
				found = true
			}
		}
		if !found {
			t.Fatalf("fsck names nothing wrong with sealed ledger b holding an entry after its seal: %+v", rep.Problems)
		}
	})
}

// Append checks only the last entry and its link; a ledger that verify
// calls broken elsewhere is written on, and a seal removed by a commit on
// top lets nwdes itself append after the seal.
func TestNothingIsAppendedOnALedgerThatDoesNotVerify(t *testing.T) {
	for _, c := range []struct{ name, script string }{
		{"the seal removed by a commit on top", `SEAL`},
		{"entry 1 edited", `
p=entries/000000/0000000001/record.json
new=$(git cat-file blob "$L:$p" | sed 's/"n":1/"n":9/' | git hash-object -w --stdin)
git read-tree --index-output=.git/tmpidx "$L"
GIT_INDEX_FILE=.git/tmpidx git update-index --cacheinfo 100644,$new,$p
git update-ref "$L" $(git commit-tree -m edit -p $(git rev-parse "$L") $(GIT_INDEX_FILE=.git/tmpidx git write-tree))`},
		{"the first entries removed by a commit on top", `
git read-tree --index-output=.git/tmpidx "$L"
GIT_INDEX_FILE=.git/tmpidx git rm -q --cached -r entries/000000/0000000001
git update-ref "$L" $(git commit-tree -m drop -p $(git rev-parse "$L") $(GIT_INDEX_FILE=.git/tmpidx git write-tree))`},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, st := withEntries(t, 3)
			script := c.script
			if script == "SEAL" {
				if _, err := ledger.SealLedger(context.Background(), st, "trial", time.Now()); err != nil {
					t.Fatal(err)
				}
				script = `
git read-tree --index-output=.git/tmpidx "$L"
GIT_INDEX_FILE=.git/tmpidx git rm -q --cached -r seal
git update-ref "$L" $(git commit-tree -m unseal -p $(git rev-parse "$L") $(GIT_INDEX_FILE=.git/tmpidx git write-tree))`
			}
			rewrite(t, dir, script)
			st = open(t, dir)
			if _, err := ledger.Verify(st, "trial"); name(err) != refusal.LedgerBroken {
				t.Fatalf("verify: %v", err)
			}
			tip, _ := st.Tip("refs/nwdes/ledgers/trial")
			_, err := ledger.Append(context.Background(), st, "trial", []byte(`{"after":1}`))
			if name(err) != refusal.LedgerBroken && name(err) != refusal.LedgerSealed {
				t.Errorf("an append on a ledger verify calls broken: %v (want LedgerBroken)", err)
			}
			if now, _ := st.Tip("refs/nwdes/ledgers/trial"); now != tip {
				t.Error("the append moved the broken ledger")
			}
		})
	}
}

// SealLedger seals an empty ledger (count 0, final the genesis digest, a
// case chain handles on purpose), but Verify then calls what nwdes itself
// wrote broken: its first commit holds the seal, not entry 1.
func TestAnEmptyLedgerNwdesSealedVerifies(t *testing.T) {
	dir := gittest.Init(t, false)
	st := open(t, dir)
	s, err := ledger.SealLedger(context.Background(), st, "empty", time.Now())
	if err != nil {
		t.Skipf("sealing an empty ledger is refused (fine): %v", err)
	}
	if s.Count != 0 {
		t.Fatalf("%+v", s)
	}
	if rep, err := ledger.Verify(st, "empty"); err != nil {
		t.Fatalf("verify of the empty ledger nwdes sealed: %v", err)
	} else if !rep.Sealed || rep.Entries != 0 {
		t.Fatalf("%+v", rep)
	}
	if rep, err := st.Fsck(); err != nil || !rep.OK() {
		t.Fatalf("fsck: %+v %v", rep, err)
	}
}
