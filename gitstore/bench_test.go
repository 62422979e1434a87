package gitstore_test

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nwdes/nwdes/gitstore/oid"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/internal/gittest"
)

// Every nwdes benchmark here has a git CLI twin that does the same work in
// the same run, so that the ratio is visible (docs/performance.md). The
// twins write byte-identical trees: TestBenchTwinsWriteIdenticalTrees
// checks it. Where git needs a tree id before it has written the tree
// (mktree --batch writes a subtree and the tree that names it in one
// process), the id is computed in-process with SHA-1, which flatters the
// CLI slightly.

const (
	benchRef  gitstore.RefName = "refs/nwdes/bench"
	benchKind gitstore.Kind    = "bench.record"
)

type benchBody struct {
	I int `json:"i"`
	K int `json:"k"`
	G int `json:"g"`
}

func benchRecord(tb testing.TB, body benchBody) *gitstore.Record {
	rec, err := gitstore.NewRecord(benchKind, 1, body)
	if err != nil {
		tb.Fatal(err)
	}
	return rec
}

// benchRecordJSON is the record.json a Put of benchRecord(body) writes.
func benchRecordJSON(tb testing.TB, body benchBody) []byte {
	b, err := gitstore.Canonical(map[string]any{"body": body, "kind": benchKind, "v": 1})
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// ---- git CLI twins ----

// gitTreeEntry is one line of git mktree input.
type gitTreeEntry struct {
	mode, typ, id, name string
}

// gitTreeID computes the id git gives a tree of entries (sorted as git
// sorts them: a tree's name compares as if it ended in "/").
func gitTreeID(entries []gitTreeEntry) string {
	es := append([]gitTreeEntry(nil), entries...)
	key := func(e gitTreeEntry) string {
		if e.typ == "tree" {
			return e.name + "/"
		}
		return e.name
	}
	sort.Slice(es, func(i, j int) bool { return key(es[i]) < key(es[j]) })
	var body bytes.Buffer
	for _, e := range es {
		mode := e.mode
		if mode == "040000" {
			mode = "40000"
		}
		raw, _ := hex.DecodeString(e.id)
		body.WriteString(mode + " " + e.name + "\x00")
		body.Write(raw)
	}
	h := sha1.New()
	fmt.Fprintf(h, "tree %d\x00", body.Len())
	h.Write(body.Bytes())
	return hex.EncodeToString(h.Sum(nil))
}

func mktreeInput(trees ...[]gitTreeEntry) []byte {
	var b bytes.Buffer
	for _, t := range trees {
		for _, e := range t {
			fmt.Fprintf(&b, "%s %s %s\t%s\n", e.mode, e.typ, e.id, e.name)
		}
		b.WriteString("\n")
	}
	return b.Bytes()
}

// cliWriter appends to a ref with the git CLI only: hash-object -w,
// mktree, commit-tree -p and update-ref NEW OLD, one process each.
type cliWriter struct {
	dir    string
	env    []string
	config []string // -c options, e.g. for fsync
	ref    string
	tip    string // the ref's value as this writer last set it
	procs  int    // processes started
}

func newCLIWriter(dir string, ref gitstore.RefName, config ...string) *cliWriter {
	return &cliWriter{dir: dir, env: gittest.Env(filepath.Dir(dir)), config: config, ref: string(ref)}
}

func (w *cliWriter) git(stdin []byte, args ...string) (string, error) {
	w.procs++
	cmd := exec.Command("git", append(append([]string(nil), w.config...), args...)...)
	cmd.Dir = w.dir
	cmd.Env = w.env
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, errOut.String())
	}
	return strings.TrimSpace(out.String()), nil
}

