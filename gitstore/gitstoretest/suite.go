package gitstoretest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/nwdes/nwdes/gitstore/oid"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/refusal"
)

// Records is the record and note half of the roles: what any store plays,
// the in-memory one included.
type Records interface {
	gitstore.RecordWriter
	gitstore.NoteKeeper
}

// Store is every role the suite checks: Records, and replication, which
// only a git store plays.
type Store interface {
	Records
	gitstore.Replicator
}

// Harness opens the git implementation under test.
type Harness struct {
	// Open returns a store on the repository at dir declared with reg. The
	// suite may open one directory more than once, as separate processes
	// would.
	Open func(t *testing.T, dir string, reg *gitstore.Registry) Store
}

// RecordHarness opens an implementation of the record and note half.
type RecordHarness struct {
	// Open returns a store at dir declared with reg; opening one dir
	// twice gives two handles on one state, as two processes on one
	// repository have.
	Open func(t *testing.T, dir string, reg *gitstore.Registry) Records
	// Git says the store keeps a git repository at dir: the suite then
	// makes dir a real repository and reads what was written with git as
	// well (git fsck --strict, git notes show). Otherwise dir is an empty
	// temporary directory, no more than the state's name.
	Git bool
}

// The refs and kind Registry declares.
const (
	// Kind is the one record kind the suite writes.
	Kind = gitstore.Kind("conformance.note")
	// MergeRef is merged between clones.
	MergeRef = gitstore.RefName("refs/nwdes/conformance")
	// LedgerRef moves fast-forward only.
	LedgerRef = gitstore.RefName("refs/nwdes/conformance-ledger")
	// LeaseRef is a swap ref that keeps no history.
	LeaseRef = gitstore.RefName("refs/nwdes/conformance-leases/task-1")
	// LocalRef never leaves its clone and keeps no history.
	LocalRef = gitstore.RefName("refs/nwdes-local/conformance-heartbeat")
	// ArchiveRef holds only published/ and drafts/, and what is published
	// is never changed or removed.
	ArchiveRef = gitstore.RefName("refs/nwdes/conformance-archive")
)

// Body is the body of the suite's records.
type Body struct {
	Title string `json:"title"`
	N     int    `json:"n"`
}

