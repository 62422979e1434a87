package gitstore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/refusal"
)

// The store writes each update's objects as one pack and consolidates small
// packs (packwrite.go, consolidate.go). git alone judges the result here.

// countObjects returns git count-objects -v as a map.
func countObjects(t *testing.T, dir string) map[string]int {
	t.Helper()
	out := gittest.Git(t, dir, "count-objects", "-v")
	m := map[string]int{}
	for _, line := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			t.Fatalf("count-objects line %q", line)
		}
		m[k] = n
	}
	return m
}

// packBound is the most packs the store should leave: the consolidation
// limit, plus the packs consolidation keeps because each is at least twice
// all smaller ones together (a handful at these sizes).
const packBound = 20 + 10

type packRec struct {
	path string
	i    int
}

func putRecs(t *testing.T, s *gitstore.Store, ref gitstore.RefName, recs []packRec) {
	t.Helper()
	if _, err := s.Change(context.Background(), ref, "put", func(tx gitstore.Edit) error {
		for _, r := range recs {
			rec, err := gitstore.NewRecord(benchKind, 1, benchBody{I: r.i})
			if err != nil {
				return err
			}
			if err := tx.Put(r.path, rec); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// checkRecs reads every record through a fresh store and through s.
func checkRecs(t *testing.T, dir string, s *gitstore.Store, ref gitstore.RefName, want map[string]int) {
	t.Helper()
	fresh := stOpenStore(t, dir, gitstore.Options{})
	for _, st := range []*gitstore.Store{s, fresh} {
		tx, err := st.Records(ref)
		if err != nil {
			t.Fatal(err)
		}
		for p, i := range want {
			rec, err := tx.Get(p)
			if err != nil {
				t.Fatalf("read %s: %v", p, err)
			}
			var b benchBody
			if err := rec.Decode(&b); err != nil || b.I != i {
				t.Fatalf("%s holds %+v (%v), want i=%d", p, b, err, i)
			}
		}
	}
}

func fsckStrict(t *testing.T, dir string) {
	t.Helper()
	if out, errOut, err := stGitRun(dir, nil, "fsck", "--strict", "--no-dangling", "--no-progress"); err != nil {
		t.Fatalf("git fsck --strict: %v\n%s%s", err, out, errOut)
	}
}

func noTempFiles(t *testing.T, dir string) {
	t.Helper()
	tmp, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "tmp_*"))
	loose, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "??", "tmp_*"))
	keeps, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "pack-*.keep"))
	if len(tmp)+len(loose)+len(keeps) > 0 {
		t.Errorf("temporary files left behind: %v %v %v", tmp, loose, keeps)
	}
}

// TestManyPackedUpdatesKeepGitHappy: after many updates (single records
// and batches), git fsck --strict passes, no loose object was written, the
// number of packs stays bounded, and git gc and git repack -a -d work on
// the result with every record still reading, through the store that was
// open all along and through a fresh one.
func TestManyPackedUpdatesKeepGitHappy(t *testing.T) {
	dir := gittest.Init(t, false)
	s := stOpenStore(t, dir, gitstore.Options{})
	loose0 := countObjects(t, dir)["count"] // the repository's own first commit
	const ref gitstore.RefName = "refs/nwdes/packs"
	want := map[string]int{}
	updates := 150
	if testing.Short() {
		updates = 90
	}
	maxPacks := 0
	for u := 0; u < updates; u++ {
		var recs []packRec
		n := 1
		if u%7 == 3 {
			n = 12
		}
		for k := 0; k < n; k++ {
			p := fmt.Sprintf("r/%d/%d", u%13, k)
			recs = append(recs, packRec{p, u*100 + k})
			want[p] = u*100 + k
		}
		putRecs(t, s, ref, recs)
		if c := countObjects(t, dir); c["packs"] > maxPacks {
			maxPacks = c["packs"]
		}
	}
	c := countObjects(t, dir)
	t.Logf("after %d updates: %v (at most %d packs at any time)", updates, c, maxPacks)
	if c["count"] != loose0 {
		t.Errorf("%d loose objects written; every update should write a pack", c["count"]-loose0)
	}
	if maxPacks > packBound {
		t.Errorf("%d packs at one time, want at most %d", maxPacks, packBound)
	}
	if c["garbage"] != 0 {
		t.Errorf("git count-objects reports %d garbage files", c["garbage"])
	}
	noTempFiles(t, dir)
	fsckStrict(t, dir)
	checkRecs(t, dir, s, ref, want)
	if got := gittest.Git(t, dir, "rev-list", "--count", string(ref)); got != strconv.Itoa(updates) {
		t.Fatalf("%s has %s commits, want %d", ref, got, updates)
	}

	gittest.Git(t, dir, "gc", "--quiet")
	checkRecs(t, dir, s, ref, want)
	for u := 0; u < 30; u++ {
		p := fmt.Sprintf("after-gc/%d", u)
		putRecs(t, s, ref, []packRec{{p, u}})
		want[p] = u
	}
	gittest.Git(t, dir, "repack", "-a", "-d", "-q")
	checkRecs(t, dir, s, ref, want)
	fsckStrict(t, dir)
	if c := countObjects(t, dir); c["packs"] != 1 || c["garbage"] != 0 {
		t.Errorf("after git repack -a -d: %v, want one pack and no garbage", c)
	}
}