// records writes recs (path -> record.json) as blobs and returns the root
// tree id holding each at path/record.json. All paths are one or two
// components deep ("latest" or "batch/<k>").
func (w *cliWriter) tree(paths []string, jsons [][]byte, scratch string) (string, error) {
	var ids []string
	if len(jsons) == 1 {
		id, err := w.git(jsons[0], "hash-object", "-w", "--stdin")
		if err != nil {
			return "", err
		}
		ids = []string{id}
	} else {
		var list bytes.Buffer
		for i, j := range jsons {
			p := filepath.Join(scratch, strconv.Itoa(i))
			if err := os.WriteFile(p, j, 0o644); err != nil {
				return "", err
			}
			list.WriteString(p + "\n")
		}
		out, err := w.git(list.Bytes(), "hash-object", "-w", "--stdin-paths")
		if err != nil {
			return "", err
		}
		ids = strings.Fields(out)
		if len(ids) != len(jsons) {
			return "", fmt.Errorf("hash-object: %d ids for %d files", len(ids), len(jsons))
		}
	}
	// One mktree --batch writes every tree, innermost first.
	var trees [][]gitTreeEntry
	var want []string
	top := map[string][]gitTreeEntry{} // "" is the root; "batch" a directory
	for i, p := range paths {
		sub := []gitTreeEntry{{"100644", "blob", ids[i], "record.json"}}
		subID := gitTreeID(sub)
		trees = append(trees, sub)
		want = append(want, subID)
		dir, name := "", p
		if k := strings.LastIndexByte(p, '/'); k >= 0 {
			dir, name = p[:k], p[k+1:]
		}
		top[dir] = append(top[dir], gitTreeEntry{"040000", "tree", subID, name})
	}
	for dir, es := range top {
		if dir == "" {
			continue
		}
		id := gitTreeID(es)
		trees = append(trees, es)
		want = append(want, id)
		top[""] = append(top[""], gitTreeEntry{"040000", "tree", id, dir})
	}
	trees = append(trees, top[""])
	want = append(want, gitTreeID(top[""]))
	out, err := w.git(mktreeInput(trees...), "mktree", "--batch")
	if err != nil {
		return "", err
	}
	got := strings.Fields(out)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		return "", fmt.Errorf("mktree wrote %v, computed %v", got, want)
	}
	return got[len(got)-1], nil
}

// commit writes a commit of tree on top of parent (none if empty) and moves
// the ref from old to it; ok is false when update-ref refused because the
// ref no longer held old.
func (w *cliWriter) commit(tree, parent, old, msg string) (string, bool, error) {
	args := []string{"commit-tree", tree, "-m", msg}
	if parent != "" {
		args = append(args, "-p", parent)
	}
	c, err := w.git(nil, args...)
	if err != nil {
		return "", false, err
	}
	if old == "" {
		old = oid.Zero.String()
	}
	if _, err := w.git(nil, "update-ref", w.ref, c, old); err != nil {
		if strings.Contains(err.Error(), "but expected") || strings.Contains(err.Error(), "reference already exists") || strings.Contains(err.Error(), "cannot lock ref") {
			return c, false, nil
		}
		return c, false, err
	}
	return c, true, nil
}

// appendRecords is the single-writer CLI append: the writer knows the tip
// it set last, so four processes suffice.
func (w *cliWriter) appendRecords(paths []string, jsons [][]byte, scratch, msg string) error {
	tree, err := w.tree(paths, jsons, scratch)
	if err != nil {
		return err
	}
	c, ok, err := w.commit(tree, w.tip, w.tip, msg)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("update-ref refused a single writer")
	}
	w.tip = c
	return nil
}

// ---- appends ----

func benchStore(b *testing.B, durable bool) (string, *gitstore.Store) {
	dir := gittest.Init(b, false)
	return dir, stOpenStore(b, dir, gitstore.Options{Durable: durable})
}

func benchAppendOne(b *testing.B, durable bool) {
	dir, s := benchStore(b, durable)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rec := benchRecord(b, benchBody{I: i})
		if _, err := s.Change(ctx, benchRef, "append", func(tx gitstore.Edit) error {
			return tx.Put("latest", rec)
		}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
	benchCheckCount(b, dir, b.N)
}

func benchCheckCount(b *testing.B, dir string, n int) {
	b.Helper()
	if got := gittest.Git(b, dir, "rev-list", "--count", string(benchRef)); got != strconv.Itoa(n) {
		b.Fatalf("%s has %s commits, want %d", benchRef, got, n)
	}
}

func benchAppendOneCLI(b *testing.B, config ...string) {
	dir := gittest.Init(b, false)
	w := newCLIWriter(dir, benchRef, config...)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j := benchRecordJSON(b, benchBody{I: i})
		if err := w.appendRecords([]string{"latest"}, [][]byte{j}, "", "append"); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
	b.ReportMetric(float64(w.procs)/float64(b.N), "procs/op")
	benchCheckCount(b, dir, b.N)
}

// BenchmarkAppendOne: one Update putting one record, on one ref.
func BenchmarkAppendOne(b *testing.B) { benchAppendOne(b, false) }

// BenchmarkAppendOneGitCLI: the same commit made with hash-object -w,
// mktree, commit-tree -p and update-ref NEW OLD.
func BenchmarkAppendOneGitCLI(b *testing.B) { benchAppendOneCLI(b) }

// BenchmarkAppendOneDurable: as AppendOne with Options{Durable: true}:
// the pack, its index and the ref's lock file fsynced together, then
// objects/pack, then the ref's rename and an fsync of its directory.
func BenchmarkAppendOneDurable(b *testing.B) { benchAppendOne(b, true) }

// BenchmarkAppendOneDurableGitCLI: the CLI twin with git's own durability
// switched on (core.fsync=committed: objects and refs; fsyncMethod=fsync).
func BenchmarkAppendOneDurableGitCLI(b *testing.B) {
	benchAppendOneCLI(b, "-c", "core.fsync=committed", "-c", "core.fsyncMethod=fsync")
}

// BenchmarkDurableFloor: the least a durable update of one file can cost:
// write a small file, fsync it, rename it into place, fsync the directory.
// BenchmarkAppendOneDurable is compared with it (goal: at most 2x).
func BenchmarkDurableFloor(b *testing.B) {
	dir := b.TempDir()
	data := benchRecordJSON(b, benchBody{})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tmp := filepath.Join(dir, "tmp_"+strconv.Itoa(i))
		f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.Write(data); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, "file")); err != nil {
			b.Fatal(err)
		}
		d, err := os.Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		if err := d.Sync(); err != nil {
			b.Fatal(err)
		}
		d.Close()
	}
}

