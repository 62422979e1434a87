package odb

import (
	"bytes"
	"errors"
	"github.com/nwdes/nwdes/gitstore/oid"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

const historyCommits = 300

func openDB(t *testing.T, dir string) *DB {
	t.Helper()
	db, err := Open(dir, oid.SHA1)
	if err != nil {
		t.Fatalf("Open(%s, oid.SHA1): %v", dir, err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return db
}

// checkAll reads every object git knows about in repo through db, from
// several goroutines at once, twice (the second time in the other order,
// through delta bases the first left cached), and compares type and
// content. Each result is overwritten once compared: one sharing bytes
// with what the DB keeps would spoil a later read.
func checkAll(t *testing.T, repo string, db *DB) int {
	t.Helper()
	objs := allObjects(t, repo)
	if len(objs) == 0 {
		t.Fatal("git lists no objects")
	}
	const workers = 4
	for pass := range 2 {
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for i := w; i < len(objs); i += workers {
					o := objs[i]
					if pass == 1 {
						o = objs[len(objs)-1-i]
					}
					typ, data, err := db.Read(o.id)
					if err != nil {
						t.Errorf("Read(%s): %v", o.id, err)
						continue
					}
					if typ != o.typ || !bytes.Equal(data, o.data) {
						t.Errorf("Read(%s) = %v, %d bytes; git says %v, %d bytes", o.id, typ, len(data), o.typ, len(o.data))
					}
					for i := range data {
						data[i] ^= 0xff
					}
					if ok, err := db.Has(o.id); !ok || err != nil {
						t.Errorf("Has(%s) = %v, %v", o.id, ok, err)
					}
				}
			})
		}
		wg.Wait()
	}
	return len(objs)
}

// entryTypes counts the raw entry types across the packs of objects dir, to
// prove that a scenario really exercises the delta kinds it claims to.
func entryTypes(t *testing.T, dir string) map[plumbing.ObjectType]int {
	t.Helper()
	db := openDB(t, dir)
	s, err := db.store(0)
	if err != nil {
		t.Fatal(err)
	}
	packs, err := s.packList()
	if err != nil {
		t.Fatal(err)
	}
	counts := map[plumbing.ObjectType]int{}
	for _, p := range packs {
		r, size, err := p.loadData()
		if err != nil {
			t.Fatal(err)
		}
		x := p.idx
		for i := range x.n {
			off, err := x.offset(i)
			if err != nil {
				t.Fatal(err)
			}
			e, err := db.readEntry(r, size, off, oid.SHA1)
			if err != nil {
				t.Fatal(err)
			}
			counts[e.typ]++
		}
	}
	return counts
}

func countLoose(t testing.TB, dir string) int {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "[0-9a-f][0-9a-f]", "*"))
	if err != nil {
		t.Fatal(err)
	}
	return len(m)
}

func countPacks(t testing.TB, dir string) int {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "pack", "pack-*.idx"))
	if err != nil {
		t.Fatal(err)
	}
	return len(m)
}

func TestReadLooseOnly(t *testing.T) {
	requireGit(t)
	src := newHistoryRepo(t, historyCommits)
	git(t, src, nil, "repack", "-a", "-d", "-q")
	packs, _ := filepath.Glob(filepath.Join(objectsDir(src), "pack", "*.pack"))
	pack, err := os.ReadFile(packs[0])
	if err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(t.TempDir(), "loose")
	git(t, t.TempDir(), nil, "init", "-q", repo)
	git(t, repo, pack, "unpack-objects", "-q")

	if n := countPacks(t, objectsDir(repo)); n != 0 {
		t.Fatalf("expected no packs, found %d", n)
	}
	n := checkAll(t, repo, openDB(t, objectsDir(repo)))
	if loose := countLoose(t, objectsDir(repo)); loose != n {
		t.Fatalf("%d loose objects, git lists %d", loose, n)
	}
}

