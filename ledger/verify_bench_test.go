package ledger_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/ledger"
)

// BenchmarkLedgerVerify runs `git nwdes ledger verify` (built as make build
// builds it) on a ledger of n entries, one commit each as Append makes
// them, packed by git gc, against its twin: git reading every object of the
// same history (`git rev-list --objects | git cat-file --batch`), the two
// alternating. The goal (issue 26) is a ratio of at most 3, flat from 1k
// to 10k entries.
func BenchmarkLedgerVerify(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			dir := b.TempDir()
			bin := filepath.Join(dir, "git-nwdes")
			if err := gittest.BuildNwdes(bin); err != nil {
				b.Fatal(err)
			}
			repo := filepath.Join(dir, "repo")
			ledgerRepo(b, repo, "bench", n)
			ref := string(ledger.Family) + "bench"
			twin := "git rev-list --objects --no-object-names " + ref + " | git cat-file --batch >/dev/null"
			gittest.Alternate(b, repo, gittest.Env(dir), []string{"nwdes", "git"},
				[]string{bin, "ledger", "verify", "--ledger", "bench"}, []string{"sh", "-c", twin})
		})
	}
}

// ledgerRepo makes repo with ledger name of n entries, written by git
// fast-import one commit per entry (the records Append would write), then
// packed by git gc.
func ledgerRepo(b *testing.B, repo, name string, n int) {
	b.Helper()
	if err := os.MkdirAll(repo, 0o755); err != nil {
		b.Fatal(err)
	}
	git := func(stdin []byte, args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = repo, gittest.Env(filepath.Dir(repo))
		cmd.Stdin = bytes.NewReader(stdin)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	git(nil, "init", "-q", "-b", "main")
	var s bytes.Buffer
	prev := ledger.Genesis
	for seq := 1; seq <= n; seq++ {
		ev := json.RawMessage(fmt.Sprintf(`{"run":%d,"verdict":"pass"}`, seq))
		link, err := gitstore.Canonical(struct {
			Event json.RawMessage `json:"event"`
			Prev  string          `json:"prev"`
			Seq   int             `json:"seq"`
		}{ev, prev, seq})
		if err != nil {
			b.Fatal(err)
		}
		d := sha256.Sum256(link)
		e := ledger.Entry{Seq: seq, Prev: prev, Event: ev, Digest: hex.EncodeToString(d[:])}
		rec, err := gitstore.NewRecord(ledger.KindEntry, 1, e)
		if err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(&s, "commit %s%s\ncommitter nwdes <nwdes@localhost> %d +0000\ndata 7\nappend\n", ledger.Family, name, 1767225600+seq)
		js, err := rec.JSON()
		if err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(&s, "M 100644 inline entries/%06x/%010d/record.json\ndata %d\n%s\n", seq>>8, seq, len(js), js)
		prev = e.Digest
	}
	git(s.Bytes(), "fast-import", "--quiet")
	git(nil, "gc", "-q", "--prune=now")
}

// BenchmarkLedgerVerifyInProcess is ledger.Verify of a 1,000-entry ledger
// in a warm process, without the process start: what to profile. Each
// verification opens its own store, as the command does, so that no
// object or tree one read is there for the next.
func BenchmarkLedgerVerifyInProcess(b *testing.B) {
	repo := filepath.Join(b.TempDir(), "repo")
	ledgerRepo(b, repo, "bench", 1000)
	reg, err := gitstore.NewRegistry(ledger.Register)
	if err != nil {
		b.Fatal(err)
	}
	loc, err := gitrepo.Discover(repo, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	defer gittest.CPUPerOp(b)()
	for i := 0; i < b.N; i++ {
		st, err := gitstore.Open(loc, gitstore.Options{Registry: reg})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ledger.Verify(st, "bench"); err != nil {
			b.Fatal(err)
		}
		st.Close()
	}
}