const batchSize = 100

func batchPaths() []string {
	p := make([]string, batchSize)
	for k := range p {
		p[k] = "batch/" + strconv.Itoa(k)
	}
	return p
}

// BenchmarkAppendBatch100: one Update putting 100 records.
func BenchmarkAppendBatch100(b *testing.B) {
	dir, s := benchStore(b, false)
	ctx := context.Background()
	paths := batchPaths()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		recs := make([]*gitstore.Record, batchSize)
		for k := range recs {
			recs[k] = benchRecord(b, benchBody{I: i, K: k})
		}
		if _, err := s.Change(ctx, benchRef, "batch", func(tx gitstore.Edit) error {
			for k, rec := range recs {
				if err := tx.Put(paths[k], rec); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N*batchSize)/b.Elapsed().Seconds(), "records/s")
	benchCheckCount(b, dir, b.N)
}

// BenchmarkAppendBatch100GitCLI: 100 files through hash-object -w
// --stdin-paths, one mktree --batch for the 102 trees, commit-tree,
// update-ref.
func BenchmarkAppendBatch100GitCLI(b *testing.B) {
	dir := gittest.Init(b, false)
	w := newCLIWriter(dir, benchRef)
	scratch := b.TempDir()
	benchBatchTwin(b, dir, func(paths []string, jsons [][]byte) error {
		return w.appendRecords(paths, jsons, scratch, "batch")
	})
	b.ReportMetric(float64(w.procs)/float64(b.N), "procs/op")
}

// benchBatchTwin times write(100 records) b.N times and checks that dir's
// bench ref grew by b.N commits.
func benchBatchTwin(b *testing.B, dir string, write func(paths []string, jsons [][]byte) error) {
	paths := batchPaths()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		jsons := make([][]byte, batchSize)
		for k := range jsons {
			jsons[k] = benchRecordJSON(b, benchBody{I: i, K: k})
		}
		if err := write(paths, jsons); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N*batchSize)/b.Elapsed().Seconds(), "records/s")
	benchCheckCount(b, dir, b.N)
}

// fastImport writes one commit holding paths (each at <path>/record.json)
// with a single `git fast-import` process: the blobs, every tree and the
// commit go into one pack, and the ref moves only if the new commit
// descends from the writer's last tip (fast-import refuses anything else
// without --force).
func (w *cliWriter) fastImport(paths []string, jsons [][]byte, msg string) error {
	var s bytes.Buffer
	fmt.Fprintf(&s, "commit %s\nmark :1\ncommitter Tester <tester@example.com> 1767225600 +0000\ndata %d\n%s\n", w.ref, len(msg), msg)
	if w.tip != "" {
		fmt.Fprintf(&s, "from %s\n", w.tip)
	}
	s.WriteString("deleteall\n")
	for k, p := range paths {
		fmt.Fprintf(&s, "M 100644 inline %s/record.json\ndata %d\n", p, len(jsons[k]))
		s.Write(jsons[k])
		s.WriteByte('\n')
	}
	// get-mark prints the commit's id on stdout, the `from` of the next batch.
	s.WriteString("get-mark :1\n")
	tip, err := w.git(s.Bytes(), "fast-import", "--quiet")
	if err != nil {
		return err
	}
	if len(tip) != 40 {
		return fmt.Errorf("fast-import: get-mark printed %q", tip)
	}
	w.tip = tip
	return nil
}