func TestReadPackedOfsDelta(t *testing.T) {
	requireGit(t)
	repo := newHistoryRepo(t, historyCommits)
	git(t, repo, nil, "gc", "-q", "--aggressive", "--prune=now")
	dir := objectsDir(repo)
	if n := countLoose(t, dir); n != 0 {
		t.Fatalf("%d loose objects left after gc", n)
	}
	types := entryTypes(t, dir)
	if types[plumbing.OFSDeltaObject] < 100 || types[plumbing.REFDeltaObject] != 0 {
		t.Fatalf("want many OFS_DELTA entries and no REF_DELTA, got %v", types)
	}
	n := checkAll(t, repo, openDB(t, dir))
	t.Logf("%d objects, pack entry types %v", n, types)
}

func TestReadPackedRefDelta(t *testing.T) {
	requireGit(t)
	repo := newHistoryRepo(t, historyCommits)
	// repack has no --no-delta-base-offset flag; this config is how
	// git repack passes it to pack-objects.
	git(t, repo, nil, "-c", "repack.useDeltaBaseOffset=false", "repack", "-q", "-a", "-d", "-f", "--depth=50", "--window=250")
	git(t, repo, nil, "prune-packed")
	dir := objectsDir(repo)
	types := entryTypes(t, dir)
	if types[plumbing.REFDeltaObject] < 100 || types[plumbing.OFSDeltaObject] != 0 {
		t.Fatalf("want many REF_DELTA entries and no OFS_DELTA, got %v", types)
	}
	n := checkAll(t, repo, openDB(t, dir))
	t.Logf("%d objects, pack entry types %v", n, types)
}

func TestReadMixed(t *testing.T) {
	requireGit(t)
	repo := newHistoryRepo(t, historyCommits)
	git(t, repo, nil, "repack", "-q", "-a", "-d")
	// A second pack, of objects added after the first, and loose objects
	// on top of both.
	git(t, repo, nil, "reset", "-q", "--hard")
	for i := range 3 {
		os.WriteFile(filepath.Join(repo, "README"), []byte(strings.Repeat("more\n", 100+i)), 0o644)
		git(t, repo, nil, "commit", "-q", "-am", "incremental")
	}
	git(t, repo, nil, "repack", "-q", "-d")
	for i := range 3 {
		os.WriteFile(filepath.Join(repo, "src", "main.go"), []byte(strings.Repeat("loose\n", 10+i)), 0o644)
		git(t, repo, nil, "commit", "-q", "-am", "loose")
	}
	dir := objectsDir(repo)
	if p, l := countPacks(t, dir), countLoose(t, dir); p < 2 || l == 0 {
		t.Fatalf("want at least 2 packs and some loose objects, got %d packs, %d loose", p, l)
	}
	checkAll(t, repo, openDB(t, dir))
}

func TestReadAlternates(t *testing.T) {
	requireGit(t)
	src := newHistoryRepo(t, historyCommits)
	git(t, src, nil, "gc", "-q", "--prune=now")
	base := t.TempDir()

	// clone --shared writes an absolute alternates path; the second level
	// gets a relative one, and the third level nests through both.
	mid := filepath.Join(base, "mid")
	git(t, base, nil, "clone", "-q", "--shared", src, mid)
	leaf := filepath.Join(base, "leaf")
	git(t, base, nil, "clone", "-q", "--shared", mid, leaf)
	rel, err := filepath.Rel(objectsDir(leaf), objectsDir(mid))
	if err != nil {
		t.Fatal(err)
	}
	alt := filepath.Join(objectsDir(leaf), "info", "alternates")
	if err := os.WriteFile(alt, []byte("# comment\n\n"+rel+"\n/nonexistent/objects\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, r := range []string{mid, leaf} {
		os.WriteFile(filepath.Join(r, "README"), []byte(strings.Repeat("local\n", 3+i)), 0o644)
		git(t, r, nil, "commit", "-q", "-am", "local")
	}
	if countLoose(t, objectsDir(leaf)) == 0 {
		t.Fatal("leaf has no objects of its own")
	}
	n := checkAll(t, leaf, openDB(t, objectsDir(leaf)))
	if own := countLoose(t, objectsDir(leaf)); n <= own*10 {
		t.Fatalf("git lists %d objects, leaf owns %d: alternates not exercised", n, own)
	}
}

func TestAlternatesCycle(t *testing.T) {
	requireGit(t)
	base := t.TempDir()
	a, b := filepath.Join(base, "a"), filepath.Join(base, "b")
	git(t, base, nil, "init", "-q", a)
	git(t, base, nil, "init", "-q", b)
	os.WriteFile(filepath.Join(objectsDir(a), "info", "alternates"), []byte(objectsDir(b)+"\n"), 0o644)
	os.WriteFile(filepath.Join(objectsDir(b), "info", "alternates"), []byte(objectsDir(a)+"\n"), 0o644)
	id := strings.TrimSpace(string(git(t, b, []byte("in b"), "hash-object", "-w", "--stdin")))
	db := openDB(t, objectsDir(a))
	if _, data, err := db.Read(oid.MustParse(id)); err != nil || string(data) != "in b" {
		t.Fatalf("Read through cyclic alternates = %q, %v", data, err)
	}
	if _, _, err := db.Read(oid.MustParse(strings.Repeat("ab", 20))); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing object through cyclic alternates: %v", err)
	}
}

