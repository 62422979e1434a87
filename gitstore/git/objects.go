package git

import (
	"bytes"
	"cmp"
	"compress/zlib"
	"errors"
	"fmt"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/refusal"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/nwdes/nwdes/gitstore/odb"
	"github.com/nwdes/nwdes/gitstore/oid"
)

// objects reads and writes git objects. The objects of an update are
// written as one pack (packwrite.go); single objects (a merge's) as loose
// files, by a small writer of our own (temporary file in objects/xx, then
// rename). Reads go through odb, which looks objects up in pack indexes
// without decoding them whole: a fresh process (the pre-push hook) reads a
// note from a packed repository of 100k objects in well under a
// millisecond, where go-git's storage decodes the whole index first. odb
// rescans the pack directory on a miss, which is how it finds a pack just
// written, and what a concurrent git gc looks like from outside; read
// retries a few times more for the window where gc has deleted the loose
// file and not yet renamed the new pack into place.
type objects struct {
	f      oid.Format // the repository's object format
	closed bool
	// missing, when set, is asked about an object no read found: it
	// fetches it (retry: read once more) or returns the refusal to give.
	missing    func(h oid.ID) (retry bool, err error)
	dir        string   // the object directory
	alternates []string // more object directories to read from
	mu         sync.Mutex
	cur        *dbRef   // the reader in use
	graveyard  []*dbRef // readers replaced, closed once unused

	pmu sync.Mutex
	// pending holds the packs of commits written and not yet published,
	// by commit: swap publishes one under the ref's lock or discards it.
	pending map[oid.ID][]*stagedPack
	// unsynced are loose files written (and the directories they were
	// renamed into) that a durable swap has not yet fsynced.
	unsynced map[string]bool
}

// newObjects reads and writes the objects of loc: its object directory
// (CommonDir/objects, or GIT_OBJECT_DIRECTORY) and, for reads, the
// alternates the environment names.
func newObjects(loc gitrepo.Location, f oid.Format) *objects {
	return &objects{f: f, dir: loc.Objects(), alternates: loc.Alternates}
}

// dbRef counts the users of one reader, so that a replaced reader is
// closed only once nobody reads through it.
type dbRef struct {
	db        *odb.DB
	refs      int
	retiredAt time.Time
}

const (
	// maxRetired is how many deleted packs a reader may hold open before
	// it is replaced by a fresh one: each consolidation deletes the packs
	// it merged, and a reader keeps every pack it ever opened until it is
	// closed, so a writer running for hours would otherwise hold two
	// descriptors (and a map) per update it made.
	maxRetired = 64
	// readerGrace is how long a replaced reader stays open at least, for
	// callers of reader() that do not count themselves (one short lookup).
	readerGrace = 100 * time.Millisecond
)

// acquire returns the reader and a function to call when done with it.
func (o *objects) acquire() (*odb.DB, func(), error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return nil, nil, fmt.Errorf("store closed: %w", os.ErrClosed)
	}
	if o.cur == nil {
		db, err := odb.OpenWithAlternates(o.dir, o.f, o.alternates)
		if err != nil {
			return nil, nil, err
		}
		o.cur = &dbRef{db: db}
	}
	r := o.cur
	r.refs++
	return r.db, func() {
		o.mu.Lock()
		r.refs--
		o.reapLocked()
		o.mu.Unlock()
	}, nil
}

// reader returns the reader for one short use (a lookup, not a loop).
func (o *objects) reader() (*odb.DB, error) {
	db, release, err := o.acquire()
	if err != nil {
		return nil, err
	}
	release()
	return db, nil
}

// recycle replaces the reader when it holds too many deleted packs open.
func (o *objects) recycle() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.cur != nil && o.cur.db.Retired() > maxRetired {
		o.cur.retiredAt = time.Now()
		o.graveyard = append(o.graveyard, o.cur)
		o.cur = nil
	}
	o.reapLocked()
}

// reapLocked closes replaced readers nobody uses any more.
func (o *objects) reapLocked() {
	keep := o.graveyard[:0]
	for _, r := range o.graveyard {
		if r.refs > 0 || time.Since(r.retiredAt) < readerGrace {
			keep = append(keep, r)
			continue
		}
		r.db.Close()
	}
	o.graveyard = keep
}

// has reports whether the object database holds h (Repo.Has).
func (o *objects) has(h oid.ID) (bool, error) {
	db, release, err := o.acquire()
	if err != nil {
		return false, fmt.Errorf("look up object %s: %w", h, err)
	}
	defer release()
	return db.Has(h)
}