// TestPackWriterFreshensWhatItDoesNotWrite: an object the update needs that
// is already in a pack is not written again, and the pack holding it is
// freshened (its mtime set to now), as git does, so that a concurrent git
// gc does not prune it as old and unreachable.
func TestPackWriterFreshensWhatItDoesNotWrite(t *testing.T) {
	dir := gittest.Init(t, false)
	s := stOpenStore(t, dir, gitstore.Options{})
	ctx := context.Background()
	if _, err := s.Change(ctx, stressRef, "first", func(tx gitstore.Edit) error {
		return tx.WriteBlob("a", []byte("shared content\n"))
	}); err != nil {
		t.Fatal(err)
	}
	packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "pack-*.pack"))
	if len(packs) != 1 {
		t.Fatalf("packs after one update: %v", packs)
	}
	month := time.Now().Add(-30 * 24 * time.Hour)
	if err := os.Chtimes(packs[0], month, month); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Change(ctx, stressRef, "second", func(tx gitstore.Edit) error {
		return tx.WriteBlob("b", []byte("shared content\n"))
	}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(packs[0])
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(fi.ModTime()) > time.Hour {
		t.Errorf("the pack holding an object the update reused was not freshened: mtime %s", fi.ModTime())
	}
	blob := gittest.Git(t, dir, "rev-parse", string(stressRef)+":b")
	// The second pack holds the new tree and commit, not the blob again.
	all, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "pack-*.idx"))
	for _, idx := range all {
		if filepath.Base(idx) == strings.TrimSuffix(filepath.Base(packs[0]), ".pack")+".idx" {
			continue
		}
		b, _ := os.ReadFile(idx)
		if strings.Contains(gitShowIndex(t, dir, b), blob) {
			t.Errorf("the second pack stores blob %s again", blob)
		}
	}
	fsckStrict(t, dir)
}

func gitShowIndex(t *testing.T, dir string, idx []byte) string {
	t.Helper()
	out, errOut, err := stGitRun(dir, idx, "show-index")
	if err != nil {
		t.Fatalf("git show-index: %v: %s", err, errOut)
	}
	return string(out)
}

// TestConsolidationLeavesOthersPacksAlone: a kept pack, a pack a
// multi-pack-index names and a large pack are never merged or deleted by
// the store's consolidation, however many updates run.
func TestConsolidationLeavesOthersPacksAlone(t *testing.T) {
	dir := gittest.Init(t, false)
	packDir := filepath.Join(dir, ".git", "objects", "pack")
	// A kept pack of the repository's own commit.
	gittest.Git(t, dir, "repack", "-a", "-d", "-q")
	kept, _ := filepath.Glob(filepath.Join(packDir, "pack-*.pack"))
	if len(kept) != 1 {
		t.Fatalf("packs: %v", kept)
	}
	keep := strings.TrimSuffix(kept[0], ".pack") + ".keep"
	if err := os.WriteFile(keep, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s := stOpenStore(t, dir, gitstore.Options{})
	const ref gitstore.RefName = "refs/nwdes/others"
	want := map[string]int{}
	for u := 0; u < 60; u++ {
		p := "r/" + strconv.Itoa(u)
		putRecs(t, s, ref, []packRec{{p, u}})
		want[p] = u
	}
	if _, err := os.Stat(kept[0]); err != nil {
		t.Fatalf("the kept pack is gone: %v", err)
	}
	// A multi-pack-index over the packs there now: none of them may go.
	gittest.Git(t, dir, "multi-pack-index", "write")
	named, _ := filepath.Glob(filepath.Join(packDir, "pack-*.pack"))
	for u := 60; u < 120; u++ {
		p := "r/" + strconv.Itoa(u)
		putRecs(t, s, ref, []packRec{{p, u}})
		want[p] = u
	}
	for _, p := range named {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("a pack the multi-pack-index names is gone: %v", err)
		}
	}
	checkRecs(t, dir, s, ref, want)
	fsckStrict(t, dir)
	gittest.Git(t, dir, "multi-pack-index", "verify")
}