func TestNotFound(t *testing.T) {
	requireGit(t)
	repo := newHistoryRepo(t, 50)
	git(t, repo, nil, "repack", "-q", "-a", "-d")
	db := openDB(t, objectsDir(repo))
	missing := oid.MustParse("0123456789abcdef0123456789abcdef01234567")
	_, _, err := db.Read(missing)
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("Read(missing) error = %v, want ErrNotFound", err)
	}
	if !strings.Contains(err.Error(), missing.String()) {
		t.Errorf("error %q does not name the object", err)
	}
	if ok, err := db.Has(missing); ok || err != nil {
		t.Fatalf("Has(missing) = %v, %v", ok, err)
	}
	// First and last fanout buckets are the edge cases of the lookup.
	for _, h := range []oid.ID{oid.Zero, oid.MustParse(strings.Repeat("ff", 20))} {
		if _, _, err := db.Read(h); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Read(%s) error = %v, want ErrNotFound", h, err)
		}
	}
}

func TestPackAppearsAfterOpen(t *testing.T) {
	requireGit(t)
	src := newHistoryRepo(t, 50)
	git(t, src, nil, "repack", "-q", "-a", "-d")
	packs, _ := filepath.Glob(filepath.Join(objectsDir(src), "pack", "*.pack"))
	pack, err := os.ReadFile(packs[0])
	if err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(t.TempDir(), "r")
	git(t, t.TempDir(), nil, "init", "-q", repo)
	git(t, repo, pack, "unpack-objects", "-q")
	git(t, repo, nil, "update-ref", "refs/heads/main", strings.TrimSpace(string(git(t, src, nil, "rev-parse", "main"))))

	db := openDB(t, objectsDir(repo))
	head := oid.MustParse(strings.TrimSpace(string(git(t, repo, nil, "rev-parse", "main"))))
	if _, _, err := db.Read(head); err != nil {
		t.Fatalf("Read(head) before repack: %v", err)
	}
	// The DB has now listed an empty pack directory; gc moves everything
	// into a pack it has never seen and deletes the loose copies.
	git(t, repo, nil, "repack", "-q", "-a", "-d")
	git(t, repo, nil, "prune-packed")
	if countLoose(t, objectsDir(repo)) != 0 {
		t.Fatal("loose objects survived prune-packed")
	}
	checkAll(t, repo, db)
}

func TestPackReplacedAfterOpen(t *testing.T) {
	requireGit(t)
	repo := newHistoryRepo(t, 50)
	git(t, repo, nil, "repack", "-q", "-a", "-d")
	dir := objectsDir(repo)
	objs := allObjects(t, repo)
	db := openDB(t, dir)
	if _, _, err := db.Read(objs[0].id); err != nil {
		t.Fatal(err)
	}
	// Add objects, then fold everything into a new pack, removing the
	// one the DB has open: old objects stay readable through the open
	// file, new ones are found by the rescan.
	os.WriteFile(filepath.Join(repo, "README"), []byte("replaced\n"), 0o644)
	git(t, repo, nil, "commit", "-q", "-am", "new")
	git(t, repo, nil, "repack", "-q", "-a", "-d", "-f")
	git(t, repo, nil, "prune-packed")
	checkAll(t, repo, db)
}