// Registry declares the suite's kind and one ref of each policy.
func Registry(t testing.TB) *gitstore.Registry {
	t.Helper()
	reg, err := gitstore.NewRegistry(func(r *gitstore.Registry) error {
		if err := r.DeclareKind(gitstore.KindSpec{Kind: Kind, Version: 1}); err != nil {
			return err
		}
		for _, spec := range []gitstore.RefSpec{
			{Ref: MergeRef, Policy: gitstore.PolicyMerge},
			{Ref: LedgerRef, Policy: gitstore.PolicyFastForward},
			{Ref: "refs/nwdes/conformance-leases/", Policy: gitstore.PolicySwap}, // latest-only by default
			{Ref: LocalRef, Policy: gitstore.PolicyLocal, History: gitstore.HistoryLatest},
			{Ref: ArchiveRef, Policy: gitstore.PolicyMerge, Layout: []string{"published", "drafts"}, Immutable: []string{"published"}},
		} {
			if err := r.DeclareRef(spec); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

type check struct {
	name string
	fn   func(*testing.T, *suite)
}

// recordChecks are the record and note half: every store passes them.
var recordChecks = []check{
	{"RecordsRoundTripByteForByte", recordsRoundTrip},
	{"AnAbsentRecordIsNotFound", absentIsNotFound},
	{"AnUpdateThatStagesNothingOrFailsWritesNothing", nothingWritten},
	{"NoRetryRefusesAConflictAndRetryRerunsFn", compareAndSwap},
	{"ConcurrentWritersLoseNoUpdate", concurrentWriters},
	{"UndeclaredRefsAndKindsAreRefused", undeclared},
	{"LatestOnlyRefsKeepNoChain", latestOnly},
	{"NotesAreWhatGitReads", notes},
	{"LayoutAndImmutableDirectoriesAreKept", layoutAndImmutable},
	{"OldStatesStayReadableAndLogIsNewestFirst", history},
}

// replicationChecks are the half only a git store passes: sync between
// clones through a real bare remote.
var replicationChecks = []check{
	{"MergeRefsUnionBothClones", mergePolicy},
	{"FastForwardRefsRefuseADivergedChain", fastForward},
	{"LocalRefsNeverLeaveTheClone", localPolicy},
	{"SwapRefsMoveByOneCompareAndSwapOnTheRemote", swapPolicy},
	{"OfClonesRacingForOneLeaseExactlyOneWins", swapRace},
}

// Run runs every check of the suite against the git store h, each as a
// subtest: the record and note half (RunRecords) and replication.
func Run(t *testing.T, h Harness) {
	rh := RecordHarness{Git: true, Open: func(t *testing.T, dir string, reg *gitstore.Registry) Records {
		return h.Open(t, dir, reg)
	}}
	run(t, &suite{h: h, rh: rh}, append(append([]check{}, recordChecks...), replicationChecks...))
}

// RunRecords runs the record and note half of the suite against h.
func RunRecords(t *testing.T, h RecordHarness) {
	run(t, &suite{rh: h}, recordChecks)
}

func run(t *testing.T, proto *suite, checks []check) {
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			s := &suite{t: t, h: proto.h, rh: proto.rh}
			c.fn(t, s)
			for _, dir := range s.repos {
				gittest.Git(t, dir, "fsck", "--strict", "--no-dangling")
			}
		})
	}
}

// suite is one check's world: repositories it made (git fsck runs on each
// at the end), and a bare remote when the check syncs.
type suite struct {
	t      *testing.T
	h      Harness
	rh     RecordHarness
	repos  []string
	remote string
}

// repo makes one state: a git repository when the store is git's, else a
// temporary directory that names it.
func (s *suite) repo() (string, Records) {
	s.t.Helper()
	if !s.rh.Git {
		dir := s.t.TempDir()
		return dir, s.rh.Open(s.t, dir, Registry(s.t))
	}
	dir := gittest.Init(s.t, false)
	s.repos = append(s.repos, dir)
	return dir, s.rh.Open(s.t, dir, Registry(s.t))
}

// commits counts the commits of ref's history, by Log and, in a git
// store, by git rev-list too.
func (s *suite) commits(dir string, st Records, ref gitstore.RefName) int {
	s.t.Helper()
	n := 0
	if err := st.Log(ref, func(gitstore.Entry) bool { n++; return true }); err != nil {
		s.t.Fatal(err)
	}
	if s.rh.Git {
		if got := gittest.Git(s.t, dir, "rev-list", "--count", string(ref)); got != fmt.Sprint(n) {
			s.t.Fatalf("git rev-list counts %s commits of %s, Log %d", got, ref, n)
		}
	}
	return n
}

// clone clones the suite's bare remote (made on first use).
func (s *suite) clone(name string) (string, Store) {
	s.t.Helper()
	if s.remote == "" {
		s.remote = gittest.Init(s.t, true)
		seed := gittest.Init(s.t, false)
		gittest.Git(s.t, seed, "push", "-q", s.remote, "main")
		s.repos = append(s.repos, s.remote)
	}
	dir := filepath.Join(s.t.TempDir(), name)
	gittest.Git(s.t, filepath.Dir(dir), "clone", "-q", s.remote, dir)
	s.repos = append(s.repos, dir)
	return dir, s.h.Open(s.t, dir, Registry(s.t))
}

func (s *suite) sync() gitstore.SyncOptions {
	return gitstore.SyncOptions{Environ: gittest.Env(filepath.Dir(s.remote))}
}

func (s *suite) remoteTip(ref gitstore.RefName) string {
	out, _ := gittest.Run(s.remote, "rev-parse", "--verify", "-q", string(ref))
	return strings.TrimSpace(out)
}

func record(t testing.TB, title string, n int, payloads map[string][]byte) *gitstore.Record {
	t.Helper()
	r, err := gitstore.NewRecord(Kind, 1, Body{Title: title, N: n})
	if err != nil {
		t.Fatal(err)
	}
	r.Payloads = payloads
	return r
}

func put(t testing.TB, st Records, ref gitstore.RefName, path, title string) oid.ID {
	t.Helper()
	rec := record(t, title, 0, nil)
	h, err := st.Change(context.Background(), ref, "put "+path, func(tx gitstore.Edit) error { return tx.Put(path, rec) })
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func get(t testing.TB, st Records, ref gitstore.RefName, path string) (Body, bool) {
	t.Helper()
	tx, err := st.Records(ref)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := tx.Get(path)
	if errors.Is(err, gitstore.ErrNotFound) {
		return Body{}, false
	}
	if err != nil {
		t.Fatal(err)
	}
	var b Body
	if err := rec.Decode(&b); err != nil {
		t.Fatal(err)
	}
	return b, true
}

func named(err error) string {
	if r, ok := refusal.As(err); ok {
		return r.Name
	}
	return ""
}

func actionOf(rep *gitstore.SyncReport, ref gitstore.RefName) gitstore.SyncAction {
	for _, m := range rep.Merged {
		if m.Ref == ref {
			return m.Action
		}
	}
	return ""
}

func recordsRoundTrip(t *testing.T, s *suite) {
	_, st := s.repo()
	payload := []byte("line\x00\xff\xfe not UTF-8\r\n")
	rec := record(t, "round trip — ünïcode", 7, map[string][]byte{"raw": payload, "empty": {}})
	if _, err := st.Change(context.Background(), MergeRef, "put", func(tx gitstore.Edit) error { return tx.Put("a/b/c", rec) }); err != nil {
		t.Fatal(err)
	}
	tx, err := st.Records(MergeRef)
	if err != nil {
		t.Fatal(err)
	}
	got, err := tx.Get("a/b/c")
	if err != nil {
		t.Fatal(err)
	}
	if got.Kind != Kind || got.V != 1 || !bytes.Equal(got.Body, rec.Body) ||
		!bytes.Equal(got.Payloads["raw"], payload) || len(got.Payloads["empty"]) != 0 || len(got.Payloads) != 2 {
		t.Fatalf("read back %+v", got)
	}
}

func absentIsNotFound(t *testing.T, s *suite) {
	_, st := s.repo()
	if tip, err := st.Tip(MergeRef); err != nil || !tip.IsZero() {
		t.Fatalf("tip of an absent ref: %v %v", tip, err)
	}
	tx, err := st.Records(MergeRef)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Get("nothing"); !errors.Is(err, gitstore.ErrNotFound) {
		t.Fatalf("get in an absent ref: %v", err)
	}
	put(t, st, MergeRef, "here", "x")
	tx, _ = st.Records(MergeRef)
	if _, err := tx.Get("elsewhere"); !errors.Is(err, gitstore.ErrNotFound) || errors.Is(err, gitstore.ErrObjectMissing) {
		t.Fatalf("get of an absent path: %v", err)
	}
}

func nothingWritten(t *testing.T, s *suite) {
	dir, st := s.repo()
	ctx := context.Background()
	tip := put(t, st, MergeRef, "r", "x")
	h, err := st.Change(ctx, MergeRef, "nothing", func(gitstore.Edit) error { return nil })
	if err != nil || h != tip {
		t.Fatalf("an update staging nothing: %v %v", h, err)
	}
	boom := errors.New("boom")
	if _, err := st.Change(ctx, MergeRef, "fails", func(tx gitstore.Edit) error {
		tx.Put("other", record(t, "y", 0, nil))
		return boom
	}); !errors.Is(err, boom) {
		t.Fatalf("fn's error: %v", err)
	}
	if now, _ := st.Tip(MergeRef); now != tip {
		t.Fatal("the ref moved")
	}
	if got := s.commits(dir, st, MergeRef); got != 1 {
		t.Fatalf("history has %d commits", got)
	}
}

func compareAndSwap(t *testing.T, s *suite) {
	dir, st := s.repo()
	other := s.rh.Open(t, dir, Registry(t))
	ctx := context.Background()
	put(t, st, MergeRef, "r", "base")
	interfere := func(title string) { put(t, other, MergeRef, "other/"+title, title) }

	runs := 0
	_, err := st.Change(ctx, MergeRef, "no retry", func(tx gitstore.Edit) error {
		runs++
		interfere("first")
		return tx.Put("mine", record(t, "mine", 0, nil))
	}, gitstore.NoRetry())
	if named(err) != refusal.Conflict || !errors.Is(err, gitstore.ErrConflict) || runs != 1 {
		t.Fatalf("NoRetry after a concurrent update: %v (fn ran %d times)", err, runs)
	}
	if _, ok := get(t, st, MergeRef, "mine"); ok {
		t.Fatal("a refused update was written")
	}
	runs = 0
	if _, err := st.Change(ctx, MergeRef, "retry", func(tx gitstore.Edit) error {
		runs++
		if runs == 1 {
			interfere("second")
		}
		return tx.Put("mine", record(t, "mine", 0, nil))
	}); err != nil || runs != 2 {
		t.Fatalf("retry: %v (fn ran %d times)", err, runs)
	}
	for _, p := range []string{"mine", "other/first", "other/second", "r"} {
		if _, ok := get(t, st, MergeRef, p); !ok {
			t.Fatalf("%s lost", p)
		}
	}
}

func concurrentWriters(t *testing.T, s *suite) {
	dir, st := s.repo()
	const writers, each = 6, 15
	stores := []Records{st}
	for i := 1; i < writers; i++ {
		stores = append(stores, s.rh.Open(t, dir, Registry(t)))
	}
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for w := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each && errs[w] == nil; i++ {
				_, errs[w] = stores[w].Change(context.Background(), MergeRef, "inc", func(tx gitstore.Edit) error {
					n := 0
					if rec, err := tx.Get("counter"); err == nil {
						var b Body
						if err := rec.Decode(&b); err != nil {
							return err
						}
						n = b.N
					} else if !errors.Is(err, gitstore.ErrNotFound) {
						return err
					}
					return tx.Put("counter", record(t, "counter", n+1, nil))
				})
			}
		}()
	}
	wg.Wait()
	for w, err := range errs {
		if err != nil {
			t.Fatalf("writer %d: %v", w, err)
		}
	}
	if b, _ := get(t, st, MergeRef, "counter"); b.N != writers*each {
		t.Fatalf("counter = %d after %d increments", b.N, writers*each)
	}
	if got := s.commits(dir, st, MergeRef); got != writers*each {
		t.Fatalf("history has %d commits, want %d", got, writers*each)
	}
}