// read returns an object's type and content.
func (o *objects) read(h oid.ID) (plumbing.ObjectType, []byte, error) {
	db, release, err := o.acquire()
	if err != nil {
		return 0, nil, fmt.Errorf("read object %s: %w", h, err)
	}
	defer release()
	for attempt := 0; ; attempt++ {
		t, b, err := db.Read(h)
		if err == nil {
			return t, b, nil
		}
		if !errors.Is(err, odb.ErrNotFound) {
			return 0, nil, fmt.Errorf("read object %s: %w", h, err)
		}
		if attempt == 4 {
			// A missing object is never an absent record: it is its own
			// error, which no caller takes for "not in the tree". In a
			// partial clone it is first asked for from the promisor
			// remote, and read once more.
			if o.missing == nil {
				return 0, nil, refusal.NewUnreadable(refusal.ObjectMissing,
					"find the damage with git fsck, or deepen a shallow clone (git fetch --unshallow)",
					"object %s is not in this repository (a shallow clone, or damage)", h).Wrap(ErrObjectMissing)
			}
			retry, merr := o.missing(h)
			if !retry {
				return 0, nil, merr
			}
			t, b, err := db.Read(h)
			if err == nil {
				return t, b, nil
			}
			if !errors.Is(err, odb.ErrNotFound) {
				return 0, nil, fmt.Errorf("read object %s: %w", h, err)
			}
			return 0, nil, merr
		}
		time.Sleep(time.Duration(attempt+1) * 5 * time.Millisecond)
	}
}

// writable refuses writing into an object directory other than
// <git dir>/objects: one elsewhere (a server's quarantine) is read, never
// written, by nwdes.
func (o *objects) writable() error {
	if filepath.Base(o.dir) != "objects" {
		return refusal.New(refusal.StoreNotWritable,
			"run the writing verb outside the server-side hook (nwdes only reads a quarantine)",
			"objects go to %s (GIT_OBJECT_DIRECTORY), where nwdes does not write", o.dir)
	}
	return nil
}

// freshen reports whether h is already stored in the object directory,
// loose or in a pack already listed, and if so sets that file's mtime to
// now, as git does before deciding not to write an object again: a
// concurrent git gc then does not prune it as old and unreachable just
// before our new commit makes it reachable. A file we may not touch counts
// as absent (the object is written again, which is harmless).
func (o *objects) freshen(h oid.ID) bool {
	hex := h.String()
	now := time.Now()
	if err := os.Chtimes(filepath.Join(o.dir, hex[:2], hex[2:]), now, now); err == nil {
		return true
	}
	db, err := o.reader()
	if err != nil {
		return false
	}
	if p, ok, err := db.PackOf(h); err == nil && ok {
		return os.Chtimes(p, now, now) == nil
	}
	return false
}

// absent returns the objects of objs not already stored, freshening those
// that are (see freshen), with one lookup per pack for the whole batch.
func (o *objects) absent(objs []packObj) []packObj {
	now := time.Now()
	var rest []packObj
	for _, obj := range objs {
		hex := obj.hash.String()
		if os.Chtimes(filepath.Join(o.dir, hex[:2], hex[2:]), now, now) != nil {
			rest = append(rest, obj)
		}
	}
	if len(rest) == 0 {
		return rest
	}
	db, release, err := o.acquire()
	if err != nil {
		return rest
	}
	defer release()
	hs := make([]oid.ID, len(rest))
	for i, obj := range rest {
		hs[i] = obj.hash
	}
	where, err := db.PacksOf(hs)
	if err != nil {
		return rest
	}
	fresh := map[string]bool{}
	out := rest[:0]
	for i, obj := range rest {
		p := where[i]
		if p != "" && !fresh[p] {
			fresh[p] = os.Chtimes(p, now, now) == nil
		}
		if p == "" || !fresh[p] {
			out = append(out, obj)
		}
	}
	return out
}

// stagePack encodes the objects of b that are not already stored as one
// pack and starts writing it to temporary files (fsynced when durable); it
// returns the pack, or nil when every object is already stored.
func (o *objects) stagePack(b *Batch, durable bool) (*stagedPack, error) {
	if err := o.writable(); err != nil {
		return nil, err
	}
	pb := newPackBuf(o.f)
	for _, obj := range o.absent(b.objs) {
		pb.addObject(obj)
	}
	if len(pb.entries) == 0 {
		return nil, nil
	}
	pack, idx, name := pb.finish()
	return stageAsync(o.dir, pack, idx, name, durable), nil
}