func TestPackVanishesBeforeOpen(t *testing.T) {
	requireGit(t)
	repo := newHistoryRepo(t, 50)
	git(t, repo, nil, "repack", "-q", "-a", "-d")
	dir := objectsDir(repo)
	packs, _ := filepath.Glob(filepath.Join(dir, "pack", "pack-*.pack"))
	packData, err := os.ReadFile(packs[0])
	if err != nil {
		t.Fatal(err)
	}
	objs := allObjects(t, repo)

	for _, keepIdx := range []bool{false, true} {
		db, err := Open(dir, oid.SHA1)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := db.store(0)
		listed, err := s.packList()
		if err != nil || len(listed) != 1 {
			t.Fatalf("packList = %v, %v", listed, err)
		}
		if keepIdx {
			// Index open, pack data not yet: the .pack vanishing is
			// the window being tested.
			if _, ok, err := listed[0].find(objs[0].id); !ok || err != nil {
				t.Fatalf("find = %v, %v", ok, err)
			}
		}
		for _, ext := range []string{".idx", ".pack", ".rev"} {
			os.Remove(strings.TrimSuffix(packs[0], ".pack") + ext)
		}
		git(t, repo, packData, "unpack-objects", "-q")
		for _, o := range objs {
			if _, data, err := db.Read(o.id); err != nil || !bytes.Equal(data, o.data) {
				t.Fatalf("keepIdx=%v: Read(%s): %v", keepIdx, o.id, err)
			}
		}
		db.Close()
		// Back to a packed layout for the next round.
		git(t, repo, nil, "repack", "-q", "-a", "-d")
		git(t, repo, nil, "prune-packed")
		packs, _ = filepath.Glob(filepath.Join(dir, "pack", "pack-*.pack"))
	}
}

func TestCorruptLooseObject(t *testing.T) {
	requireGit(t)
	repo := filepath.Join(t.TempDir(), "r")
	git(t, t.TempDir(), nil, "init", "-q", repo)
	a := strings.TrimSpace(string(git(t, repo, []byte("object a"), "hash-object", "-w", "--stdin")))
	b := strings.TrimSpace(string(git(t, repo, []byte("object b"), "hash-object", "-w", "--stdin")))
	dir := objectsDir(repo)
	// Put b's bytes under a's name: well-formed, but the wrong object.
	pa, pb := filepath.Join(dir, a[:2], a[2:]), filepath.Join(dir, b[:2], b[2:])
	os.Chmod(pa, 0o644)
	data, _ := os.ReadFile(pb)
	if err := os.WriteFile(pa, data, 0o644); err != nil {
		t.Fatal(err)
	}
	db := openDB(t, dir)
	if _, _, err := db.Read(oid.MustParse(a)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Read(swapped object) error = %v, want ErrCorrupt", err)
	}
	// Truncated zlib stream.
	os.Chmod(pb, 0o644)
	if err := os.WriteFile(pb, data[:len(data)-3], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.Read(oid.MustParse(b)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Read(truncated object) error = %v, want ErrCorrupt", err)
	}
}

func TestLooseSymlinkOutsideRefused(t *testing.T) {
	requireGit(t)
	repo := filepath.Join(t.TempDir(), "r")
	git(t, t.TempDir(), nil, "init", "-q", repo)
	id := strings.TrimSpace(string(git(t, repo, []byte("outside"), "hash-object", "-w", "--stdin")))
	dir := objectsDir(repo)
	p := filepath.Join(dir, id[:2], id[2:])
	outside := filepath.Join(t.TempDir(), "obj")
	if err := os.Rename(p, outside); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, p); err != nil {
		t.Fatal(err)
	}
	db := openDB(t, dir)
	if _, _, err := db.Read(oid.MustParse(id)); err == nil {
		t.Fatal("read an object through a symlink leaving the objects directory")
	}
}

