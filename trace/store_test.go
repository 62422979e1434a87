package trace_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/gitstore/memstore"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/refusal"
	"github.com/nwdes/nwdes/trace"
)

func openStore(t testing.TB, dir string) *gitstore.Store {
	t.Helper()
	loc, err := gitrepo.Discover(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := gitstore.NewRegistry(trace.Register)
	if err != nil {
		t.Fatal(err)
	}
	st, err := gitstore.Open(loc, gitstore.Options{Registry: reg,
		Now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// newTraces is a trace store in memory, for what is not about git.
func newTraces(t testing.TB) *trace.Store {
	t.Helper()
	reg, err := gitstore.NewRegistry(trace.Register)
	if err != nil {
		t.Fatal(err)
	}
	st, err := memstore.New(memstore.Options{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	return &trace.Store{Store: st}
}

// gitTraces is a trace store in a real repository, for what git reads,
// tampers with or checks (fsck).
func gitTraces(t testing.TB) *trace.Store {
	t.Helper()
	return &trace.Store{Store: openStore(t, gittest.Init(t, false))}
}

func gitOf(ts *trace.Store) *gitstore.Store { return ts.Store.(*gitstore.Store) }

func tip(t testing.TB, ts *trace.Store, name string) string {
	t.Helper()
	ref, err := trace.Ref(name)
	if err != nil {
		t.Fatal(err)
	}
	id, err := ts.Store.Tip(ref)
	if err != nil {
		t.Fatal(err)
	}
	return id.String()
}

func mustAppend(t testing.TB, ts *trace.Store, name, session, attempt string, b []byte) *trace.StorageReceipt {
	t.Helper()
	r, err := ts.Append(context.Background(), name, session, attempt, b)
	if err != nil {
		t.Fatalf("append: %v", err)
	}
	return r
}

func TestTheTraceFamilyIsDeclaredFastForwardAndImmutable(t *testing.T) {
	t.Parallel()
	reg := gitstore.MustRegistry(trace.Register)
	spec, ok := reg.Ref("refs/nwdes/traces/ci")
	if !ok || spec.Policy != gitstore.PolicyFastForward || spec.History != gitstore.HistoryChain ||
		strings.Join(spec.Immutable, ",") != "bundles" || strings.Join(spec.Layout, ",") != "bundles" {
		t.Fatalf("refs/nwdes/traces/ci is declared %+v", spec)
	}
	if k, ok := reg.Kind(trace.KindBundle); !ok || k.Check == nil {
		t.Fatalf("kind %s is declared %+v", trace.KindBundle, k)
	}
}

func TestAnAppendedBundleReadsBackExactly(t *testing.T) {
	t.Parallel()
	ts := gitTraces(t)
	b := validBundle(t, "s-1", "a-1", 3)
	sr := mustAppend(t, ts, "ci", "s-1", "a-1", b)
	want := mustValidate(t, "s-1", "a-1", b)
	if sr.Receipt != want.ID() || sr.Store != "ci" || sr.Ref != "refs/nwdes/traces/ci" || sr.BundleSHA256 != sha(b) ||
		sr.FinalDigest != want.FinalDigest || sr.Count != 3 || !strings.HasPrefix(sr.Record, "bundles/"+strings.TrimPrefix(want.ID(), "sha256:")+"-") {
		t.Fatalf("storage receipt %+v", sr)
	}
	got, err := ts.Read("ci", sr.Receipt)
	if err != nil || !bytes.Equal(got, b) {
		t.Fatalf("read = %d bytes, %v", len(got), err)
	}
	list, err := ts.List("ci")
	if err != nil || len(list) != 1 {
		t.Fatalf("list = %+v, %v", list, err)
	}
	a, _ := list[0].Bytes()
	w, _ := sr.Bytes()
	if !bytes.Equal(a, w) {
		t.Fatalf("list gives\n%s\nappend gave\n%s", a, w)
	}
	rep, err := gitOf(ts).Fsck()
	if err != nil || !rep.OK() || rep.Records != 1 {
		t.Fatalf("fsck = %+v, %v", rep, err)
	}
}

func TestTheCallersBufferIsNotReadAfterAppendReturns(t *testing.T) {
	t.Parallel()
	ts := newTraces(t)
	b := validBundle(t, "s", "a", 1)
	orig := bytes.Clone(b)
	sr := mustAppend(t, ts, "ci", "s", "a", b)
	for i := range b {
		b[i] = ' '
	}
	if got, err := ts.Read("ci", sr.Receipt); err != nil || !bytes.Equal(got, orig) {
		t.Fatalf("read = %v", err)
	}
}

func TestAnIdenticalReplayReturnsTheSameReceiptAndAddsNothing(t *testing.T) {
	t.Parallel()
	ts := newTraces(t)
	b := validBundle(t, "s", "a", 2)
	first := mustAppend(t, ts, "ci", "s", "a", b)
	before := tip(t, ts, "ci")
	again := mustAppend(t, ts, "ci", "s", "a", bytes.Clone(b))
	x, _ := first.Bytes()
	y, _ := again.Bytes()
	if !bytes.Equal(x, y) {
		t.Fatalf("replay gave another receipt:\n%s\n%s", x, y)
	}
	if after := tip(t, ts, "ci"); after != before {
		t.Fatalf("replay moved the ref from %s to %s", before, after)
	}
}

func TestOneSessionAndAttemptMayHoldSeveralBundles(t *testing.T) {
	t.Parallel()
	ts := newTraces(t)
	mustAppend(t, ts, "ci", "s", "a", validBundle(t, "s", "a", 1))
	mustAppend(t, ts, "ci", "s", "a", validBundle(t, "s", "a", 2))
	mustAppend(t, ts, "ci", "s", "b", validBundle(t, "s", "b", 1))
	list, err := ts.List("ci")
	if err != nil || len(list) != 3 {
		t.Fatalf("list = %+v, %v", list, err)
	}
	if list[0].Attempt != "a" || list[1].Attempt != "a" || list[2].Attempt != "b" || list[0].FinalDigest > list[1].FinalDigest {
		t.Fatalf("list is not sorted by session, attempt, final digest: %+v", list)
	}
}

func TestStoresOfDifferentNamesAreApart(t *testing.T) {
	t.Parallel()
	ts := newTraces(t)
	sr := mustAppend(t, ts, "one", "s", "a", validBundle(t, "s", "a", 1))
	if _, err := ts.Read("two", sr.Receipt); !refusal.Named(err, refusal.ReceiptMismatch) {
		t.Fatalf("read from another store: %v", err)
	}
	if list, err := ts.List("two"); err != nil || len(list) != 0 {
		t.Fatalf("list of an empty store = %v, %v", list, err)
	}
}

func TestAnInvalidAppendWritesNothing(t *testing.T) {
	t.Parallel()
	ts := newTraces(t)
	_, err := ts.Append(context.Background(), "ci", "s", "other", validBundle(t, "s", "a", 1))
	if !refusal.Named(err, refusal.TraceInvalid) {
		t.Fatalf("err = %v", err)
	}
	if got := tip(t, ts, "ci"); got != strings.Repeat("0", len(got)) {
		t.Fatalf("the ref moved to %s", got)
	}
}

func TestABadStoreNameIsRefused(t *testing.T) {
	t.Parallel()
	ts := newTraces(t)
	for _, name := range []string{"", "a/b", "..", "x.lock", "-x", strings.Repeat("n", 65)} {
		if _, err := ts.Append(context.Background(), name, "s", "a", validBundle(t, "s", "a", 1)); !refusal.Named(err, refusal.RefNameInvalid) {
			t.Errorf("name %q: %v", name, err)
		}
	}
}

func TestAFullStoreRefusesAndEvictsNothing(t *testing.T) {
	t.Parallel()
	ts := newTraces(t)
	ts.MaxRecords = 2
	first := validBundle(t, "s", "a", 1)
	mustAppend(t, ts, "ci", "s", "a", first)
	mustAppend(t, ts, "ci", "s", "a", validBundle(t, "s", "a", 2))
	before := tip(t, ts, "ci")
	_, err := ts.Append(context.Background(), "ci", "s", "a", validBundle(t, "s", "a", 3))
	if r, ok := refusal.As(err); !ok || r.Name != refusal.TraceStoreFull || r.Class != refusal.Refused {
		t.Fatalf("err = %v", err)
	}
	if tip(t, ts, "ci") != before {
		t.Fatal("a refused append moved the ref")
	}
	mustAppend(t, ts, "ci", "s", "a", first) // a replay still answers
	if list, _ := ts.List("ci"); len(list) != 2 {
		t.Fatalf("store holds %d records", len(list))
	}
}

func TestAStorePastItsByteLimitRefuses(t *testing.T) {
	t.Parallel()
	ts := newTraces(t)
	sr := mustAppend(t, ts, "ci", "s", "a", validBundle(t, "s", "a", 1))
	ts.MaxTotalBytes = int64(sr.RecordBytes) + 100
	_, err := ts.Append(context.Background(), "ci", "s", "a", validBundle(t, "s", "a", 2))
	if !refusal.Named(err, refusal.TraceStoreFull) {
		t.Fatalf("err = %v", err)
	}
}

func TestARecordOverTheRecordLimitIsRefused(t *testing.T) {
	t.Parallel()
	ts := newTraces(t)
	ts.MaxRecordBytes = 1000
	_, err := ts.Append(context.Background(), "ci", "s", "a", validBundle(t, "s", "a", 2))
	if !refusal.Named(err, refusal.RecordTooLarge) {
		t.Fatalf("err = %v", err)
	}
}

func TestABundleAtTheSizeLimitFitsOneRecord(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds a bundle of 1 MiB")
	}
	ts := newTraces(t)
	d := newDoc("s", "a", 1)
	f := fact(d, 1, trace.FactTool)
	b := encode(t, d)
	f["value"] = strings.Repeat("x", trace.MaxBundleBytes-len(b)+len(`"go test"`)-2)
	rechain(d)
	b = encode(t, d)
	if len(b) != trace.MaxBundleBytes {
		t.Fatalf("built %d bytes, want %d", len(b), trace.MaxBundleBytes)
	}
	sr := mustAppend(t, ts, "ci", "s", "a", b)
	if sr.RecordBytes > trace.DefaultMaxRecordBytes {
		t.Fatalf("record of %d bytes", sr.RecordBytes)
	}
}

// tamper rewrites a stored bundle's payload in place, as a process
// writing the ref's tree behind nwdes's back would: the tip commit is
// made again with the changed bytes, and the clone's checkpoint is gone
// (a clone that never read the store before), so that only the receipt
// can tell.
func tamper(t *testing.T, ts *trace.Store, sr *trace.StorageReceipt, b []byte) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "bundle")
	if err := os.WriteFile(f, b, 0o644); err != nil {
		t.Fatal(err)
	}
	amendTip(t, ts, sr.Ref, false, `
b=$(git hash-object -w "`+f+`")
GIT_INDEX_FILE=.git/tmpidx git update-index --cacheinfo 100644,$b,`+sr.Record+`/payload/bundle`)
}

// amendTip makes ref's tip commit again (same parent; none when root is
// set, as if the history were made again in one commit) with the tree the
// script leaves in .git/tmpidx (read from the tip first), and deletes the
// ref's checkpoint.
func amendTip(t *testing.T, ts *trace.Store, ref gitstore.RefName, root bool, script string) {
	t.Helper()
	cmd := exec.Command("sh", "-ec", `
git read-tree --index-output=.git/tmpidx "$L"`+script+`
tree=$(GIT_INDEX_FILE=.git/tmpidx git write-tree)
if [ -z "$ROOT" ] && p=$(git rev-parse -q --verify "$L^"); then c=$(git commit-tree -m amend -p "$p" "$tree"); else c=$(git commit-tree -m amend "$tree"); fi
git update-ref "$L" "$c"
git update-ref -d "$CP"`)
	dir := gitOf(ts).Location().WorkTree
	cmd.Dir = dir
	cmd.Env = append(gittest.Env(filepath.Dir(dir)), "L="+string(ref), "CP="+string(gitstore.CheckpointRef(ref)))
	if root {
		cmd.Env = append(cmd.Env, "ROOT=1")
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

func TestATamperedBundleIsRefusedOnReadAndNamedByFsck(t *testing.T) {
	t.Parallel()
	for name, change := range map[string]func(t *testing.T, b []byte) []byte{
		"a byte flipped": func(_ *testing.T, b []byte) []byte {
			c := bytes.Clone(b)
			c[len(c)/2] ^= 1
			return c
		},
		"rehashed and resealed": func(t *testing.T, _ []byte) []byte {
			d := newDoc("s", "a", 2)
			fact(d, 1, trace.FactIdentity)["value"] = "worker-9"
			rechain(d)
			return encode(t, d)
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ts := gitTraces(t)
			b := validBundle(t, "s", "a", 2)
			sr := mustAppend(t, ts, "ci", "s", "a", b)
			tamper(t, ts, sr, change(t, b))
			if _, err := ts.Read("ci", sr.Receipt); !refusal.Named(err, refusal.ReceiptMismatch) {
				t.Fatalf("read: %v", err)
			}
			if _, err := ts.Append(context.Background(), "ci", "s", "a", b); !refusal.Named(err, refusal.ReceiptMismatch) {
				t.Fatalf("replay over a tampered record: %v", err)
			}
			rep, err := gitOf(ts).Fsck()
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, p := range rep.Problems {
				if p.Path == sr.Record+"/record.json" && strings.Contains(p.What, refusal.ReceiptMismatch) {
					found = true
				}
			}
			if !found {
				t.Fatalf("fsck does not name %s: %+v", sr.Record, rep.Problems)
			}
		})
	}
}

func TestARecordMovedToAnotherNameIsNamedByFsck(t *testing.T) {
	t.Parallel()
	ts := gitTraces(t)
	sr := mustAppend(t, ts, "ci", "s", "a", validBundle(t, "s", "a", 1))
	other := mustAppend(t, ts, "ci", "s", "a", validBundle(t, "s", "a", 2))
	amendTip(t, ts, sr.Ref, true, `
GIT_INDEX_FILE=.git/tmpidx git rm -q --cached -r `+sr.Record+`
GIT_INDEX_FILE=.git/tmpidx git read-tree --prefix=`+sr.Record+`/ "$L:`+other.Record+`"`)
	if _, err := ts.Read("ci", sr.Receipt); !refusal.Named(err, refusal.ReceiptMismatch) {
		t.Fatalf("read: %v", err)
	}
	rep, _ := gitOf(ts).Fsck()
	if rep.OK() || !strings.Contains(fmt.Sprint(rep.Problems), sr.Record) {
		t.Fatalf("fsck: %+v", rep.Problems)
	}
}

func TestAnUnknownReceiptIsRefused(t *testing.T) {
	t.Parallel()
	ts := newTraces(t)
	mustAppend(t, ts, "ci", "s", "a", validBundle(t, "s", "a", 1))
	for _, r := range []string{sha([]byte("nothing")), "abc", ""} {
		if _, err := ts.Read("ci", r); !refusal.Named(err, refusal.ReceiptMismatch) {
			t.Errorf("read %q: %v", r, err)
		}
	}
}

func TestConcurrentAppendsLoseNothing(t *testing.T) {
	t.Parallel()
	dir := gittest.Init(t, false)
	const writers, each = 6, 4
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	want := map[string]bool{}
	var mu sync.Mutex
	for w := range writers {
		ts := &trace.Store{Store: openStore(t, dir)} // one store each, as separate processes
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				session := fmt.Sprintf("w%d", w)
				attempt := fmt.Sprintf("a%d", i)
				d := newDoc(session, attempt, 1+i%3)
				b, err := gitstore.Canonical(d)
				if err != nil {
					errs <- err
					return
				}
				sr, err := ts.Append(context.Background(), "ci", session, attempt, b)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				want[sr.Receipt] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	ts := &trace.Store{Store: openStore(t, dir)}
	list, err := ts.List("ci")
	if err != nil || len(list) != writers*each {
		t.Fatalf("list holds %d records, want %d (%v)", len(list), writers*each, err)
	}
	for _, e := range list {
		delete(want, e.Receipt)
	}
	if len(want) != 0 {
		t.Fatalf("lost %v", want)
	}
	n := 0
	ref, _ := trace.Ref("ci")
	if err := ts.Store.Log(ref, func(gitstore.Entry) bool { n++; return true }); err != nil || n != writers*each {
		t.Fatalf("history holds %d commits, want one per append (%v)", n, err)
	}
}

func TestWriteOutCreatesANewReadOnlyFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "trace.json")
	if err := trace.WriteOut([]byte("bytes"), p); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(p)
	if err != nil || fi.Mode() != 0o400 {
		t.Fatalf("mode %v, %v", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(p); string(b) != "bytes" {
		t.Fatalf("wrote %q", b)
	}
	if err := trace.WriteOut([]byte("again"), p); !refusal.Named(err, refusal.OutputExists) {
		t.Fatalf("over an existing file: %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "bytes" {
		t.Fatalf("the existing file now holds %q", b)
	}
}

func TestWriteOutFollowsNoSymbolicLink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Skip(err)
	}
	if err := trace.WriteOut([]byte("x"), link); !refusal.Named(err, refusal.OutputExists) {
		t.Fatalf("through a dangling link: %v", err)
	}
	if _, err := os.Lstat(target); !os.IsNotExist(err) {
		t.Fatalf("the link's target was created: %v", err)
	}
}

func TestAFastForwardThatRemovesABundleIsRefusedByListReadAndFsck(t *testing.T) {
	t.Parallel()
	ts := gitTraces(t)
	gone := mustAppend(t, ts, "ci", "s", "a", validBundle(t, "s", "a", 1))
	kept := mustAppend(t, ts, "ci", "s", "a", validBundle(t, "s", "a", 2))
	cmd := exec.Command("sh", "-ec", `
git read-tree --index-output=.git/tmpidx "$L"
GIT_INDEX_FILE=.git/tmpidx git rm -q --cached -r "$P"
git update-ref "$L" $(git commit-tree -m drop -p $(git rev-parse "$L") $(GIT_INDEX_FILE=.git/tmpidx git write-tree))`)
	dir := gitOf(ts).Location().WorkTree
	cmd.Dir = dir
	cmd.Env = append(gittest.Env(filepath.Dir(dir)), "L="+string(gone.Ref), "P="+gone.Record)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	fresh := &trace.Store{Store: openStore(t, dir)}
	if _, err := fresh.List("ci"); !refusal.Named(err, refusal.HistoryRewritten) || !strings.Contains(err.Error(), gone.Record) {
		t.Fatalf("list: %v", err)
	}
	if _, err := fresh.Read("ci", kept.Receipt); !refusal.Named(err, refusal.HistoryRewritten) {
		t.Fatalf("read: %v", err)
	}
	rep, err := gitOf(fresh).Fsck()
	if err != nil || !strings.Contains(fmt.Sprint(rep.Problems), gone.Record) {
		t.Fatalf("fsck: %+v %v", rep, err)
	}
}
