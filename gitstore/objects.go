package gitstore

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/refusal"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/nwdes/nwdes/gitstore/odb"
)

// objects reads and writes git objects. Writes go through go-git's loose
// object writer (temporary file, then rename into objects/xx/). Reads go
// through odb, which looks objects up in pack indexes without decoding them
// whole: a fresh process (the pre-push hook) reads a note from a packed
// repository of 100k objects in well under a millisecond, where go-git's
// storage decodes the whole index first. odb rescans the pack directory on a
// miss, which is what a concurrent git gc looks like from outside; read
// retries a few times more for the window where gc has deleted the loose
// file and not yet renamed the new pack into place.
type objects struct {
	closed     bool
	dir        string   // the object directory
	alternates []string // more object directories to read from
	mu         sync.Mutex
	st         *filesystem.Storage
	db         *odb.DB
	// wmu serialises writes: go-git's storage is not safe for concurrent
	// writers (it keeps an unguarded object list).
	wmu sync.Mutex
}

// newObjects reads and writes the objects of loc: its object directory
// (CommonDir/objects, or GIT_OBJECT_DIRECTORY) and, for reads, the
// alternates the environment names.
func newObjects(loc gitrepo.Location) *objects {
	return &objects{dir: loc.Objects(), alternates: loc.Alternates}
}

func (o *objects) storage() *filesystem.Storage {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.st == nil {
		// go-git's storage takes a git directory and writes to its
		// objects/: give it the parent of the object directory, which is
		// the git directory itself unless GIT_OBJECT_DIRECTORY moved it.
		o.st = filesystem.NewStorage(osfs.New(filepath.Dir(o.dir)), cache.NewObjectLRU(8*cache.MiByte))
	}
	return o.st
}

func (o *objects) reader() (*odb.DB, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return nil, fmt.Errorf("store closed: %w", os.ErrClosed)
	}
	if o.db == nil {
		db, err := odb.OpenWithAlternates(o.dir, o.alternates)
		if err != nil {
			return nil, err
		}
		o.db = db
	}
	return o.db, nil
}

// read returns an object's type and content.
func (o *objects) read(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	db, err := o.reader()
	if err != nil {
		return 0, nil, fmt.Errorf("read object %s: %w", h, err)
	}
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
			// error, which no caller takes for "not in the tree".
			return 0, nil, refusal.NewUnreadable(refusal.ObjectMissing,
				"fetch the records whole (git nwdes fetch; in a partial clone it asks the promisor remote), or find the damage with git fsck",
				"object %s is not in this repository (a partial or shallow clone, or damage)", h).Wrap(ErrObjectMissing)
		}
		time.Sleep(time.Duration(attempt+1) * 5 * time.Millisecond)
	}
}

// write stores an object as a loose file and returns its id.
//
// Two things go-git's writer does not do, and git does, are done here: an
// object that already exists loose is freshened (its mtime set to now)
// instead of rewritten, so that a concurrent git gc does not prune it as old
// and unreachable just before our new commit makes it reachable; and a write
// that loses its fanout directory to a concurrent repack (which removes empty
// objects/xx/ directories) is retried.
func (o *objects) write(t plumbing.ObjectType, data []byte) (plumbing.Hash, error) {
	if filepath.Base(o.dir) != "objects" {
		// go-git's writer writes into <git dir>/objects only: an object
		// directory elsewhere (a server's quarantine) is read, never
		// written, by nwdes.
		return plumbing.ZeroHash, refusal.New(refusal.StoreNotWritable,
			"run the writing verb outside the server-side hook (nwdes only reads a quarantine)",
			"objects go to %s (GIT_OBJECT_DIRECTORY), where nwdes does not write", o.dir)
	}
	h := hashOf(t, data)
	hex := h.String()
	loose := filepath.Join(o.dir, hex[:2], hex[2:])
	now := time.Now()
	if err := os.Chtimes(loose, now, now); err == nil {
		return h, nil
	}
	st := o.storage()
	o.wmu.Lock()
	defer o.wmu.Unlock()
	for attempt := 0; ; attempt++ {
		obj := st.NewEncodedObject()
		obj.SetType(t)
		obj.SetSize(int64(len(data)))
		w, err := obj.Writer()
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if _, err := w.Write(data); err != nil {
			return plumbing.ZeroHash, err
		}
		w.Close()
		_, err = st.SetEncodedObject(obj)
		if err == nil {
			return h, nil
		}
		if !errors.Is(err, fs.ErrNotExist) || attempt == 4 {
			return plumbing.ZeroHash, fmt.Errorf("write %s object: %w", t, err)
		}
	}
}

