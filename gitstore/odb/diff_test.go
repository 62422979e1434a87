package odb

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"github.com/nwdes/nwdes/gitstore/oid"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// diffLong runs the differential tests at full size: longer histories, a
// deeper delta chain and many more absent ids. The default size keeps the
// whole suite to a few seconds under -race.
var diffLong = flag.Bool("diff.long", false, "run the differential tests against git at full size")

// diffSize is how much each differential repository holds.
type diffSize struct {
	commits int // commits of the fast-import history (several files, tags)
	deep    int // versions of the one file whose deltas chain deeply
	absent  int // absent ids probed per shape, besides the fixed ones
	prefix  int // listed ids whose abbreviations are checked with Prefix
}

func diffSizes() diffSize {
	switch {
	case *diffLong:
		return diffSize{commits: 1500, deep: 1500, absent: 5000, prefix: 5000}
	}
	return diffSize{commits: 40, deep: 300, absent: 150, prefix: 60}
}

var (
	emptyTreeID = oid.MustParse("4b825dc642cb6eb9a060e54bf8d69288fbee4904")
	emptyBlobID = oid.MustParse("e69de29bb2d1d6434b8b29ae775ad8c2e48c5391")
)

// diffShape is one layout of an objects directory, made by git itself.
// build returns the work tree whose .git/objects the DB opens; it proves
// the layout is what its name says (packs counted, files present, chain
// depths measured by git verify-pack) so a change in git's defaults cannot
// quietly turn the shape into another. refused, when set, names the
// error every read must wrap instead of agreeing with git: the layout is
// one odb declines on purpose, and a refusal is the only acceptable answer.
type diffShape struct {
	name    string
	build   func(t *testing.T, sz diffSize) string
	refused error
}