func undeclared(t *testing.T, s *suite) {
	dir, st := s.repo()
	ctx := context.Background()
	rec := record(t, "x", 0, nil)
	if _, err := st.Change(ctx, "refs/nwdes/undeclared", "x", func(tx gitstore.Edit) error { return tx.Put("r", rec) }); named(err) != refusal.RefNotDeclared {
		t.Fatalf("update of an undeclared ref: %v", err)
	}
	other, _ := gitstore.NewRecord("conformance.other", 1, Body{})
	newer, _ := gitstore.NewRecord(Kind, 2, Body{})
	for _, r := range []*gitstore.Record{other, newer} {
		if _, err := st.Change(ctx, MergeRef, "x", func(tx gitstore.Edit) error { return tx.Put("r", r) }); named(err) != refusal.KindNotDeclared {
			t.Fatalf("put of %s v%d: %v", r.Kind, r.V, err)
		}
	}
	for _, ref := range []gitstore.RefName{"refs/nwdes/undeclared", MergeRef} {
		if tip, err := st.Tip(ref); err != nil || !tip.IsZero() {
			t.Fatalf("%s written: %v %v", ref, tip, err)
		}
	}
	if s.rh.Git {
		if out := gittest.Git(t, dir, "for-each-ref", "refs/nwdes/", "refs/nwdes-local/"); out != "" {
			t.Fatalf("refs written: %s", out)
		}
	}
}