// hold keeps sp until swap publishes or discards it.
func (o *objects) hold(commit oid.ID, sp *stagedPack) {
	o.pmu.Lock()
	defer o.pmu.Unlock()
	if o.pending == nil {
		o.pending = map[oid.ID][]*stagedPack{}
	}
	o.pending[commit] = append(o.pending[commit], sp)
}

// added tells the reader about a pack just published.
func (o *objects) added(name string) {
	if db, err := o.reader(); err == nil {
		db.AddPack(name)
	}
	o.recycle()
}

// take returns a pack held for commit, or nil.
func (o *objects) take(commit oid.ID) *stagedPack {
	o.pmu.Lock()
	defer o.pmu.Unlock()
	l := o.pending[commit]
	if len(l) == 0 {
		return nil
	}
	sp := l[len(l)-1]
	if len(l) == 1 {
		delete(o.pending, commit)
	} else {
		o.pending[commit] = l[:len(l)-1]
	}
	return sp
}

// write stores one object as a loose file and returns its id. An object
// already stored is freshened instead (see freshen). A write that loses its
// fanout directory to a concurrent repack (which removes empty objects/xx/
// directories) is retried. Nothing is synced here: a durable swap syncs the
// loose files written before it (syncLoose).
func (o *objects) write(t plumbing.ObjectType, data []byte) (oid.ID, error) {
	if err := o.writable(); err != nil {
		return oid.Zero, err
	}
	h := hashOf(o.f, t, data)
	if o.freshen(h) {
		return h, nil
	}
	var z bytes.Buffer
	zw := zlibWriters.Get().(*zlib.Writer)
	zw.Reset(&z)
	fmt.Fprintf(zw, "%s %d\x00", t, len(data))
	zw.Write(data)
	zw.Close()
	zlibWriters.Put(zw)
	hex := h.String()
	dir := filepath.Join(o.dir, hex[:2])
	final := filepath.Join(dir, hex[2:])
	for attempt := 0; ; attempt++ {
		created := false
		f, err := writeTemp(dir, "obj", z.Bytes())
		if errors.Is(err, fs.ErrNotExist) {
			if err = os.MkdirAll(dir, 0o777); err == nil {
				created = true
				f, err = writeTemp(dir, "obj", z.Bytes())
			}
		}
		if err == nil {
			tmp := f.Name()
			if err = f.Close(); err == nil {
				err = os.Rename(tmp, final)
			}
			if err != nil {
				os.Remove(tmp)
			}
		}
		if err == nil {
			o.pmu.Lock()
			if o.unsynced == nil {
				o.unsynced = map[string]bool{}
			}
			o.unsynced[final] = true
			o.unsynced[dir] = true
			if created {
				o.unsynced[o.dir] = true
			}
			o.pmu.Unlock()
			return h, nil
		}
		if !errors.Is(err, fs.ErrNotExist) || attempt == 4 {
			return oid.Zero, fmt.Errorf("write %s object: %w", t, err)
		}
	}
}

// syncLoose fsyncs the loose files written so far and their directories.
// Entries are dropped only once synced, so a concurrent durable swap that
// finds them still listed syncs them itself rather than trusting another
// goroutine's sync still in flight.
func (o *objects) syncLoose() error {
	o.pmu.Lock()
	var files, dirs []string
	for p := range o.unsynced {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			dirs = append(dirs, p)
		} else {
			files = append(files, p)
		}
	}
	o.pmu.Unlock()
	if len(files)+len(dirs) == 0 {
		return nil
	}
	if err := syncPaths(files); err != nil {
		return err
	}
	// The objects directory last: it holds the fanout directories.
	sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
	if err := syncPaths(dirs); err != nil {
		return err
	}
	o.pmu.Lock()
	for _, p := range append(files, dirs...) {
		delete(o.unsynced, p)
	}
	o.pmu.Unlock()
	return nil
}

// treeEntry is one entry of a git tree.
type treeEntry struct {
	name string
	mode uint32
	hash oid.ID
}

const (
	modeTree = 0o40000
	modeBlob = 0o100644
)

// isTree is git's S_ISDIR on the entry's mode: a tree written with a mode
// git only warns about (40755, say) is still a directory, for its order
// and for what a reader sees, as it is for git.
func (e treeEntry) isTree() bool { return e.mode&0o170000 == modeTree }