var diffShapes = []diffShape{
	{name: "loose", build: func(t *testing.T, sz diffSize) string {
		repo := diffBase(t, sz, false)
		explode(t, repo)
		return repo
	}},
	{name: "loose-uncompressed", build: func(t *testing.T, sz diffSize) string {
		repo := diffBase(t, sz, false)
		explode(t, repo, "-c", "core.looseCompression=0")
		return repo
	}},
	{name: "one-pack", build: func(t *testing.T, sz diffSize) string {
		repo := diffBase(t, sz, false)
		git(t, repo, nil, "repack", "-q", "-a", "-d")
		git(t, repo, nil, "prune-packed")
		wantLayout(t, repo, 1, 1, 0, 0)
		return repo
	}},
	{name: "packed-and-loose-copies", build: func(t *testing.T, sz diffSize) string {
		// repack -a without -d keeps the old packs and every loose
		// object: most objects are stored two or three times.
		repo := diffBase(t, sz, false)
		git(t, repo, nil, "repack", "-q", "-a")
		wantLayout(t, repo, 2, -1, 1, -1)
		return repo
	}},
	{name: "many-packs", build: func(t *testing.T, sz diffSize) string {
		repo := diffBase(t, sz, false)
		manyPacks(t, repo)
		return repo
	}},
	{name: "multi-pack-index", build: func(t *testing.T, sz diffSize) string {
		repo := diffBase(t, sz, false)
		manyPacks(t, repo)
		git(t, repo, nil, "multi-pack-index", "write")
		wantFiles(t, repo, "pack/multi-pack-index", 1)
		return repo
	}},
	{name: "multi-pack-index-repacked-and-expired", build: func(t *testing.T, sz diffSize) string {
		// What git maintenance's incremental-repack task does: fold
		// the packs the index covers into one, then delete the packs
		// it no longer needs.
		repo := diffBase(t, sz, false)
		manyPacks(t, repo)
		git(t, repo, nil, "multi-pack-index", "write")
		git(t, repo, nil, "multi-pack-index", "repack", "--batch-size=0")
		git(t, repo, nil, "multi-pack-index", "expire")
		wantFiles(t, repo, "pack/multi-pack-index", 1)
		return repo
	}},
	{name: "bitmap", build: func(t *testing.T, sz diffSize) string {
		repo := diffBase(t, sz, false)
		git(t, repo, nil, "-c", "pack.writeReverseIndex=true", "repack", "-q", "-a", "-d", "-b")
		wantLayout(t, repo, 1, 1, 0, 0)
		wantFiles(t, repo, "pack/pack-*.bitmap", 1)
		wantFiles(t, repo, "pack/pack-*.rev", 1)
		return repo
	}},
	{name: "multi-pack-bitmap", build: func(t *testing.T, sz diffSize) string {
		repo := diffBase(t, sz, false)
		manyPacks(t, repo)
		git(t, repo, nil, "repack", "-q", "-d", "-b", "--write-midx")
		wantFiles(t, repo, "pack/multi-pack-index", 1)
		wantFiles(t, repo, "pack/multi-pack-index-*.bitmap", 1)
		return repo
	}},
	{name: "cruft", build: func(t *testing.T, sz diffSize) string {
		repo := diffBase(t, sz, false)
		unreachable(t, repo)
		git(t, repo, nil, "repack", "-q", "--cruft", "-d")
		wantFiles(t, repo, "pack/pack-*.mtimes", 1)
		wantLayout(t, repo, 2, 2, 0, 0)
		return repo
	}},
	{name: "alternates", build: func(t *testing.T, sz diffSize) string {
		// A shared clone of a packed repository, with objects of its
		// own both packed and loose, naming its alternate by a
		// relative path.
		src := diffBase(t, sz, false)
		git(t, src, nil, "repack", "-q", "-a", "-d")
		repo := filepath.Join(t.TempDir(), "shared")
		git(t, src, nil, "clone", "-q", "--shared", src, repo)
		rel, err := filepath.Rel(objectsDir(repo), objectsDir(src))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(objectsDir(repo), "info", "alternates"), []byte(rel+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		commitFiles(t, repo, "own", map[string][]byte{"own.txt": []byte("packed in the clone\n")})
		git(t, repo, nil, "repack", "-q", "-d", "-l")
		commitFiles(t, repo, "own loose", map[string][]byte{"own.txt": []byte("loose in the clone\n")})
		wantLayout(t, repo, 1, 1, 1, -1)
		return repo
	}},
	{name: "deep-delta-chains", build: func(t *testing.T, sz diffSize) string {
		repo := diffBase(t, sz, true)
		git(t, repo, nil, "repack", "-q", "-a", "-d", "-f", "--depth=250", "--window=250")
		git(t, repo, nil, "prune-packed")
		depth := maxChain(t, repo)
		if depth < 200 {
			t.Fatalf("longest delta chain after --depth=250 is %d", depth)
		}
		t.Logf("longest delta chain: %d links", depth)
		return repo
	}},
	{name: "ref-deltas", build: func(t *testing.T, sz diffSize) string {
		repo := diffBase(t, sz, false)
		git(t, repo, nil, "-c", "repack.useDeltaBaseOffset=false", "repack", "-q", "-a", "-d", "-f")
		git(t, repo, nil, "prune-packed")
		if n := entryTypes(t, objectsDir(repo))[plumbing.REFDeltaObject]; n < 100 {
			t.Fatalf("%d REF_DELTA entries", n)
		}
		return repo
	}},
	{name: "bulk-checkin", build: func(t *testing.T, sz diffSize) string {
		// Files over core.bigFileThreshold go straight into a pack of
		// their own as git add streams them.
		repo := diffBase(t, sz, false)
		before := countPacks(t, objectsDir(repo))
		rng := rand.New(rand.NewPCG(7, 8))
		big := make([]byte, 300<<10)
		for i := range big {
			big[i] = byte(rng.Uint32())
		}
		writeWorkFile(t, repo, "streamed.bin", big)
		git(t, repo, nil, "-c", "core.bigFileThreshold=64k", "add", "streamed.bin")
		git(t, repo, nil, "commit", "-q", "-m", "streamed")
		id := hashObject(oid.SHA1, plumbing.BlobObject, big)
		if countPacks(t, objectsDir(repo)) != before+1 || hasLooseFile(repo, id) {
			t.Fatalf("git add did not stream %s into a pack", id)
		}
		return repo
	}},
	{name: "large-offset-table", build: func(t *testing.T, sz diffSize) string {
		// --index-version=2,64 puts every object past byte 64 of the
		// pack in the 64-bit offset table, which otherwise only packs
		// over 2 GiB use.
		repo := diffBase(t, sz, false)
		git(t, repo, nil, "repack", "-q", "-a", "-d")
		git(t, repo, nil, "prune-packed")
		idx := reindex(t, repo, "--index-version=2,64")
		f, err := os.Open(idx)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		fi, _ := f.Stat()
		x, err := parseIdx(f, fi.Size(), oid.SHA1)
		if err != nil || x.nLarge < 100 {
			t.Fatalf("index rewritten with 64-bit offsets: %v entries in the large table, %v", x, err)
		}
		return repo
	}},
	{name: "index-version-1", refused: errors.ErrUnsupported, build: func(t *testing.T, sz diffSize) string {
		// git still reads (and, asked to, writes) version-1 indexes;
		// odb refuses them by name rather than misreading them.
		repo := diffBase(t, sz, false)
		git(t, repo, nil, "repack", "-q", "-a", "-d")
		git(t, repo, nil, "prune-packed")
		reindex(t, repo, "--index-version=1")
		return repo
	}},
	{name: "empty-tree-not-stored", build: func(t *testing.T, sz diffSize) string {
		// git commit-tree 4b825dc… is the usual way to make an empty
		// root commit, and git never writes the tree: it knows the
		// empty tree without storing it.
		repo := filepath.Join(t.TempDir(), "repo")
		git(t, t.TempDir(), nil, "init", "-q", repo)
		c := strings.TrimSpace(string(git(t, repo, nil, "commit-tree", "-m", "empty root", emptyTreeID.String())))
		git(t, repo, nil, "update-ref", "refs/heads/main", c)
		if hasLooseFile(repo, emptyTreeID) {
			t.Fatal("git commit-tree wrote the empty tree")
		}
		return repo
	}},
}

// TestReadAgreesWithGit builds each shape with git and reads every object
// git lists, comparing type, size and content byte for byte with git
// cat-file --batch, then checks that ids git does not have are ErrNotFound
// and that Prefix finds exactly the listed ids for abbreviations of them.
func TestReadAgreesWithGit(t *testing.T) {
	requireGit(t)
	sz := diffSizes()
	for _, shape := range diffShapes {
		t.Run(shape.name, func(t *testing.T) {
			t.Parallel()
			repo := shape.build(t, sz)
			if shape.refused != nil {
				checkRefused(t, repo, shape.refused)
				return
			}
			checkAgainstGit(t, repo, sz)
		})
	}
}

// listedObject is one line of git cat-file --batch-all-objects --batch-check.
type listedObject struct {
	id   oid.ID
	typ  plumbing.ObjectType
	size int64
}

// gitCatObject is git cat-file --batch's answer for one id; missing when
// git printed "<id> missing".
type gitCatObject struct {
	missing bool
	typ     plumbing.ObjectType
	data    []byte
}

// listObjects returns every object git cat-file --batch-all-objects lists
// in repo, alternates included.
func listObjects(t *testing.T, repo string) []listedObject {
	t.Helper()
	out := git(t, repo, nil, "cat-file", "--batch-all-objects", "--batch-check")
	var objs []listedObject
	for _, line := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("cat-file --batch-check line %q", line)
		}
		typ, err := plumbing.ParseObjectType(f[1])
		if err != nil {
			t.Fatalf("cat-file --batch-check line %q: %v", line, err)
		}
		size, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			t.Fatalf("cat-file --batch-check line %q: %v", line, err)
		}
		objs = append(objs, listedObject{oid.MustParse(f[0]), typ, size})
	}
	return objs
}

