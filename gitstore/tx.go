package gitstore

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/nwdes/nwdes/gitstore/git"

	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/internal/names"
	"github.com/nwdes/nwdes/refusal"
)

// Tx is a view of one ref's tree at one tip, with edits staged in memory.
// Trees are loaded only along the paths touched, so a read or an append
// costs O(depth), not O(records), however many records the ref holds.
//
// Inside Store.Update the function given a Tx may run more than once: after
// a compare-and-swap conflict it runs again on a fresh Tx at the new tip,
// so it must decide from what the Tx shows, not from earlier runs.
type Tx struct {
	s        *Store
	ref      RefName
	base     oid.ID // the commit this view starts from; zero if none
	baseTree oid.ID // its tree
	root     *node
	readOnly bool
	// commitTree is set for a commit's own tree (Store.Tree), which may
	// hold any entry git allows; a ref's tree holds directories and
	// regular files only (RecordModeProblem).
	commitTree bool
	changed    bool
	spec       RefSpec           // the ref's declaration (set for updates)
	blobs      map[oid.ID][]byte // staged blobs, written at commit
	batch      *git.Batch        // the objects writeTrees made, for commit's pack
	// trees, when set, holds trees already read (fsck's, of the commit it
	// checks), so that a check reading its neighbours does not read them
	// again.
	trees treeCache
}

// treeCache holds decoded trees by id, so that fsck's walk of a commit
// and the view its checks read through decode each tree once. Its users
// are one goroutine's; the entries are shared, read only.
type treeCache map[oid.ID][]git.TreeEntry

// treeUnreadable is readTree's error when the tree could not be read (or
// was not a tree), as against read and not decoded.
type treeUnreadable struct{ err error }

func (e *treeUnreadable) Error() string { return e.err.Error() }
func (e *treeUnreadable) Unwrap() error { return e.err }

// readTree reads and decodes tree id through c, keeping what it decodes
// there; c may be nil.
func (c treeCache) readTree(s *Store, id oid.ID) ([]git.TreeEntry, error) {
	if es, ok := c[id]; ok {
		return es, nil
	}
	t, b, err := s.git.Read(id)
	if err == nil && t != git.TreeObject {
		err = fmt.Errorf("object %s is a %s, expected a tree", id, t)
	}
	if err != nil {
		return nil, &treeUnreadable{err}
	}
	es, err := git.DecodeTree(id, b)
	if err == nil && c != nil {
		c[id] = es
	}
	return es, err
}

type node struct {
	ID      oid.ID // the stored tree, zero for a new one
	entries map[string]*entry
	loaded  bool
	dirty   bool
}

type entry struct {
	Mode uint32
	ID   oid.ID
	sub  *node
}

// Base is the commit this view was taken at (zero for an absent ref).
func (tx *Tx) Base() oid.ID { return (tx.base) }

// Ref is the ref this view belongs to.
func (tx *Tx) Ref() RefName { return tx.ref }

// load reads n's entries once. A node that fails to load stays unloaded,
// so every later read through the view fails the same way rather than
// finding it empty.
func (tx *Tx) load(n *node) error {
	if n.loaded {
		return nil
	}
	var entries map[string]*entry
	if n.ID.IsZero() {
		entries = map[string]*entry{}
	} else {
		es, err := tx.trees.readTree(tx.s, n.ID)
		if r := (*treeUnreadable)(nil); errors.As(err, &r) {
			return r.err
		}
		if err != nil {
			return err
		}
		// Sized once, and the entries in one allocation: a bulk reader
		// (fsck) loads every version of every tree, and growing the map
		// and allocating each entry was a fifth of what it allocated.
		// An entry kept alive keeps its tree's whole array: a Tx keeps its
		// nodes whole anyway, and hands out values (DirEntry), never
		// entries.
		entries = make(map[string]*entry, len(es))
		all := make([]entry, len(es))
		for i, e := range es {
			if what := RecordModeProblem(e.Mode); what != "" && !tx.commitTree {
				return refusal.NewUnreadable(refusal.RefUnreadable,
					"restore the ref to a commit nwdes wrote (git nwdes fetch from a good clone, or git update-ref to its previous tip from the reflog)",
					"%s: tree %s holds %q with %s", tx.ref, n.ID.String()[:12], e.Name, what)
			}
			all[i] = entry{Mode: e.Mode, ID: e.ID}
			entries[e.Name] = &all[i]
		}
	}
	n.entries, n.loaded = entries, true
	return nil
}