// BenchmarkAppendBatch100FastImport: the same 100 records, trees and
// commit as AppendBatch100, written by one `git fast-import` process per
// batch (one pack per batch, git's fastest bulk writer).
func BenchmarkAppendBatch100FastImport(b *testing.B) {
	dir := gittest.Init(b, false)
	w := newCLIWriter(dir, benchRef)
	benchBatchTwin(b, dir, func(paths []string, jsons [][]byte) error {
		return w.fastImport(paths, jsons, "batch")
	})
}

// TestBenchTwinsWriteIdenticalTrees: the git CLI twins do the same work as
// the store: for the same records they write the same trees.
func TestBenchTwinsWriteIdenticalTrees(t *testing.T) {
	for _, tc := range []struct {
		name  string
		paths []string
	}{{"one", []string{"latest"}}, {"batch", batchPaths()}} {
		nd := gittest.Init(t, false)
		s := stOpenStore(t, nd, gitstore.Options{})
		cd := gittest.Init(t, false)
		w := newCLIWriter(cd, benchRef)
		fd := gittest.Init(t, false)
		fw := newCLIWriter(fd, benchRef)
		for i := 0; i < 2; i++ {
			jsons := make([][]byte, len(tc.paths))
			for k := range jsons {
				jsons[k] = benchRecordJSON(t, benchBody{I: i, K: k})
			}
			if _, err := s.Change(context.Background(), benchRef, "x", func(tx gitstore.Edit) error {
				for k, p := range tc.paths {
					if err := tx.Put(p, benchRecord(t, benchBody{I: i, K: k})); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if err := w.appendRecords(tc.paths, jsons, t.TempDir(), "x"); err != nil {
				t.Fatal(err)
			}
			if err := fw.fastImport(tc.paths, jsons, "x"); err != nil {
				t.Fatal(err)
			}
			nt := gittest.Git(t, nd, "rev-parse", string(benchRef)+"^{tree}")
			ct := gittest.Git(t, cd, "rev-parse", string(benchRef)+"^{tree}")
			ft := gittest.Git(t, fd, "rev-parse", string(benchRef)+"^{tree}")
			if nt != ct || nt != ft {
				t.Fatalf("%s, append %d: store wrote tree %s, git CLI twin %s, fast-import twin %s", tc.name, i, nt, ct, ft)
			}
		}
		for _, d := range []string{nd, cd, fd} {
			if n := gittest.Git(t, d, "rev-list", "--count", string(benchRef)); n != "2" {
				t.Fatalf("%s: %s commits, want 2", tc.name, n)
			}
			gittest.Git(t, d, "fsck", "--strict", "--no-dangling")
		}
	}
}

// ---- fixtures shared between benchmarks ----

const historyLen = 10_000

// buildHistory writes refs/nwdes/bench with historyLen commits, each
// replacing the record at latest/, through git fast-import.
func buildHistory(dir string) error {
	var in bytes.Buffer
	for i := 1; i <= historyLen; i++ {
		j, err := gitstore.Canonical(map[string]any{"body": benchBody{I: i}, "kind": benchKind, "v": 1})
		if err != nil {
			return err
		}
		msg := "append " + strconv.Itoa(i) + "\n"
		fmt.Fprintf(&in, "commit %s\ncommitter %s %d +0000\ndata %d\n%s", benchRef, gitstore.Identity, 1767225600+i, len(msg), msg)
		fmt.Fprintf(&in, "M 100644 inline latest/record.json\ndata %d\n%s\n\n", len(j), j)
	}
	_, err := gittest.Pipe(dir, in.Bytes(), "fast-import", "--quiet")
	return err
}

// BenchmarkReadLatestLongHistory: read the newest record of a ref with
// 10,000 commits. "warm" reuses one open Store, as a long-running process
// does; "open-each" opens a Store for every read (Discover, Open,
// Records, Get), which includes reading the pack index.
func BenchmarkReadLatestLongHistory(b *testing.B) {
	dir := gittest.Fixture(b, "history", buildHistory)
	read := func(b *testing.B, s *gitstore.Store) {
		tx, err := s.Records(benchRef)
		if err != nil {
			b.Fatal(err)
		}
		rec, err := tx.Get("latest")
		if err != nil {
			b.Fatal(err)
		}
		var body benchBody
		if err := rec.Decode(&body); err != nil || body.I != historyLen {
			b.Fatalf("latest = %+v, %v", body, err)
		}
	}
	b.Run("warm", func(b *testing.B) {
		s := stOpenStore(b, dir, gitstore.Options{})
		read(b, s)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			read(b, s)
		}
	})
	b.Run("open-each", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			read(b, stOpenStore(b, dir, gitstore.Options{}))
		}
	})
}