// catFile asks one git cat-file --batch process for every id.
func catFile(t *testing.T, repo string, ids []oid.ID) map[oid.ID]gitCatObject {
	t.Helper()
	var in bytes.Buffer
	for _, id := range ids {
		fmt.Fprintln(&in, id)
	}
	r := bufio.NewReader(bytes.NewReader(git(t, repo, in.Bytes(), "cat-file", "--batch")))
	got := make(map[oid.ID]gitCatObject, len(ids))
	for _, id := range ids {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("cat-file --batch: answer for %s: %v", id, err)
		}
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == id.String() && f[1] == "missing":
			got[id] = gitCatObject{missing: true}
			continue
		case len(f) != 3 || f[0] != id.String():
			t.Fatalf("cat-file --batch: answer for %s is %q", id, line)
		}
		typ, err := plumbing.ParseObjectType(f[1])
		if err != nil {
			t.Fatalf("cat-file --batch: %q: %v", line, err)
		}
		n, err := strconv.Atoi(f[2])
		if err != nil {
			t.Fatalf("cat-file --batch: %q: %v", line, err)
		}
		data := make([]byte, n+1)
		if _, err := io.ReadFull(r, data); err != nil || data[n] != '\n' {
			t.Fatalf("cat-file --batch: body of %s: %v", id, err)
		}
		got[id] = gitCatObject{typ: typ, data: data[:n]}
	}
	if rest, _ := io.ReadAll(r); len(rest) > 0 {
		t.Fatalf("cat-file --batch: %d bytes after the last answer", len(rest))
	}
	return got
}