// TestQuarantineIsNotWritten: an object directory other than
// <git dir>/objects (a server's quarantine during a push) is refused, and
// nothing is written there or in the repository's own pack directory.
func TestQuarantineIsNotWritten(t *testing.T) {
	dir := gittest.Init(t, false)
	objs := filepath.Join(dir, ".git", "objects")
	q := filepath.Join(objs, "incoming-x")
	if err := os.MkdirAll(q, 0o777); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"GIT_OBJECT_DIRECTORY": q, "GIT_ALTERNATE_OBJECT_DIRECTORIES": objs}
	loc, err := gitrepo.Discover(dir, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	s, err := gitstore.Open(loc, gitstore.Options{Durable: true, Registry: stressKinds})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	before := countObjects(t, dir)
	_, err = s.Change(context.Background(), stressRef, "q", func(tx gitstore.Edit) error {
		return tx.WriteBlob("x", []byte("x"))
	})
	if !refusal.Named(err, "StoreNotWritable") {
		t.Fatalf("update into a quarantine: err = %v, want StoreNotWritable", err)
	}
	if ents, _ := os.ReadDir(q); len(ents) != 0 {
		t.Errorf("files written into the quarantine: %v", ents)
	}
	if after := countObjects(t, dir); after["packs"] != before["packs"] || after["count"] != before["count"] {
		t.Errorf("objects written: before %v, after %v", before, after)
	}
}