func TestOpenErrors(t *testing.T) {
	if _, err := Open(filepath.Join(t.TempDir(), "missing"), oid.SHA1); err == nil {
		t.Fatal("Open(missing dir, oid.SHA1) succeeded")
	}
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, nil, 0o644)
	if _, err := Open(f, oid.SHA1); err == nil {
		t.Fatal("Open(file, oid.SHA1) succeeded")
	}
	db, err := Open(t.TempDir(), oid.SHA1)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, _, err := db.Read(rawID(1)); err == nil || errors.Is(err, ErrNotFound) {
		t.Fatalf("Read after Close = %v, want a closed error", err)
	}
}

func TestCorruptIdxDoesNotHideOtherObjects(t *testing.T) {
	requireGit(t)
	repo := filepath.Join(t.TempDir(), "r")
	git(t, t.TempDir(), nil, "init", "-q", repo)
	dir := objectsDir(repo)
	id := strings.TrimSpace(string(git(t, repo, []byte("loose"), "hash-object", "-w", "--stdin")))
	os.MkdirAll(filepath.Join(dir, "pack"), 0o755)
	bad := filepath.Join(dir, "pack", "pack-"+strings.Repeat("1", 40))
	os.WriteFile(bad+".idx", []byte("\xfftOc\x00\x00\x00\x01garbage"), 0o644)
	os.WriteFile(bad+".pack", []byte("PACK"), 0o644)

	db := openDB(t, dir)
	if _, data, err := db.Read(oid.MustParse(id)); err != nil || string(data) != "loose" {
		t.Fatalf("Read(loose beside bad pack) = %q, %v", data, err)
	}
	_, _, err := db.Read(rawID(1))
	if !errors.Is(err, ErrNotFound) || !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("Read(missing) with bad pack = %v, want ErrNotFound naming the bad index", err)
	}
	// Has answers alike: present where another store has it, and for an
	// object none has, the bad index, never a plain "absent".
	if ok, err := db.Has(oid.MustParse(id)); !ok || err != nil {
		t.Fatalf("Has(loose beside bad pack) = %v, %v", ok, err)
	}
	if ok, err := db.Has(rawID(1)); ok || !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("Has(missing) with bad pack = %v, %v; want the bad index as the error", ok, err)
	}
}

// TestConcurrentRepack reads from one DB in several goroutines while git
// keeps rewriting the packs underneath it.
func TestConcurrentRepack(t *testing.T) {
	requireGit(t)
	repo := newHistoryRepo(t, 100)
	git(t, repo, nil, "repack", "-q", "-a", "-d")
	git(t, repo, nil, "reset", "-q", "--hard")
	objs := allObjects(t, repo)
	db := openDB(t, objectsDir(repo))

	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := w; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				o := objs[i%len(objs)]
				_, data, err := db.Read(o.id)
				if err != nil || !bytes.Equal(data, o.data) {
					t.Errorf("Read(%s) during repack: %v", o.id, err)
					return
				}
			}
		})
	}
	for i := range 6 {
		os.WriteFile(filepath.Join(repo, "README"), []byte(strings.Repeat("round\n", i+1)), 0o644)
		git(t, repo, nil, "commit", "-q", "-am", "round")
		args := []string{"repack", "-q", "-a", "-d"}
		if i%2 == 0 {
			args = append(args, "-f", "--window=5")
		}
		git(t, repo, nil, args...)
		git(t, repo, nil, "prune-packed")
	}
	close(stop)
	wg.Wait()
	checkAll(t, repo, db)
}

func TestEmptyTreeIsTheHashOfNoEntries(t *testing.T) {
	for _, f := range []oid.Format{oid.SHA1, oid.SHA256} {
		if got, want := (&DB{f: f}).emptyTree(), hashObject(f, plumbing.TreeObject, nil); got != want {
			t.Errorf("%v: emptyTree %s, the hash of an empty tree %s", f, got, want)
		}
	}
}