// absentIDs returns ids git does not list: neighbours of listed ids in the
// same fanout bucket (the last bit flipped, the tail randomised), the
// first and last possible ids, and random ones.
func absentIDs(listed map[oid.ID]bool, ids []oid.ID, n int) []oid.ID {
	rng := rand.New(rand.NewPCG(11, uint64(n)))
	out := []oid.ID{oid.MustParse(strings.Repeat("00", 19) + "01"), oid.MustParse(strings.Repeat("ff", 20))}
	for len(out) < n+2 {
		var d [hashLen]byte
		switch i := len(out); {
		case i%3 == 0 && len(ids) > 0:
			copy(d[:], ids[rng.IntN(len(ids))].Bytes())
			d[hashLen-1] ^= 1
		case i%3 == 1 && len(ids) > 0:
			copy(d[:], ids[rng.IntN(len(ids))].Bytes())
			for j := 1 + rng.IntN(hashLen-1); j < hashLen; j++ {
				d[j] = byte(rng.Uint32())
			}
		default:
			for j := range d {
				d[j] = byte(rng.Uint32())
			}
		}
		h := rawID(d[:]...)
		if !listed[h] && h != emptyTreeID && !h.IsZero() {
			out = append(out, h)
		}
	}
	return out
}

// checkAgainstGit is the differential check of one repository.
func checkAgainstGit(t *testing.T, repo string, sz diffSize) {
	t.Helper()
	objs := listObjects(t, repo)
	listed := make(map[oid.ID]bool, len(objs))
	ids := make([]oid.ID, 0, len(objs))
	kinds := map[plumbing.ObjectType]int{}
	var largest int64
	for _, o := range objs {
		listed[o.id] = true
		ids = append(ids, o.id)
		kinds[o.typ]++
		largest = max(largest, o.size)
	}
	absent := absentIDs(listed, ids, sz.absent)
	probes := slices.Concat(ids, absent, []oid.ID{emptyTreeID, emptyBlobID})
	want := catFile(t, repo, probes)

	db := openDB(t, objectsDir(repo))
	const workers = 4
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(probes); i += workers {
				compareObject(t, db, probes[i], want[probes[i]], i < len(objs), sizeOf(objs, i))
			}
		})
	}
	wg.Wait()
	prefixes := comparePrefixes(t, db, ids, sz.prefix)
	t.Logf("%d objects (%d commits, %d trees, %d blobs, %d tags; largest %d bytes), %d absent ids, %d prefixes: all as git says",
		len(objs), kinds[plumbing.CommitObject], kinds[plumbing.TreeObject], kinds[plumbing.BlobObject], kinds[plumbing.TagObject],
		largest, len(absent), prefixes)
}

func sizeOf(objs []listedObject, i int) int64 {
	if i < len(objs) {
		return objs[i].size
	}
	return -1
}