// encodeTree writes entries in git's order: by name, with a tree's name
// compared as if it ended in "/". git fsck --strict checks this order.
//
// Sorted by compareTreeKeys, which builds no key (FuzzTreeKeysAndModes
// holds it to comparing treeKey's), into one buffer sized first: a
// store's update encodes each tree it changed from a map, so each is
// sorted anew, and sorting by built keys took 0.8–0.9 ms for a directory
// of 1,000 directories (the swarm's jobs/ tree at 1,000 labels, once a
// job record) against 0.3 now (BenchmarkEncodeTree1000).
func encodeTree(entries []treeEntry) []byte {
	slices.SortFunc(entries, compareTreeKeys)
	size := 0
	for _, e := range entries {
		size += 8 + len(e.name) + e.hash.Format().Size()
	}
	b := make([]byte, 0, size)
	for _, e := range entries {
		b = strconv.AppendUint(b, uint64(e.mode), 8)
		b = append(b, ' ')
		b = append(b, e.name...)
		b = append(b, 0)
		raw := e.hash.Raw()
		b = append(b, raw[:e.hash.Format().Size()]...)
	}
	return b
}

func treeKey(e treeEntry) string {
	if e.isTree() {
		return e.name + "/"
	}
	return e.name
}

// decodeTree reads a tree object, refusing (TreeUnreadable) one git fsck
// rejects: a malformed entry, a name git could not check out, entries out
// of git's order (treeNotSorted) or one name twice (duplicateEntries, a
// file and a directory alike). Two readers of such a tree could see
// different entries for one name (a binary search finds one, a scan
// another), so it has no one meaning to judge. Entry ids are of h's
// format: the tree's own.
func decodeTree(h oid.ID, raw []byte) ([]TreeEntry, error) {
	f := h.Format()
	if !f.Valid() {
		return nil, badTree(h, "has no object format")
	}
	n := f.Size()
	// Every name is cut from one copy of the tree, not copied one by one:
	// a tree of records is mostly names.
	all := string(raw)
	// Counted first, so that the entries are one allocation: a guess
	// from the size grew the slice for trees of short names (a draft's
	// observations), and fsck decodes every version of every tree. The
	// loop below checks what this count skips over. Only what has the
	// shape of an entry (a mode, a space, a name, NUL) is counted, so a
	// hostile tree of NULs does not make a slice larger than itself.
	count := 0
	for pos := 0; pos < len(all); count++ {
		nul := strings.IndexByte(all[pos:], 0)
		if nul < 0 || strings.IndexByte(all[pos:pos+nul], ' ') < 1 {
			break
		}
		pos += nul + 1 + n
	}
	out := make([]TreeEntry, 0, count)
	for pos := 0; pos < len(all); {
		b := all[pos:]
		sp := strings.IndexByte(b, ' ')
		nul := strings.IndexByte(b, 0)
		if sp < 0 || nul < sp || len(b) < nul+1+n {
			return nil, badTree(h, "is malformed")
		}
		mode, ok := octal(b[:sp])
		if !ok {
			return nil, badTree(h, fmt.Sprintf("has a bad mode %q", b[:sp]))
		}
		name := b[sp+1 : nul]
		if name == "" || name == "." || name == ".." || strings.Contains(name, "/") {
			// git fsck refuses these too; a path built from one would not
			// be the path the tree seems to hold.
			return nil, badTree(h, fmt.Sprintf("has an entry named %q", name))
		}
		eh, ok := fromRaw(f, raw[pos+nul+1:pos+nul+1+n])
		if !ok {
			return nil, badTree(h, "is malformed")
		}
		e := TreeEntry{Name: name, Mode: mode, ID: eh}
		if n := len(out); n > 0 {
			prev := out[n-1]
			switch c := compareTreeKeys(treeEntry{name: name, mode: mode}, treeEntry{name: prev.Name, mode: prev.Mode}); {
			case c == 0:
				return nil, badTree(h, fmt.Sprintf("names %q twice (git fsck: duplicateEntries)", name))
			case c < 0:
				return nil, badTree(h, fmt.Sprintf("is not sorted as git sorts trees: %q comes after %q (git fsck: treeNotSorted)", name, prev.Name))
			}
		}
		// git's own check also knows the HFS+ and NTFS spellings of
		// the name; this one knows it in any case.
		if mode&0o170000 == 0o120000 && strings.EqualFold(name, ".gitmodules") {
			return nil, badTree(h, "has .gitmodules as a symbolic link (git fsck: gitmodulesSymlink)")
		}
		if e.IsTree() && fileNamed(out, name) {
			return nil, badTree(h, fmt.Sprintf("names %q twice, as a file and as a directory (git fsck: duplicateEntries)", name))
		}
		out = append(out, e)
		pos += nul + 1 + n
	}
	return out, nil
}