func latestOnly(t *testing.T, s *suite) {
	dir, st := s.repo()
	const n = 300
	for i := 0; i < n; i++ {
		put(t, st, LocalRef, "beat", fmt.Sprint(i))
	}
	commits := s.commits(dir, st, LocalRef)
	if b, _ := get(t, st, LocalRef, "beat"); commits != 1 || b.Title != fmt.Sprint(n-1) {
		t.Fatalf("after %d heartbeats: %d commits of history, last %q", n, commits, b.Title)
	}
}

func notes(t *testing.T, s *suite) {
	dir, st := s.repo()
	// Any id names a commit to a store that keeps no objects.
	head := oid.MustParse("0123456789abcdef0123456789abcdef01234567")
	if s.rh.Git {
		head = oid.MustParse(gittest.Git(t, dir, "rev-parse", "HEAD"))
	}
	if _, err := st.Note(head); !errors.Is(err, gitstore.ErrNotFound) {
		t.Fatalf("note before any: %v", err)
	}
	for _, line := range []string{"first\n", "second\n"} {
		if _, err := st.UpdateNote(context.Background(), head, "note", func(old []byte, _ bool) ([]byte, error) {
			return append(old, line...), nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if s.rh.Git {
		if got := gittest.Git(t, dir, "notes", "--ref", "nwdes", "show", "HEAD"); got != "first\nsecond" {
			t.Fatalf("git notes show: %q", got)
		}
	}
	if b, err := st.Note(head); err != nil || string(b) != "first\nsecond\n" {
		t.Fatalf("Note: %q %v", b, err)
	}
}

func layoutAndImmutable(t *testing.T, s *suite) {
	_, st := s.repo()
	ctx := context.Background()
	put(t, st, ArchiveRef, "published/a", "a")
	tip := put(t, st, ArchiveRef, "drafts/x", "x")
	refused := map[string]struct {
		name string
		fn   func(gitstore.Edit) error
	}{
		"removing a published record":  {refusal.RecordImmutable, func(tx gitstore.Edit) error { return tx.Remove("published/a") }},
		"rewriting a published record": {refusal.RecordImmutable, func(tx gitstore.Edit) error { return tx.Put("published/a", record(t, "b", 0, nil)) }},
		"a file at the top level":      {refusal.PathInvalid, func(tx gitstore.Edit) error { return tx.WriteBlob("loose", []byte("x")) }},
		"an undeclared directory":      {refusal.PathInvalid, func(tx gitstore.Edit) error { return tx.Put("other/x", record(t, "x", 0, nil)) }},
		"a path with ..":               {refusal.PathInvalid, func(tx gitstore.Edit) error { return tx.WriteBlob("drafts/../x", []byte("x")) }},
		"a record.json by WriteBlob":   {refusal.KindNotDeclared, func(tx gitstore.Edit) error { return tx.WriteBlob("drafts/y/record.json", []byte("{}")) }},
	}
	for what, c := range refused {
		if _, err := st.Change(ctx, ArchiveRef, what, c.fn); named(err) != c.name {
			t.Fatalf("%s: %v, want %s", what, err, c.name)
		}
		if now, _ := st.Tip(ArchiveRef); now != tip {
			t.Fatalf("%s moved the ref", what)
		}
	}
	if _, err := st.Change(ctx, ArchiveRef, "drop the draft", func(tx gitstore.Edit) error { return tx.Remove("drafts/x") }); err != nil {
		t.Fatalf("removing a draft: %v", err)
	}
	put(t, st, ArchiveRef, "published/b", "b")
	if _, err := st.Change(ctx, LeaseRef, "local", func(tx gitstore.Edit) error { return tx.Put("lease", record(t, "x", 0, nil)) }); named(err) != refusal.PolicyRefused {
		t.Fatalf("a local change of a swap ref: %v", err)
	}
	if _, err := st.UpdateNoteIn(ctx, "refs/notes/undeclared", oid.MustParse("0123456789abcdef0123456789abcdef01234567"), "x",
		func([]byte, bool) ([]byte, error) { return []byte("x"), nil }); named(err) != refusal.RefNotDeclared {
		t.Fatalf("a note in an undeclared notes ref: %v", err)
	}
}

func history(t *testing.T, s *suite) {
	_, st := s.repo()
	first := put(t, st, MergeRef, "r", "one")
	second := put(t, st, MergeRef, "r", "two")
	put(t, st, MergeRef, "s", "three")
	old, err := st.RecordsAt(MergeRef, first)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := old.Get("r")
	var b Body
	if err != nil || rec.Decode(&b) != nil || b.Title != "one" || old.Base() != first || old.Ref() != MergeRef {
		t.Fatalf("the first state: %+v %v", b, err)
	}
	if _, err := old.Get("s"); !errors.Is(err, gitstore.ErrNotFound) {
		t.Fatalf("a record written later, read in the first state: %v", err)
	}
	if names, err := old.List(""); err != nil || len(names) != 1 || names[0] != "r" {
		t.Fatalf("the first state lists %q %v", names, err)
	}
	var log []gitstore.Entry
	if err := st.Log(MergeRef, func(e gitstore.Entry) bool { log = append(log, e); return true }); err != nil {
		t.Fatal(err)
	}
	if len(log) != 3 || log[1].Commit != second || log[2].Commit != first || len(log[2].Parents) != 0 ||
		len(log[1].Parents) != 1 || log[1].Parents[0] != first || log[0].Message != "put s\n" {
		t.Fatalf("log: %+v", log)
	}
	if _, err := st.Change(context.Background(), MergeRef, "same", func(tx gitstore.Edit) error {
		return tx.Put("r", record(t, "two", 0, nil))
	}); err != nil {
		t.Fatal(err)
	}
	if n := 0; st.Log(MergeRef, func(gitstore.Entry) bool { n++; return true }) != nil || n != 3 {
		t.Fatal("rewriting a record as it was made a commit")
	}
}

func mergePolicy(t *testing.T, s *suite) {
	ctx := context.Background()
	_, a := s.clone("a")
	_, b := s.clone("b")
	put(t, a, MergeRef, "from-a", "A")
	put(t, b, MergeRef, "from-b", "B")
	for _, st := range []Store{a, b} {
		if _, err := st.Push(ctx, "origin", s.sync()); err != nil {
			t.Fatal(err)
		}
	}
	_, fresh := s.clone("fresh")
	rep, err := fresh.Fetch(ctx, "origin", s.sync())
	if err != nil || actionOf(rep, MergeRef) != gitstore.SyncCreated {
		t.Fatalf("fetch: %+v %v", rep, err)
	}
	for _, p := range []string{"from-a", "from-b"} {
		if _, ok := get(t, fresh, MergeRef, p); !ok {
			t.Fatalf("the remote lost %s", p)
		}
	}
}

func fastForward(t *testing.T, s *suite) {
	ctx := context.Background()
	_, a := s.clone("a")
	_, b := s.clone("b")
	put(t, a, LedgerRef, "e/1", "one")
	if _, err := a.Push(ctx, "origin", s.sync()); err != nil {
		t.Fatal(err)
	}
	if rep, err := b.Fetch(ctx, "origin", s.sync()); err != nil || actionOf(rep, LedgerRef) != gitstore.SyncCreated {
		t.Fatalf("b fetch: %+v %v", rep, err)
	}
	put(t, b, LedgerRef, "e/2", "two")
	if _, err := b.Push(ctx, "origin", s.sync()); err != nil {
		t.Fatal(err)
	}
	if rep, err := a.Fetch(ctx, "origin", s.sync()); err != nil || actionOf(rep, LedgerRef) != gitstore.SyncFastForward {
		t.Fatalf("a fetch: %+v %v", rep, err)
	}
	// Both append; a pushes first, and b's chain has diverged.
	put(t, a, LedgerRef, "e/3", "three from a")
	put(t, b, LedgerRef, "e/3", "three from b")
	put(t, a, MergeRef, "beside", "a merge ref moving beside it")
	if _, err := a.Push(ctx, "origin", s.sync()); err != nil {
		t.Fatal(err)
	}
	remoteBefore := s.remoteTip(LedgerRef)
	bLedger, _ := b.Tip(LedgerRef)
	bMerge, _ := b.Tip(MergeRef)
	for verb, run := range map[string]func() (*gitstore.SyncReport, error){
		"fetch": func() (*gitstore.SyncReport, error) { return b.Fetch(ctx, "origin", s.sync()) },
		"push":  func() (*gitstore.SyncReport, error) { return b.Push(ctx, "origin", s.sync()) },
	} {
		_, err := run()
		if named(err) != refusal.ChainDiverged {
			t.Fatalf("%s of a diverged ledger: %v", verb, err)
		}
		if !strings.Contains(err.Error(), bLedger.Short()) || !strings.Contains(err.Error(), remoteBefore[:12]) {
			t.Fatalf("%s: the refusal does not name both tips: %v", verb, err)
		}
		if tip, _ := b.Tip(LedgerRef); tip != bLedger {
			t.Fatalf("%s moved the local ledger", verb)
		}
		if tip, _ := b.Tip(MergeRef); tip != bMerge {
			t.Fatalf("%s merged another ref although it refused", verb)
		}
		if s.remoteTip(LedgerRef) != remoteBefore {
			t.Fatalf("%s moved the remote ledger", verb)
		}
	}
	if parents := strings.Fields(gittest.Git(t, s.remote, "log", "--format=%p", string(LedgerRef))); len(parents) != 2 {
		t.Fatalf("the remote ledger is not one chain: parents %q", parents)
	}
}

func localPolicy(t *testing.T, s *suite) {
	ctx := context.Background()
	_, a := s.clone("a")
	_, b := s.clone("b")
	put(t, a, LocalRef, "beat", "a alive")
	put(t, a, MergeRef, "shared", "shared")
	if _, err := a.Push(ctx, "origin", s.sync()); err != nil {
		t.Fatal(err)
	}
	if out := gittest.Git(t, s.remote, "for-each-ref", "--format=%(refname)"); strings.Contains(out, "nwdes-local") || !strings.Contains(out, string(MergeRef)) {
		t.Fatalf("remote refs after push: %s", out)
	}
	if _, err := b.Fetch(ctx, "origin", s.sync()); err != nil {
		t.Fatal(err)
	}
	if tip, _ := b.Tip(LocalRef); !tip.IsZero() {
		t.Fatal("a local ref reached another clone")
	}
}

func take(t *testing.T, s *suite, st Store, old oid.ID, who string) (oid.ID, error) {
	rec := record(t, who, 0, nil)
	return st.SwapRemote(context.Background(), "origin", LeaseRef, old, "lease "+who,
		func(tx gitstore.Edit) error { return tx.Put("lease", rec) }, s.sync())
}

func swapPolicy(t *testing.T, s *suite) {
	ctx := context.Background()
	dirA, a := s.clone("a")
	_, b := s.clone("b")
	first, err := take(t, s, a, oid.Zero, "a")
	if err != nil {
		t.Fatal(err)
	}
	if s.remoteTip(LeaseRef) != first.String() {
		t.Fatal("the remote does not hold a's lease")
	}
	if tip, _ := a.Tip(LeaseRef); tip != first {
		t.Fatal("a's local ref does not mirror the remote")
	}
	// b believes the task is free: losing is an answer carrying the
	// winner's value, which b now mirrors.
	_, err = take(t, s, b, oid.Zero, "b")
	var ce *gitstore.ConflictError
	if !errors.As(err, &ce) || ce.Actual != first || !errors.Is(err, gitstore.ErrConflict) {
		t.Fatalf("b's take: %v", err)
	}
	if got, _ := get(t, b, LeaseRef, "lease"); got.Title != "a" {
		t.Fatal("b does not mirror the lease it lost to")
	}
	// b takes it over from the value it now knows; a's renewal from its
	// stale value loses.
	second, err := take(t, s, b, first, "b")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := take(t, s, a, first, "a again"); !errors.As(err, &ce) || ce.Actual != second {
		t.Fatalf("a's stale renewal: %v", err)
	}
	if out := gittest.Git(t, s.remote, "rev-list", "--count", string(LeaseRef)); out != "1" {
		t.Fatalf("the remote lease has %s commits of history", out)
	}
	// A swap ref never moves by a local update, and a bulk push never
	// sends one, even one moved behind nwdes's back (git update-ref); a
	// fetch mirrors the remote's value back.
	if _, err := a.Change(ctx, LeaseRef, "local", func(tx gitstore.Edit) error { return tx.Put("lease", record(t, "forged", 0, nil)) }); named(err) != refusal.PolicyRefused {
		t.Fatalf("a local update of a swap ref: %v", err)
	}
	gittest.Git(t, dirA, "update-ref", string(LeaseRef), first.String())
	if _, err := a.Push(ctx, "origin", s.sync()); err != nil {
		t.Fatal(err)
	}
	if s.remoteTip(LeaseRef) != second.String() {
		t.Fatal("push moved a swap ref")
	}
	if tip, _ := a.Tip(LeaseRef); tip != second {
		t.Fatal("push's fetch did not mirror the remote's lease")
	}
	gittest.Git(t, dirA, "update-ref", string(LeaseRef), first.String())
	rep, err := a.Fetch(ctx, "origin", s.sync())
	if err != nil || actionOf(rep, LeaseRef) != gitstore.SyncMirrored {
		t.Fatalf("fetch: %+v %v", rep, err)
	}
	if tip, _ := a.Tip(LeaseRef); tip != second {
		t.Fatal("fetch did not mirror the remote's lease")
	}
	// A function that stages nothing pushes nothing and says so.
	if _, err := a.SwapRemote(ctx, "origin", LeaseRef, second, "nothing", func(gitstore.Edit) error { return nil }, s.sync()); !errors.Is(err, gitstore.ErrNothingStaged) {
		t.Fatalf("a swap staging nothing: %v", err)
	}
	// Releasing is a compare-and-swap too, and the release reaches every
	// clone's next fetch.
	if err := b.DeleteRemote(ctx, "origin", LeaseRef, first, s.sync()); !errors.Is(err, gitstore.ErrConflict) {
		t.Fatalf("release from a stale value: %v", err)
	}
	if err := b.DeleteRemote(ctx, "origin", LeaseRef, second, s.sync()); err != nil {
		t.Fatal(err)
	}
	if s.remoteTip(LeaseRef) != "" {
		t.Fatal("the lease is still on the remote")
	}
	if tip, _ := b.Tip(LeaseRef); !tip.IsZero() {
		t.Fatal("the releasing clone still holds the lease locally")
	}
	if rep, err := a.Fetch(ctx, "origin", s.sync()); err != nil || actionOf(rep, LeaseRef) != gitstore.SyncMirrored {
		t.Fatalf("fetch after the release: %+v %v", rep, err)
	}
	if tip, _ := a.Tip(LeaseRef); !tip.IsZero() {
		t.Fatal("a released lease stays in another clone after its fetch")
	}
	// Two clones taking the same lease content (the same commit, when
	// their clocks agree): git reports the second push "up to date"
	// without checking its lease, which is no win.
	if _, err := take(t, s, a, oid.Zero, "same"); err != nil {
		t.Fatal(err)
	}
	if _, err := take(t, s, b, oid.Zero, "same"); !errors.Is(err, gitstore.ErrConflict) {
		t.Fatalf("a second take of an identical lease: %v", err)
	}
	if _, err := a.SwapRemote(ctx, "origin", MergeRef, oid.Zero, "x", func(gitstore.Edit) error { return nil }, s.sync()); named(err) != refusal.PolicyRefused {
		t.Fatalf("swap of a merge ref: %v", err)
	}
}

func swapRace(t *testing.T, s *suite) {
	const n = 6
	stores := make([]Store, n)
	for i := range stores {
		_, stores[i] = s.clone(fmt.Sprintf("c%d", i))
	}
	var wg sync.WaitGroup
	won := make([]bool, n)
	errs := make([]error, n)
	for i, st := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := take(t, s, st, oid.Zero, fmt.Sprint(i))
			switch {
			case err == nil:
				won[i] = true
			case !errors.Is(err, gitstore.ErrConflict):
				errs[i] = err
			}
		}()
	}
	wg.Wait()
	winner := -1
	for i := range stores {
		if errs[i] != nil {
			t.Fatalf("clone %d: %v", i, errs[i])
		}
		if won[i] {
			if winner >= 0 {
				t.Fatalf("clones %d and %d both hold the lease", winner, i)
			}
			winner = i
		}
	}
	if winner < 0 {
		t.Fatal("no clone holds the lease")
	}
	// Every loser mirrors the winner's lease.
	for i, st := range stores {
		if got, _ := get(t, st, LeaseRef, "lease"); got.Title != fmt.Sprint(winner) {
			t.Fatalf("clone %d sees the lease of %q, the winner is %d", i, got.Title, winner)
		}
	}
}