// compareObject checks what db says of id against git's answer. listed
// objects must also have the size --batch-check gave.
func compareObject(t *testing.T, db *DB, id oid.ID, want gitCatObject, listed bool, size int64) {
	typ, data, err := db.Read(id)
	has, herr := db.Has(id)
	switch {
	case listed && want.missing:
		t.Errorf("git lists %s but cat-file --batch says it is missing", id)
	case want.missing:
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("Read(%s), which git does not have: %v, %d bytes; want ErrNotFound", id, err, len(data))
		}
		if has || herr != nil {
			t.Errorf("Has(%s), which git does not have: %v, %v", id, has, herr)
		}
	case err != nil:
		t.Errorf("Read(%s): %v; git reads a %s of %d bytes", id, err, want.typ, len(want.data))
	case typ != want.typ || !bytes.Equal(data, want.data):
		t.Errorf("Read(%s) = %s of %d bytes; git reads a %s of %d bytes%s", id, typ, len(data), want.typ, len(want.data), firstDiff(data, want.data))
	case listed && int64(len(data)) != size:
		t.Errorf("Read(%s) = %d bytes; git cat-file --batch-check says %d", id, len(data), size)
	case !has || herr != nil:
		t.Errorf("Has(%s) = %v, %v; git reads it", id, has, herr)
	}
}

func firstDiff(a, b []byte) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf(", first difference at byte %d", i)
		}
	}
	return ""
}

// comparePrefixes checks Prefix against the listing for abbreviations of
// n listed ids (all of them if fewer) at lengths 1 to 40, and returns how
// many prefixes it checked.
func comparePrefixes(t *testing.T, db *DB, ids []oid.ID, n int) int {
	t.Helper()
	hexes := make([]string, len(ids))
	for i, id := range ids {
		hexes[i] = id.String()
	}
	slices.Sort(hexes)
	rng := rand.New(rand.NewPCG(13, 14))
	checked := 0
	for i := range min(n, len(hexes)) {
		h := hexes[i]
		if len(hexes) > n {
			h = hexes[rng.IntN(len(hexes))]
		}
		for _, k := range []int{1, 2, 3, 4, 5, 6, 7, 8, 12, 20, 39, 40} {
			p := h[:k]
			lo, _ := slices.BinarySearch(hexes, p)
			hi := lo
			for hi < len(hexes) && strings.HasPrefix(hexes[hi], p) {
				hi++
			}
			got, err := db.Prefix(strings.ToUpper(p[:k/2])+p[k/2:], 0)
			if err != nil {
				t.Errorf("Prefix(%s): %v", p, err)
				continue
			}
			if !slices.Equal(hexesOf(got), hexes[lo:hi]) {
				t.Errorf("Prefix(%s) = %d ids, git lists %d", p, len(got), hi-lo)
			}
			checked++
		}
	}
	return checked
}

func hexesOf(ids []oid.ID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.String()
	}
	return out
}

// checkRefused reads every object git lists and requires each read to
// fail with an error wrapping want: never content, never a plain miss.
func checkRefused(t *testing.T, repo string, want error) {
	t.Helper()
	objs := listObjects(t, repo)
	db := openDB(t, objectsDir(repo))
	for _, o := range objs {
		if o.id == emptyTreeID {
			continue // read without a store, as git reads it
		}
		if _, _, err := db.Read(o.id); !errors.Is(err, want) {
			t.Fatalf("Read(%s) = %v; want a refusal wrapping %v", o.id, err, want)
		}
	}
	t.Logf("%d objects git reads, every one refused with %v", len(objs), want)
}