// BenchmarkReadLatestLongHistoryGitCLI: git cat-file -p <ref>:<path>.
func BenchmarkReadLatestLongHistoryGitCLI(b *testing.B) {
	dir := gittest.Fixture(b, "history", buildHistory)
	env := gittest.Env(filepath.Dir(dir))
	want := fmt.Sprintf(`"i":%d`, historyLen)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cmd := exec.Command("git", "cat-file", "-p", string(benchRef)+":latest/record.json")
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.Output()
		if err != nil || !bytes.Contains(out, []byte(want)) {
			b.Fatalf("cat-file: %q, %v", out, err)
		}
	}
}

// ---- a note read by a fresh process ----

const (
	bigCommits = 10
	bigFiles   = 10_000 // per commit: 100,000 blobs in all
)

// buildBig writes 100,000 small blobs in 10 commits on main with git
// fast-import and repacks everything into one pack.
func buildBig(dir string) error {
	var in bytes.Buffer
	for c := 0; c < bigCommits; c++ {
		msg := fmt.Sprintf("bulk %d\n", c)
		fmt.Fprintf(&in, "commit refs/heads/main\ncommitter Tester <tester@example.com> %d +0000\ndata %d\n%s", 1767225600+c, len(msg), msg)
		for f := 0; f < bigFiles; f++ {
			content := fmt.Sprintf("commit %d file %d\n", c, f)
			fmt.Fprintf(&in, "M 100644 inline d%d/%02d/f%d\ndata %d\n%s\n", c, f%100, f, len(content), content)
		}
		in.WriteString("\n")
	}
	if _, err := gittest.Pipe(dir, in.Bytes(), "fast-import", "--quiet"); err != nil {
		return err
	}
	_, err := gittest.Pipe(dir, nil, "repack", "-a", "-d", "-q")
	return err
}

const noteText = "examined by nwdes\n"

// writeFreshNote has the store (re)write its note on commit, after deleting
// the notes ref, so that the note's commit, tree and blob are loose objects
// as the store leaves them.
func writeFreshNote(b *testing.B, dir string, commit oid.ID) {
	s := stOpenStore(b, dir, gitstore.Options{})
	if cur, err := s.Tip(gitstore.NotesRef); err != nil {
		b.Fatal(err)
	} else if !cur.IsZero() {
		if err := s.Refs().CompareAndSwap(gitstore.NotesRef, cur, oid.Zero); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := s.UpdateNote(context.Background(), commit, "note", func([]byte, bool) ([]byte, error) {
		return []byte(noteText), nil
	}); err != nil {
		b.Fatal(err)
	}
}

const noteHelperSource = `package main

import (
	"fmt"
	"os"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/gitstore/oid"
)

// Reads nwdes's note on a commit, as a git nwdes subcommand would.
func main() {
	loc, err := gitrepo.Discover(os.Args[1], os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	s, err := gitstore.Open(loc, gitstore.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	b, err := s.Note(oid.MustParse(os.Args[2]))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Stdout.Write(b)
}
`

// Two baselines for the start-up cost of any Go process: an empty main,
// and a main that links gitstore (and so go-git and everything it imports)
// but does no work.
const (
	emptyMainSource = "package main\n\nfunc main() {}\n"
	linkOnlySource  = `package main

import (
	"os"

	"github.com/nwdes/nwdes/gitstore"
)

func main() { os.Stdout.WriteString(string(gitstore.NotesRef)[:0]) }
`
)

var (
	noteHelperOnce sync.Once
	noteHelpers    map[string]string
	noteHelperErr  error
)

// noteHelper builds the note reader (a small binary that imports gitstore
// and reads a note: a fresh process, as a hook or a CLI invocation would
// be) and the two baselines, once. It returns the binaries by name:
// "note", "empty", "linkonly".
func noteHelper() (map[string]string, error) {
	noteHelperOnce.Do(func() {
		root, err := gittest.FixtureDir("helper")
		if err != nil {
			noteHelperErr = err
			return
		}
		bins := map[string]string{}
		for name, src := range map[string]string{"note": noteHelperSource, "empty": emptyMainSource, "linkonly": linkOnlySource} {
			d := filepath.Join(root, name)
			if err := os.MkdirAll(d, 0o755); err != nil {
				noteHelperErr = err
				return
			}
			file := filepath.Join(d, "main.go")
			if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
				noteHelperErr = err
				return
			}
			bin := filepath.Join(d, name)
			// Built from this package's directory, so that the import
			// resolves in this module, static as make build builds
			// git-nwdes.
			build := exec.Command("go", "build", "-trimpath", "-o", bin, file)
			build.Env = append(os.Environ(), "CGO_ENABLED=0")
			if out, err := build.CombinedOutput(); err != nil {
				noteHelperErr = fmt.Errorf("go build %s: %v: %s", name, err, out)
				return
			}
			bins[name] = bin
		}
		noteHelpers = bins
	})
	return noteHelpers, noteHelperErr
}