// splitPath splits a record path (git.SplitPath: refused when a component
// is empty, ".", ".." or ".git").
func splitPath(p string) ([]string, error) { return git.SplitPath(p) }

// walk returns the node for dir path parts, creating it when create is set.
// It returns nil, nil when the path is absent and create is false.
func (tx *Tx) walk(parts []string, create bool) (*node, []*node, error) {
	n := tx.root
	trail := []*node{n}
	for _, c := range parts {
		if err := tx.load(n); err != nil {
			return nil, nil, err
		}
		e := n.entries[c]
		if e == nil || e.Mode != ModeTree {
			if !create {
				return nil, nil, nil
			}
			e = &entry{Mode: ModeTree, sub: &node{loaded: true, entries: map[string]*entry{}}}
			n.entries[c] = e
		}
		if e.sub == nil {
			e.sub = &node{ID: e.ID}
		}
		n = e.sub
		trail = append(trail, n)
	}
	if err := tx.load(n); err != nil {
		return nil, nil, err
	}
	return n, trail, nil
}

func (tx *Tx) touch(trail []*node) {
	for _, n := range trail {
		n.dirty = true
	}
	tx.changed = true
}

// ReadBlob returns the bytes at path, or an error wrapping ErrNotFound.
func (tx *Tx) ReadBlob(path string) ([]byte, error) {
	e, err := tx.blobEntry(path)
	if err != nil {
		return nil, err
	}
	return tx.readBlobAt(path, e)
}

// blobEntry is the entry of the file at path: ErrNotFound when there is
// none, or a directory is there.
func (tx *Tx) blobEntry(path string) (*entry, error) {
	parts, err := splitPath(path)
	if err != nil || len(parts) == 0 {
		return nil, fmt.Errorf("read %s: %w", path, ErrNotFound)
	}
	dir, _, err := tx.walk(parts[:len(parts)-1], false)
	if err != nil {
		return nil, err
	}
	if dir == nil {
		return nil, fmt.Errorf("%s in %s: %w", path, tx.ref, ErrNotFound)
	}
	e := dir.entries[parts[len(parts)-1]]
	if e == nil || e.Mode == ModeTree {
		return nil, fmt.Errorf("%s in %s: %w", path, tx.ref, ErrNotFound)
	}
	return e, nil
}

// readBlobAt reads the blob of e, the entry at path.
func (tx *Tx) readBlobAt(path string, e *entry) ([]byte, error) {
	if b, ok := tx.blobs[e.ID]; ok {
		return b, nil
	}
	t, b, err := tx.s.git.Read(e.ID)
	if err != nil {
		return nil, err
	}
	if t != git.BlobObject {
		return nil, fmt.Errorf("%s in %s is a %s, expected a blob", path, tx.ref, t)
	}
	return b, nil
}

// WriteBlob stages data at path, replacing whatever was there. A file named
// record.json is refused: records are written with Put, which checks their
// kind against the registry, so that no path around it exists.
func (tx *Tx) WriteBlob(path string, data []byte) error {
	if path == "record.json" || strings.HasSuffix(path, "/record.json") {
		return refusal.New(refusal.KindNotDeclared, "write records with Put",
			"%s: a record.json is written only as a record, whose kind is checked", path)
	}
	return tx.writeBlob(path, data)
}

func (tx *Tx) writeBlob(path string, data []byte) error {
	if tx.readOnly {
		return fmt.Errorf("write %s: read-only view", path)
	}
	parts, err := splitPath(path)
	if err != nil {
		return err
	}
	if len(parts) == 0 {
		return fmt.Errorf("write: empty path")
	}
	dir, trail, err := tx.walk(parts[:len(parts)-1], true)
	if err != nil {
		return err
	}
	h := git.HashOf(tx.s.git.Format(), git.BlobObject, data)
	name := parts[len(parts)-1]
	if e := dir.entries[name]; e != nil && e.Mode == ModeFile && e.ID == h {
		return nil
	}
	if tx.blobs == nil {
		tx.blobs = map[oid.ID][]byte{}
	}
	tx.blobs[h] = data
	dir.entries[name] = &entry{Mode: ModeFile, ID: h}
	tx.touch(trail)
	return nil
}

// List returns the names directly under dir, sorted; none for an absent dir.
func (tx *Tx) List(dir string) ([]string, error) {
	entries, err := tx.ReadDir(dir)
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name
	}
	return names, err
}