// octal is strconv.ParseUint(s, 8, 32), without the error's copy of s.
func octal(s string) (uint32, bool) {
	if s == "" {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '7' {
			return 0, false
		}
		if v = v<<3 | uint64(c-'0'); v > 1<<32-1 {
			return 0, false
		}
	}
	return uint32(v), true
}

// compareTreeKeys compares treeKey(a) with treeKey(b) without building
// them: a tree's name compares as if it ended in "/".
func compareTreeKeys(a, b treeEntry) int {
	n := min(len(a.name), len(b.name))
	if c := strings.Compare(a.name[:n], b.name[:n]); c != 0 {
		return c
	}
	la, lb := a.keyLen(), b.keyLen()
	for i := n; i < min(la, lb); i++ {
		if ca, cb := a.keyByte(i), b.keyByte(i); ca != cb {
			return cmp.Compare(ca, cb)
		}
	}
	return cmp.Compare(la, lb)
}

func (e treeEntry) keyLen() int {
	if e.isTree() {
		return len(e.name) + 1
	}
	return len(e.name)
}

func (e treeEntry) keyByte(i int) byte {
	if i < len(e.name) {
		return e.name[i]
	}
	return '/'
}

// fileNamed reports whether sorted entries, before a directory called
// name, hold a file of the same name. In git's order such a file sorts at
// "name", the directory at "name/", and only names that extend name with
// a byte below '/' come between: those are the only ones looked at.
func fileNamed(sorted []TreeEntry, name string) bool {
	for j := len(sorted) - 1; j >= 0; j-- {
		n := sorted[j].Name
		switch {
		case n == name:
			return !sorted[j].IsTree()
		case len(n) > len(name) && strings.HasPrefix(n, name) && n[len(name)] < '/':
			continue
		}
		return false
	}
	return false
}

func badTree(h oid.ID, what string) error {
	return refusal.NewUnreadable(refusal.TreeUnreadable,
		"git fsck names the tree too; restore what holds it from a good clone (git nwdes fetch for nwdes refs)",
		"tree %s %s", h, what)
}

// commitInfo is what nwdes reads from a commit.
type commitInfo struct {
	Tree    oid.ID
	Parents []oid.ID
	Time    time.Time
	Message string
}

// decodeCommit reads the commit h holding b; its tree and parents are
// ids of h's format.
func decodeCommit(h oid.ID, b []byte) (commitInfo, error) {
	var c commitInfo
	f := h.Format()
	head, msg, _ := bytes.Cut(b, []byte("\n\n"))
	c.Message = string(msg)
	for _, line := range bytes.Split(head, []byte("\n")) {
		k, v, _ := bytes.Cut(line, []byte(" "))
		switch string(k) {
		case "tree":
			id, ok := parseHex(f, string(v))
			if !ok {
				return c, fmt.Errorf("commit %s has a bad tree line", h)
			}
			c.Tree = id
		case "parent":
			id, ok := parseHex(f, string(v))
			if !ok {
				return c, fmt.Errorf("commit %s has a bad parent line", h)
			}
			c.Parents = append(c.Parents, id)
		case "committer":
			if i := bytes.LastIndexByte(v, '>'); i >= 0 {
				f := bytes.Fields(v[i+1:])
				if len(f) > 0 {
					if sec, err := strconv.ParseInt(string(f[0]), 10, 64); err == nil {
						c.Time = time.Unix(sec, 0).UTC()
					}
				}
			}
		}
	}
	if c.Tree.IsZero() {
		return c, fmt.Errorf("commit %s has no tree", h)
	}
	return c, nil
}

func encodeCommit(tree oid.ID, parents []oid.ID, ident string, when time.Time, msg string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "tree %s\n", tree)
	for _, p := range parents {
		fmt.Fprintf(&b, "parent %s\n", p)
	}
	stamp := fmt.Sprintf("%s %d +0000", ident, when.Unix())
	fmt.Fprintf(&b, "author %s\ncommitter %s\n\n%s", stamp, stamp, msg)
	if len(msg) == 0 || msg[len(msg)-1] != '\n' {
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// close releases the object reader's pack files and maps, and removes the
// temporary files of packs never published; a later read reopens nothing
// and fails.
func (o *objects) close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	var errs []error
	o.pmu.Lock()
	for _, l := range o.pending {
		for _, sp := range l {
			sp.discard()
		}
	}
	o.pending = nil
	o.pmu.Unlock()
	if o.cur != nil {
		errs = append(errs, o.cur.db.Close())
	}
	for _, r := range o.graveyard {
		errs = append(errs, r.db.Close())
	}
	o.cur, o.graveyard = nil, nil
	o.closed = true
	return errors.Join(errs...)
}