func hashOf(t plumbing.ObjectType, data []byte) plumbing.Hash {
	return plumbing.ComputeHash(t, data)
}

// treeEntry is one entry of a git tree.
type treeEntry struct {
	name string
	mode uint32
	hash plumbing.Hash
}

const (
	modeTree = 0o40000
	modeBlob = 0o100644
)

func (e treeEntry) isTree() bool { return e.mode == modeTree }

// encodeTree writes entries in git's order: by name, with a tree's name
// compared as if it ended in "/". git fsck --strict checks this order.
func encodeTree(entries []treeEntry) []byte {
	sort.Slice(entries, func(i, j int) bool { return treeKey(entries[i]) < treeKey(entries[j]) })
	var b bytes.Buffer
	for _, e := range entries {
		b.WriteString(strconv.FormatUint(uint64(e.mode), 8))
		b.WriteByte(' ')
		b.WriteString(e.name)
		b.WriteByte(0)
		b.Write(e.hash[:])
	}
	return b.Bytes()
}

func treeKey(e treeEntry) string {
	if e.isTree() {
		return e.name + "/"
	}
	return e.name
}

func decodeTree(h plumbing.Hash, b []byte) ([]treeEntry, error) {
	var out []treeEntry
	for len(b) > 0 {
		sp := bytes.IndexByte(b, ' ')
		nul := bytes.IndexByte(b, 0)
		if sp < 0 || nul < sp || len(b) < nul+21 {
			return nil, fmt.Errorf("tree %s is malformed", h)
		}
		mode, err := strconv.ParseUint(string(b[:sp]), 8, 32)
		if err != nil {
			return nil, fmt.Errorf("tree %s has a bad mode: %w", h, err)
		}
		name := string(b[sp+1 : nul])
		if name == "" || name == "." || name == ".." || strings.Contains(name, "/") {
			// git fsck refuses these too; a path built from one would not
			// be the path the tree seems to hold.
			return nil, fmt.Errorf("tree %s has an entry named %q", h, name)
		}
		var eh plumbing.Hash
		copy(eh[:], b[nul+1:nul+21])
		out = append(out, treeEntry{name: name, mode: uint32(mode), hash: eh})
		b = b[nul+21:]
	}
	return out, nil
}

// commitInfo is what nwdes reads from a commit.
type commitInfo struct {
	Tree    plumbing.Hash
	Parents []plumbing.Hash
	Time    time.Time
	Message string
}

func decodeCommit(h plumbing.Hash, b []byte) (commitInfo, error) {
	var c commitInfo
	head, msg, _ := bytes.Cut(b, []byte("\n\n"))
	c.Message = string(msg)
	for _, line := range bytes.Split(head, []byte("\n")) {
		k, v, _ := bytes.Cut(line, []byte(" "))
		switch string(k) {
		case "tree":
			if !isHex40(string(v)) {
				return c, fmt.Errorf("commit %s has a bad tree line", h)
			}
			c.Tree = plumbing.NewHash(string(v))
		case "parent":
			if !isHex40(string(v)) {
				return c, fmt.Errorf("commit %s has a bad parent line", h)
			}
			c.Parents = append(c.Parents, plumbing.NewHash(string(v)))
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

func encodeCommit(tree plumbing.Hash, parents []plumbing.Hash, ident string, when time.Time, msg string) []byte {
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

// close releases the object reader's pack files and maps and go-git's
// storage; a later read reopens nothing and fails.
func (o *objects) close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	var errs []error
	if o.db != nil {
		errs = append(errs, o.db.Close())
	}
	if o.st != nil {
		errs = append(errs, o.st.Close())
	}
	o.closed = true
	return errors.Join(errs...)
}