// deepStream is a fast-import stream of n commits on refs/heads/deep, each
// rewriting one line, chosen at random, of the same 50-line file. Each
// version is then closest to its neighbours in history, so a repack with a
// large --depth chains the versions one onto the next.
func deepStream(n int) []byte {
	rng := rand.New(rand.NewPCG(9, 10))
	lines := make([]string, 50)
	for i := range lines {
		lines[i] = fmt.Sprintf("deep line %d", i)
	}
	var b bytes.Buffer
	for c := 1; c <= n; c++ {
		lines[rng.IntN(len(lines))] = fmt.Sprintf("deep line rewritten in commit %d", c)
		body := strings.Join(lines, "\n") + "\n"
		fmt.Fprintf(&b, "commit refs/heads/deep\ncommitter C O Mitter <committer@example.com> %d +0000\n", 1700000000+c)
		fmt.Fprintf(&b, "data 5\ndeep\nM 100644 inline deep.txt\ndata %d\n%s\n", len(body), body)
	}
	return b.Bytes()
}

// diffBase builds the repository every shape starts from: a history with
// several files, annotated tags and file modes (fast-import), a branch of
// versions of one file (sz.deep of them if deep is set, else a few), and
// then, written by git's porcelain, the
// empty blob and tree (the tree tagged, so that repacks keep it), two blobs
// over 64 KiB (one compressible, one not), and annotated tags of a commit,
// a tree, a blob and of tags (two levels).
func diffBase(t *testing.T, sz diffSize, deep bool) string {
	t.Helper()
	repo := newHistoryRepo(t, sz.commits)
	versions := 20
	if deep {
		versions = sz.deep
	}
	git(t, repo, deepStream(versions), "fast-import", "--quiet")
	git(t, repo, nil, "reset", "-q", "--hard")
	if got := strings.TrimSpace(string(git(t, repo, nil, "mktree"))); got != emptyTreeID.String() {
		t.Fatalf("git mktree of nothing = %s", got)
	}
	if got := strings.TrimSpace(string(git(t, repo, []byte{}, "hash-object", "-w", "--stdin"))); got != emptyBlobID.String() {
		t.Fatalf("git hash-object of nothing = %s", got)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	noise := make([]byte, 96<<10)
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	var text strings.Builder
	for i := 0; text.Len() < 300<<10; i++ {
		fmt.Fprintf(&text, "line %d of a large compressible file\n", i)
	}
	commitFiles(t, repo, "large blobs", map[string][]byte{
		"large/noise.bin": noise,
		"large/text.txt":  []byte(text.String()),
		"large/empty":     nil,
	})
	for _, args := range [][]string{
		{"tag", "-a", "-m", "a commit", "t-commit", "HEAD"},
		{"tag", "-a", "-m", "a tree", "t-tree", "HEAD^{tree}"},
		{"tag", "-a", "-m", "a blob", "t-blob", "HEAD:large/text.txt"},
		{"tag", "-a", "-m", "a tag", "t-tag", "t-commit"},
		{"tag", "-a", "-m", "a tag of a tag", "t-tag-tag", "t-tag"},
		{"tag", "light", "HEAD~1"},
		{"tag", "empty-tree", emptyTreeID.String()},
	} {
		git(t, repo, nil, args...)
	}
	return repo
}

// commitFiles writes files into repo's work tree and commits them.
func commitFiles(t *testing.T, repo, msg string, files map[string][]byte) {
	t.Helper()
	for name, data := range files {
		writeWorkFile(t, repo, name, data)
	}
	git(t, repo, nil, "add", "-A")
	git(t, repo, nil, "commit", "-q", "-m", msg)
}

// writeWorkFile writes a file into repo's work tree.
func writeWorkFile(t *testing.T, repo, name string, data []byte) {
	t.Helper()
	p := filepath.Join(repo, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// explode turns every pack of repo into loose objects.
func explode(t *testing.T, repo string, gitArgs ...string) {
	t.Helper()
	packs, _ := filepath.Glob(filepath.Join(objectsDir(repo), "pack", "pack-*.pack"))
	for _, p := range packs {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		base := strings.TrimSuffix(p, ".pack")
		for _, ext := range []string{".pack", ".idx", ".rev"} {
			os.Remove(base + ext)
		}
		git(t, repo, data, append(gitArgs, "unpack-objects", "-q")...)
	}
	wantLayout(t, repo, 0, 0, 1, -1)
}

// manyPacks adds five commits, each packed on its own by an incremental
// repack, and leaves a few more loose.
func manyPacks(t *testing.T, repo string) {
	t.Helper()
	for i := range 5 {
		commitFiles(t, repo, fmt.Sprintf("round %d", i), map[string][]byte{
			"rounds.txt":                   []byte(strings.Repeat(fmt.Sprintf("round %d\n", i), 50+i)),
			fmt.Sprintf("round/%d.txt", i): fmt.Appendf(nil, "only in round %d\n", i),
		})
		git(t, repo, nil, "repack", "-q", "-d")
	}
	commitFiles(t, repo, "loose on top", map[string][]byte{"rounds.txt": []byte("loose\n")})
	wantLayout(t, repo, 6, -1, 1, -1)
}

// unreachable leaves objects no ref or reflog reaches: a deleted branch's
// commits and blobs written but never committed.
func unreachable(t *testing.T, repo string) {
	t.Helper()
	git(t, repo, nil, "checkout", "-q", "-b", "doomed")
	for i := range 3 {
		commitFiles(t, repo, fmt.Sprintf("doomed %d", i), map[string][]byte{"doomed.txt": fmt.Appendf(nil, "doomed %d\n", i)})
	}
	git(t, repo, nil, "checkout", "-q", "main")
	git(t, repo, nil, "branch", "-q", "-D", "doomed")
	for i := range 5 {
		git(t, repo, fmt.Appendf(nil, "never committed %d\n", i), "hash-object", "-w", "--stdin")
	}
	git(t, repo, nil, "reflog", "expire", "--expire=all", "--all")
}

// reindex rewrites the index of repo's only pack with index-pack args and
// returns its path.
func reindex(t *testing.T, repo string, args ...string) string {
	t.Helper()
	wantLayout(t, repo, 1, 1, 0, 0)
	idxs, _ := filepath.Glob(filepath.Join(objectsDir(repo), "pack", "pack-*.idx"))
	pack := strings.TrimSuffix(idxs[0], ".idx") + ".pack"
	if err := os.Remove(idxs[0]); err != nil {
		t.Fatal(err)
	}
	git(t, repo, nil, append(append([]string{"index-pack"}, args...), "-o", idxs[0], pack)...)
	return idxs[0]
}

// wantLayout fails unless repo has packs in [minPacks, maxPacks] and loose
// objects in [minLoose, maxLoose]; a negative maximum is no bound.
func wantLayout(t *testing.T, repo string, minPacks, maxPacks, minLoose, maxLoose int) {
	t.Helper()
	p, l := countPacks(t, objectsDir(repo)), countLoose(t, objectsDir(repo))
	if p < minPacks || maxPacks >= 0 && p > maxPacks || l < minLoose || maxLoose >= 0 && l > maxLoose {
		t.Fatalf("layout: %d packs, %d loose objects; want packs in [%d, %d], loose in [%d, %d]", p, l, minPacks, maxPacks, minLoose, maxLoose)
	}
}

func wantFiles(t *testing.T, repo, pattern string, n int) {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(objectsDir(repo), filepath.FromSlash(pattern)))
	if len(m) != n {
		t.Fatalf("%d files match objects/%s, want %d", len(m), pattern, n)
	}
}

func hasLooseFile(repo string, id oid.ID) bool {
	_, err := os.Stat(filepath.Join(objectsDir(repo), filepath.FromSlash(loosePath(id))))
	return err == nil
}

var chainLine = regexp.MustCompile(`(?m)^chain length = (\d+): \d+ objects?$`)

// maxChain is the longest delta chain git verify-pack reports in repo's packs.
func maxChain(t *testing.T, repo string) int {
	t.Helper()
	idxs, _ := filepath.Glob(filepath.Join(objectsDir(repo), "pack", "pack-*.idx"))
	longest := 0
	for _, idx := range idxs {
		cmd := exec.Command("git", "verify-pack", "-v", idx)
		cmd.Dir = repo
		cmd.Env = gitEnv(repo)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git verify-pack: %v", err)
		}
		for _, m := range chainLine.FindAllStringSubmatch(string(out), -1) {
			n, _ := strconv.Atoi(m[1])
			longest = max(longest, n)
		}
	}
	return longest
}