// BenchmarkNoteReadColdProcess: a freshly started process reads the note
// nwdes keeps on one commit of a repository of about 100,000 objects in
// one pack. Each iteration starts both readers, one after the other, and
// times each: the nwdes helper (Discover, Open, Note) and git notes --ref
// nwdes show. nwdes-ns/op, git-ns/op and nwdes/git are the two readers and
// their ratio; ns/op is the whole iteration. Two baselines run in the same
// iterations: go-empty-ns/op, an empty Go program, and go-linkonly-ns/op, a
// program that links gitstore and does nothing, which shows what of the
// reader's time is process start-up rather than reading.
//
// "loose-note" reads the note as the store just wrote it (its commit, tree
// and blob are loose objects); "packed-note" reads it after git repack put
// them in the 100,000-object pack, so that they are looked up in its index.
func BenchmarkNoteReadColdProcess(b *testing.B) {
	dir := gittest.Fixture(b, "big", buildBig)
	head := gittest.Git(b, dir, "rev-parse", "HEAD")
	bins, err := noteHelper()
	env := gittest.Env(filepath.Dir(dir))
	// A reader that does not build is a failure, not a reason to time
	// something else: the test binary as a reader (which this benchmark
	// once fell back to) starts with everything the tests link, and made
	// the figure a different one without saying so.
	if err != nil {
		b.Fatalf("the reader and its baselines: %v", err)
	}
	nwdesCmd := func() *exec.Cmd { return exec.Command(bins["note"], dir, head) }
	emptyCmd := func() *exec.Cmd { return exec.Command(bins["empty"]) }
	linkCmd := func() *exec.Cmd { return exec.Command(bins["linkonly"]) }
	gitCmd := func() *exec.Cmd { return exec.Command("git", "notes", "--ref", "nwdes", "show", head) }
	run := func(b *testing.B, mk func() *exec.Cmd, want string) time.Duration {
		cmd := mk()
		cmd.Dir, cmd.Env = dir, env
		start := time.Now()
		out, err := cmd.Output()
		d := time.Since(start)
		if err != nil || string(out) != want {
			b.Fatalf("%v: %q, %v", cmd.Args, out, err)
		}
		return d
	}
	bench := func(b *testing.B) {
		run(b, nwdesCmd, noteText) // warm the page cache for both
		run(b, gitCmd, noteText)
		var tn, tg, te, tl time.Duration
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			tn += run(b, nwdesCmd, noteText)
			tg += run(b, gitCmd, noteText)
			te += run(b, emptyCmd, "")
			tl += run(b, linkCmd, "")
		}
		per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N) }
		b.ReportMetric(per(tn), "nwdes-ns/op")
		b.ReportMetric(per(tg), "git-ns/op")
		b.ReportMetric(float64(tn)/float64(tg), "nwdes/git")
		b.ReportMetric(per(te), "go-empty-ns/op")
		b.ReportMetric(per(tl), "go-linkonly-ns/op")
	}
	writeFreshNote(b, dir, oid.MustParse(head))
	b.Run("loose-note", bench)
	gittest.Git(b, dir, "repack", "-a", "-d", "-q")
	if c := gittest.Git(b, dir, "count-objects", "-v"); !strings.Contains(c, "count: 0\n") {
		b.Fatalf("objects left loose after repack:\n%s", c)
	}
	b.Logf("repository: %s", strings.Join(strings.Fields(strings.ReplaceAll(gittest.Git(b, dir, "count-objects", "-v"), ": ", "=")), " "))
	b.Run("packed-note", bench)
}

// ---- concurrent writers in one process ----