// ReadDir returns the entries directly under dir, sorted by name; none when
// dir is absent or not a directory.
func (tx *Tx) ReadDir(dir string) ([]DirEntry, error) {
	parts, err := splitPath(dir)
	if err != nil {
		return nil, err
	}
	n, _, err := tx.walk(parts, false)
	if err != nil || n == nil {
		return nil, err
	}
	out := make([]DirEntry, 0, len(n.entries))
	for k, e := range n.entries {
		out = append(out, DirEntry{Name: k, Mode: e.Mode, Hash: (e.ID)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Remove deletes whatever is at path; removing nothing is not an error.
func (tx *Tx) Remove(path string) error {
	if tx.readOnly {
		return fmt.Errorf("remove %s: read-only view", path)
	}
	parts, err := splitPath(path)
	if err != nil || len(parts) == 0 {
		return fmt.Errorf("remove %q: empty path", path)
	}
	dir, trail, err := tx.walk(parts[:len(parts)-1], false)
	if err != nil || dir == nil {
		return err
	}
	if _, ok := dir.entries[parts[len(parts)-1]]; !ok {
		return nil
	}
	delete(dir.entries, parts[len(parts)-1])
	tx.touch(trail)
	return nil
}

// Get reads the record stored at path (see Record for the layout): the
// one reading every View shares (ReadRecord).
func (tx *Tx) Get(path string) (*Record, error) { return ReadRecord(tx, path) }

// Put stores rec at path, replacing any record there. It refuses a record
// over the store's size limit with RecordTooLarge, and one whose kind is not
// declared for the ref (or newer than declared) with KindNotDeclared.
func (tx *Tx) Put(path string, rec *Record) error {
	if tx.readOnly {
		return fmt.Errorf("put %s: read-only view", path)
	}
	if err := tx.s.opts.Registry.kindFor(tx.spec, rec.Kind, rec.V); err != nil {
		return err
	}
	enc, err := rec.encode()
	if err != nil {
		return err
	}
	if n, max := rec.size(enc), tx.s.opts.MaxRecordBytes; n > max {
		return refusal.New(refusal.RecordTooLarge,
			"store less (for command output keep a digest and a bounded tail), or raise nwdes.maxRecordBytes",
			"record %s is %d bytes, over the limit of %d bytes", path, n, max)
	}
	for name := range rec.Payloads {
		if !names.Valid(name, maxPayloadName) {
			return refusal.New(refusal.PathInvalid, "name payloads with letters, digits, '.', '_' and '-'",
				"payload name %q is not allowed", name)
		}
	}
	if err := tx.Remove(path); err != nil {
		return err
	}
	if err := tx.writeBlob(path+"/record.json", enc); err != nil {
		return err
	}
	for name, p := range rec.Payloads {
		if err := tx.writeBlob(path+"/payload/"+name, p); err != nil {
			return err
		}
	}
	if rec.Tree != nil {
		return tx.attachTree(path+"/"+recordTreeDir, rec.Tree)
	}
	return nil
}

// recordTreeDir is where, beside record.json, a record keeps its tree.
const recordTreeDir = "tree"

// attachTree stages files at dir by reference: each blob must already be
// in the store (it is freshened, as an update freshens what it reuses, so
// that a concurrent gc keeps it until the ref makes it reachable). The
// tree objects themselves are written with the update.
func (tx *Tx) attachTree(dir string, files []TreeFile) error {
	if len(files) == 0 {
		return refusal.New(refusal.PathInvalid, "attach at least one file, or no tree", "record tree at %s is empty", dir)
	}
	if _, err := TreeOf(files); err != nil {
		return err
	}
	for _, f := range files {
		if f.Mode != ModeFile && f.Mode != ModeExec {
			return refusal.New(refusal.PathInvalid, "attach regular files only",
				"record tree file %s has mode %o, not a regular file", f.Path, f.Mode)
		}
		parts, err := splitPath(f.Path)
		if err != nil {
			return err
		}
		if len(parts) == 0 {
			return refusal.New(refusal.PathInvalid, "name each file of a record tree", "record tree file with an empty path")
		}
		h := (f.Blob)
		t, _, err := tx.s.git.Read(h)
		if err != nil {
			return fmt.Errorf("record tree file %s: %w", f.Path, err)
		}
		if t != git.BlobObject {
			return fmt.Errorf("record tree file %s: object %s is a %s, not a blob", f.Path, h, t)
		}
		tx.s.git.Freshen(h)
		all, _ := splitPath(dir)
		all = append(all, parts...)
		d, trail, err := tx.walk(all[:len(all)-1], true)
		if err != nil {
			return err
		}
		name := all[len(all)-1]
		if _, dup := d.entries[name]; dup {
			return refusal.New(refusal.PathInvalid, "attach each path once", "record tree file %s is given twice", f.Path)
		}
		d.entries[name] = &entry{Mode: f.Mode, ID: h}
		tx.touch(trail)
	}
	return nil
}

// TreeOf returns the id of the tree files make, the TreeID of a record
// that carries them: computed, nothing is written, in the object format of
// the files' blobs (SHA-1 for no files). A path given twice, one that is
// both a file and a directory, or blobs of two formats are refused.
func TreeOf(files []TreeFile) (oid.ID, error) {
	format := oid.SHA1
	if len(files) > 0 {
		format = files[0].Blob.Format()
	}
	type dir struct {
		files map[string]TreeFile
		dirs  map[string]*dir
	}
	newDir := func() *dir { return &dir{files: map[string]TreeFile{}, dirs: map[string]*dir{}} }
	root := newDir()
	for _, f := range files {
		parts, err := splitPath(f.Path)
		if err != nil {
			return oid.ID{}, err
		}
		if len(parts) == 0 || (f.Mode != ModeFile && f.Mode != ModeExec) {
			return oid.ID{}, refusal.New(refusal.PathInvalid, "give regular files with paths", "tree file %q (mode %o) is not a named regular file", f.Path, f.Mode)
		}
		d := root
		for _, c := range parts[:len(parts)-1] {
			if _, clash := d.files[c]; clash {
				return oid.ID{}, refusal.New(refusal.PathInvalid, "give each path once", "tree path %s is both a file and a directory", f.Path)
			}
			if d.dirs[c] == nil {
				d.dirs[c] = newDir()
			}
			d = d.dirs[c]
		}
		name := parts[len(parts)-1]
		if _, dup := d.files[name]; dup || d.dirs[name] != nil {
			return oid.ID{}, refusal.New(refusal.PathInvalid, "give each path once", "tree path %s is given twice", f.Path)
		}
		d.files[name] = f
	}
	var hash func(d *dir) (oid.ID, error)
	hash = func(d *dir) (oid.ID, error) {
		var es []git.TreeEntry
		for name, f := range d.files {
			es = append(es, git.TreeEntry{Name: name, Mode: f.Mode, ID: f.Blob})
		}
		for name, sub := range d.dirs {
			h, err := hash(sub)
			if err != nil {
				return oid.Zero, err
			}
			es = append(es, git.TreeEntry{Name: name, Mode: ModeTree, ID: h})
		}
		b, err := git.EncodeTree(es)
		if err != nil {
			return oid.Zero, err
		}
		return git.HashOf(format, git.TreeObject, b), nil
	}
	return hash(root)
}

// writeTrees collects staged blobs and every dirty tree bottom-up into the
// transaction's batch and returns the root tree id. Nothing is written
// here: Store.commit adds the commit and stages the batch as one pack
// (git.Repo.Stage), and git.Repo.MoveRef publishes it before the ref moves.
func (tx *Tx) writeTrees() (oid.ID, error) {
	tx.batch = git.NewBatch(tx.s.git.Format())
	for _, b := range tx.blobs {
		tx.batch.Add(git.BlobObject, b)
	}
	return tx.writeNode(tx.root)
}

func (tx *Tx) writeNode(n *node) (oid.ID, error) {
	if !n.dirty {
		if n.ID.IsZero() {
			return tx.batch.Add(git.TreeObject, nil), nil
		}
		return n.ID, nil
	}
	es := make([]git.TreeEntry, 0, len(n.entries))
	for name, e := range n.entries {
		if e.sub != nil && e.sub.dirty {
			// An emptied directory disappears, as in git.
			if len(e.sub.entries) == 0 {
				continue
			}
			h, err := tx.writeNode(e.sub)
			if err != nil {
				return oid.Zero, err
			}
			e.ID = h
		}
		es = append(es, git.TreeEntry{Name: name, Mode: e.Mode, ID: e.ID})
	}
	b, err := git.EncodeTree(es)
	if err != nil {
		return oid.Zero, err
	}
	h := tx.batch.Add(git.TreeObject, b)
	n.ID, n.dirty = h, false
	return h, nil
}

// BlobID is the object id git gives a blob holding data (git hash-object)
// in object format f.
func BlobID(f oid.Format, data []byte) oid.ID { return git.HashOf(f, git.BlobObject, data) }