// TestDurableGoroutineWritersBesideGitGCLoseNothing: eight goroutines, each
// with its own durable store and its own ref, append while git gc runs in a
// loop. Every acknowledged append is on its ref, every ref names a commit
// whose objects are all present, and git fsck --strict passes.
func TestDurableGoroutineWritersBesideGitGCLoseNothing(t *testing.T) {
	dir := gittest.Init(t, false)
	const writers = 8
	each := 40
	if testing.Short() {
		each = 15
	}
	stop := make(chan struct{})
	var gwg sync.WaitGroup
	gc := &stGitLoop{name: "gc"}
	gwg.Add(1)
	go stRunGitLoop(dir, stop, &gwg, gc, []string{"gc", "--quiet"})
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for g := 0; g < writers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := gitstore.Open(mustDiscover(t, dir), gitstore.Options{Durable: true, Registry: stressKinds})
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			ref := gitstore.RefName(fmt.Sprintf("refs/nwdes/w%d", g))
			for i := 0; i < each; i++ {
				rec, _ := gitstore.NewRecord(benchKind, 1, benchBody{I: i, G: g})
				if _, err := s.Change(context.Background(), ref, "append", func(tx gitstore.Edit) error {
					return tx.Put("r/"+strconv.Itoa(i), rec)
				}); err != nil {
					errs <- fmt.Errorf("writer %d append %d: %w", g, i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	gwg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("git gc: %d runs, %d failed (last: %s); %v", gc.runs, gc.fail, gc.lastErr, countObjects(t, dir))
	for g := 0; g < writers; g++ {
		ref := fmt.Sprintf("refs/nwdes/w%d", g)
		if got := gittest.Git(t, dir, "rev-list", "--count", ref); got != strconv.Itoa(each) {
			t.Errorf("%s has %s commits, want %d", ref, got, each)
		}
		if n := strings.Count(gittest.Git(t, dir, "ls-tree", "-r", "--name-only", ref), "\n") + 1; n != each {
			t.Errorf("%s holds %d files, want %d", ref, n, each)
		}
	}
	fsckStrict(t, dir)
	noTempFiles(t, dir)
}

func mustDiscover(t *testing.T, dir string) gitrepo.Location {
	loc, err := gitrepo.Discover(dir, func(string) string { return "" })
	if err != nil {
		t.Error(err)
	}
	return loc
}

// TestLongRunningWriterHoldsBoundedDescriptors: a store that appends for a
// long time (a supervisor) does not hold a growing number of descriptors,
// although every update writes a pack and consolidation deletes them: the
// reader that keeps deleted packs open is replaced once it holds many.
func TestLongRunningWriterHoldsBoundedDescriptors(t *testing.T) {
	dir := gittest.Init(t, false)
	s := stOpenStore(t, dir, gitstore.Options{})
	fds := func() int {
		e, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip("no /proc/self/fd")
		}
		return len(e)
	}
	before := fds()
	most := 0
	for i := 0; i < 600; i++ {
		putRecs(t, s, "refs/nwdes/fd", []packRec{{"r/" + strconv.Itoa(i%10), i}})
		if n := fds() - before; n > most {
			most = n
		}
	}
	t.Logf("600 appends: at most %d descriptors more than at the start", most)
	// Without the recycling the reader holds about 1,200 more (two per
	// update). With it, 260 to 330 on a quiet machine and up to 436 under
	// load: a replaced reader stays open for readerGrace of wall time, so
	// how many appends fall in that time depends on the machine. Half the
	// unbounded figure tells the two apart without depending on it.
	if most > 600 {
		t.Errorf("%d more descriptors open during 600 appends; the reader keeps deleted packs open", most)
	}
}

// TestKeepOfADeadWriterIsRemoved: a writer killed between publishing its
// pack and moving its ref leaves the pack's .keep (a link to
// <git dir>/nwdes-keep). Consolidation removes such a keep once the pack is
// ten minutes old, and merges the pack; a young keep (an update in flight)
// and a keep someone else made are left alone.
func TestKeepOfADeadWriterIsRemoved(t *testing.T) {
	dir := gittest.Init(t, false)
	s := stOpenStore(t, dir, gitstore.Options{})
	const ref gitstore.RefName = "refs/nwdes/keeps"
	packDir := filepath.Join(dir, ".git", "objects", "pack")
	src := filepath.Join(dir, ".git", "nwdes-keep")
	want := map[string]int{}
	packOf := func(u int) string {
		t.Helper()
		p := "r/" + strconv.Itoa(u)
		putRecs(t, s, ref, []packRec{{p, u}})
		want[p] = u
		blob := gittest.Git(t, dir, "rev-parse", string(ref)+":"+p+"/record.json")
		idxs, _ := filepath.Glob(filepath.Join(packDir, "pack-*.idx"))
		for _, idx := range idxs {
			b, _ := os.ReadFile(idx)
			if strings.Contains(gitShowIndex(t, dir, b), blob) {
				return strings.TrimSuffix(idx, ".idx")
			}
		}
		t.Fatalf("no pack holds %s", blob)
		return ""
	}
	hour := time.Now().Add(-time.Hour)
	dead := packOf(0)
	if err := os.Link(src, dead+".keep"); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(dead+".pack", hour, hour)
	young := packOf(1)
	if err := os.Link(src, young+".keep"); err != nil {
		t.Fatal(err)
	}
	foreign := packOf(2)
	if err := os.WriteFile(foreign+".keep", []byte("kept by hand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(foreign+".pack", hour, hour)
	for u := 3; u < 40; u++ {
		putRecs(t, s, ref, []packRec{{"r/" + strconv.Itoa(u), u}})
		want["r/"+strconv.Itoa(u)] = u
	}
	if _, err := os.Stat(dead + ".keep"); err == nil {
		t.Errorf("the keep of a dead writer's hour-old pack is still there")
	}
	if _, err := os.Stat(dead + ".idx"); err == nil {
		t.Errorf("the dead writer's pack was not consolidated once its keep was gone")
	}
	for _, p := range []string{young, foreign} {
		for _, ext := range []string{".keep", ".idx", ".pack"} {
			if _, err := os.Stat(p + ext); err != nil {
				t.Errorf("%s%s is gone: %v", filepath.Base(p), ext, err)
			}
		}
	}
	checkRecs(t, dir, s, ref, want)
	fsckStrict(t, dir)
}