var writerCounts = []int{1, 2, 4, 8}

// BenchmarkConcurrentWriters: b.N appends split across N goroutines that
// share one Store and append to one ref. Contention between processes is
// covered by the stress tests (TestConcurrentProcessesLoseNoUpdate).
func BenchmarkConcurrentWriters(b *testing.B) {
	for _, n := range writerCounts {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			dir := gittest.Init(b, false)
			var retries atomic.Int64
			s := stOpenStore(b, dir, gitstore.Options{Sleep: func(d time.Duration) {
				retries.Add(1)
				time.Sleep(d)
			}})
			var next, gaveUp atomic.Int64
			var wg sync.WaitGroup
			errs := make(chan error, n)
			b.ResetTimer()
			for g := 0; g < n; g++ {
				wg.Add(1)
				go func(g int) {
					defer wg.Done()
					for {
						i := int(next.Add(1)) - 1
						if i >= b.N {
							return
						}
						rec, err := gitstore.NewRecord(benchKind, 1, benchBody{I: i, G: g})
						if err != nil {
							errs <- err
							return
						}
						for {
							_, err := s.Change(context.Background(), benchRef, "append", func(tx gitstore.Edit) error {
								return tx.Put("latest", rec)
							})
							if err == nil {
								break
							}
							if stErrorClass(err) != "giveup" {
								errs <- err
								return
							}
							gaveUp.Add(1)
						}
					}
				}(g)
			}
			wg.Wait()
			b.StopTimer()
			close(errs)
			for err := range errs {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
			b.ReportMetric(float64(retries.Load())/float64(b.N), "retries/op")
			b.ReportMetric(float64(gaveUp.Load())/float64(b.N), "giveups/op")
			benchCheckCount(b, dir, b.N)
		})
	}
}

// BenchmarkConcurrentWritersGitCLI: the same with the git CLI under N
// goroutines. A writer does not know the tip another one set, so each
// append reads it (rev-parse) before commit-tree and update-ref NEW OLD,
// and redoes those three when update-ref finds the ref moved: five
// processes per uncontended append.
func BenchmarkConcurrentWritersGitCLI(b *testing.B) {
	for _, n := range writerCounts {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			dir := gittest.Init(b, false)
			var next, retries, procs atomic.Int64
			var wg sync.WaitGroup
			errs := make(chan error, n)
			b.ResetTimer()
			for g := 0; g < n; g++ {
				wg.Add(1)
				go func(g int) {
					defer wg.Done()
					w := newCLIWriter(dir, benchRef)
					defer func() { procs.Add(int64(w.procs)) }()
					for {
						i := int(next.Add(1)) - 1
						if i >= b.N {
							return
						}
						j, err := gitstore.Canonical(map[string]any{"body": benchBody{I: i, G: g}, "kind": benchKind, "v": 1})
						if err != nil {
							errs <- err
							return
						}
						tree, err := w.tree([]string{"latest"}, [][]byte{j}, "")
						if err != nil {
							errs <- err
							return
						}
						for {
							tip, _ := w.git(nil, "rev-parse", "-q", "--verify", string(benchRef))
							_, ok, err := w.commit(tree, tip, tip, "append")
							if err != nil {
								errs <- err
								return
							}
							if ok {
								break
							}
							retries.Add(1)
						}
					}
				}(g)
			}
			wg.Wait()
			b.StopTimer()
			close(errs)
			for err := range errs {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
			b.ReportMetric(float64(retries.Load())/float64(b.N), "retries/op")
			b.ReportMetric(float64(procs.Load())/float64(b.N), "procs/op")
			benchCheckCount(b, dir, b.N)
		})
	}
}

// ---- durability and a busy disk ----

// BenchmarkConcurrentDurableWriters: b.N durable appends split across N
// writers, each with its own Store (as separate processes would have) and
// its own ref, so that they never contend for a ref lock: what they share
// is the file system. appends/s of /8 against /1 is the goal (at least 2x:
// one writer's syncs must not make the others wait, as a syncfs of the
// whole file system per append did).
func BenchmarkConcurrentDurableWriters(b *testing.B) {
	for _, n := range []int{1, 8} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			dir := gittest.Init(b, false)
			stores := make([]*gitstore.Store, n)
			for g := range stores {
				stores[g] = stOpenStore(b, dir, gitstore.Options{Durable: true})
			}
			var next atomic.Int64
			var wg sync.WaitGroup
			errs := make(chan error, n)
			b.ResetTimer()
			for g := 0; g < n; g++ {
				wg.Add(1)
				go func(g int) {
					defer wg.Done()
					ref := gitstore.RefName(fmt.Sprintf("refs/nwdes/bench%d", g))
					for {
						i := int(next.Add(1)) - 1
						if i >= b.N {
							return
						}
						rec, err := gitstore.NewRecord(benchKind, 1, benchBody{I: i, G: g})
						if err != nil {
							errs <- err
							return
						}
						if _, err := stores[g].Change(context.Background(), ref, "append", func(tx gitstore.Edit) error {
							return tx.Put("latest", rec)
						}); err != nil {
							errs <- err
							return
						}
					}
				}(g)
			}
			wg.Wait()
			b.StopTimer()
			close(errs)
			for err := range errs {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
		})
	}
}

// busyDisk starts a process that writes a large file (128 MiB, then
// fsync, over and over) in a directory on the same file system as the
// benchmark's repositories, until the benchmark ends.
func busyDisk(b *testing.B) {
	b.Helper()
	big := filepath.Join(b.TempDir(), "big")
	cmd := exec.Command("sh", "-c", `while :; do dd if=/dev/zero of="$1" bs=1M count=128 conv=fsync 2>/dev/null; done`, "sh", big)
	// Its own process group, so that the dd running at the end is killed
	// with the loop (and stops writing before the directory is removed).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	// Let it get going: the first megabytes only fill the page cache.
	time.Sleep(300 * time.Millisecond)
}

// BenchmarkAppendOneBusyDisk: AppendOne while another process writes a
// large file to the same disk throughout.
func BenchmarkAppendOneBusyDisk(b *testing.B) {
	busyDisk(b)
	benchAppendOne(b, false)
}

// BenchmarkAppendOneBusyDiskGitCLI: its twin, the AppendOne CLI pipeline
// beside the same writer.
func BenchmarkAppendOneBusyDiskGitCLI(b *testing.B) {
	busyDisk(b)
	benchAppendOneCLI(b)
}

// BenchmarkReadAmongSmallPacks: the cost of a lookup when every update left
// its own small pack. 20 records are written by one update (one pack) or by
// 20 updates (20 packs, the most the store leaves before consolidating);
// each iteration reads one record, in turn, through a warm Store (View +
// Get: the tip commit, two trees, a blob), so a lookup searches up to 20
// pack indexes before it finds its object.
func BenchmarkReadAmongSmallPacks(b *testing.B) {
	for _, packs := range []int{1, 20} {
		b.Run(strconv.Itoa(packs), func(b *testing.B) {
			dir := gittest.Init(b, false)
			s := stOpenStore(b, dir, gitstore.Options{})
			const records = 20
			for u := 0; u < packs; u++ {
				if _, err := s.Change(context.Background(), benchRef, "put", func(tx gitstore.Edit) error {
					for k := u; k < records; k += packs {
						if err := tx.Put("r/"+strconv.Itoa(k), benchRecord(b, benchBody{K: k})); err != nil {
							return err
						}
					}
					return nil
				}); err != nil {
					b.Fatal(err)
				}
			}
			got, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "pack-*.idx"))
			if len(got) != packs {
				b.Fatalf("%d packs, want %d", len(got), packs)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				tx, err := s.Records(benchRef)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := tx.Get("r/" + strconv.Itoa(i%records)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAppendOneAppendOnly: one Update adding one record, on a ref
// declared with an immutable directory (as ledgers, traces and
// examinations are), so each append pays the history check: the ref's
// checkpoint read, the new commit's immutable paths diffed, the
// checkpoint advanced.
func BenchmarkAppendOneAppendOnly(b *testing.B) {
	dir := gittest.Init(b, false)
	reg := gitstore.MustRegistry(func(r *gitstore.Registry) error {
		if err := r.DeclareKind(gitstore.KindSpec{Kind: benchKind, Version: 1}); err != nil {
			return err
		}
		return r.DeclareRef(gitstore.RefSpec{Ref: benchRef, Policy: gitstore.PolicyFastForward,
			Layout: []string{"entries"}, Immutable: []string{"entries"}})
	})
	s := stOpenStore(b, dir, gitstore.Options{Registry: reg})
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rec := benchRecord(b, benchBody{I: i})
		path := fmt.Sprintf("entries/%06x/%010d", i/256, i)
		if _, err := s.Change(ctx, benchRef, "append", func(tx gitstore.Edit) error {
			return tx.Put(path, rec)
		}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
	benchCheckCount(b, dir, b.N)
}
