package memstore

import (
	"fmt"
	"sort"
	"strings"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/refusal"
)

// view is a ref's files at one commit, and, inside Change, the edits
// staged on them: the map is copied on the first edit, so the commit's own
// stays as it was.
type view struct {
	s        *Store
	ref      gitstore.RefName
	base     oid.ID
	files    map[string]file // the commit's (shared) until the first edit
	orig     map[string]file // the commit's, once files is a copy
	blobs    map[oid.ID][]byte
	readOnly bool
	changed  bool
	spec     gitstore.RefSpec
	// keys (files' paths, sorted) and trees (tree ids by directory) are
	// computed from files when first needed, and dropped at each edit.
	keys  []string
	trees map[string]oid.ID
}

var _ gitstore.Edit = (*view)(nil)

func (v *view) Ref() gitstore.RefName { return v.ref }
func (v *view) Base() oid.ID          { return v.base }

// base0 is the commit's files, whether or not v has copied them.
func (v *view) base0() map[string]file {
	if v.changed {
		return v.orig
	}
	return v.files
}

// clean turns a path into the map's key, refusing what git's store
// refuses.
func clean(path string) (string, error) {
	parts, err := gitstore.PathParts(path)
	if err != nil {
		return "", err
	}
	return strings.Join(parts, "/"), nil
}

func (v *view) ReadBlob(path string) ([]byte, error) {
	key, err := clean(path)
	if err != nil || key == "" {
		return nil, fmt.Errorf("read %s: %w", path, gitstore.ErrNotFound)
	}
	f, ok := v.files[key]
	if !ok {
		return nil, fmt.Errorf("%s in %s: %w", path, v.ref, gitstore.ErrNotFound)
	}
	return v.read(f.blob)
}

func (v *view) read(id oid.ID) ([]byte, error) {
	if b, ok := v.blobs[id]; ok {
		return b, nil
	}
	if b, ok := v.s.blob(id); ok {
		return b, nil
	}
	return nil, fmt.Errorf("blob %s: %w", id, gitstore.ErrObjectMissing)
}

// under returns the files below dir ("" for the root), by path relative to
// it, sorted.
func (v *view) under(dir string) []string {
	if v.keys == nil {
		v.keys = make([]string, 0, len(v.files))
		for k := range v.files {
			v.keys = append(v.keys, k)
		}
		sort.Strings(v.keys)
	}
	prefix := ""
	if dir != "" {
		prefix = dir + "/"
	}
	var out []string
	for i := sort.SearchStrings(v.keys, prefix); i < len(v.keys) && strings.HasPrefix(v.keys[i], prefix); i++ {
		out = append(out, v.keys[i][len(prefix):])
	}
	return out
}

// treeID is the git tree id of the files below dir, as a record's TreeID
// and a DirEntry name it.
func (v *view) treeID(dir string) oid.ID {
	if id, ok := v.trees[dir]; ok {
		return id
	}
	var files []gitstore.TreeFile
	for _, rel := range v.under(dir) {
		f := v.files[dir+"/"+rel]
		files = append(files, gitstore.TreeFile{Path: rel, Mode: f.mode, Blob: f.blob})
	}
	id, _ := gitstore.TreeOf(files)
	if v.trees == nil {
		v.trees = map[string]oid.ID{}
	}
	v.trees[dir] = id
	return id
}

func (v *view) ReadDir(dir string) ([]gitstore.DirEntry, error) { return v.entries(dir, true) }

// entries lists dir; the ids of subdirectories (a tree id hashes every
// file below) only when asked for.
func (v *view) entries(dir string, ids bool) ([]gitstore.DirEntry, error) {
	key, err := clean(dir)
	if err != nil {
		return nil, err
	}
	var out []gitstore.DirEntry
	for _, rel := range v.under(key) {
		name, _, sub := strings.Cut(rel, "/")
		if len(out) > 0 && out[len(out)-1].Name == name {
			continue
		}
		full := join(key, name)
		if sub {
			e := gitstore.DirEntry{Name: name, Mode: gitstore.ModeTree}
			if ids {
				e.Hash = v.treeID(full)
			}
			out = append(out, e)
		} else {
			f := v.files[full]
			out = append(out, gitstore.DirEntry{Name: name, Mode: f.mode, Hash: f.blob})
		}
	}
	return out, nil
}

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

func (v *view) List(dir string) ([]string, error) {
	es, err := v.entries(dir, false)
	names := make([]string, len(es))
	for i, e := range es {
		names[i] = e.Name
	}
	return names, err
}

func (v *view) Lookup(path string) (gitstore.DirEntry, bool, error) {
	key, err := clean(path)
	if err != nil || key == "" {
		return gitstore.DirEntry{}, false, err
	}
	name := key[strings.LastIndexByte(key, '/')+1:]
	if f, ok := v.files[key]; ok {
		return gitstore.DirEntry{Name: name, Mode: f.mode, Hash: f.blob}, true, nil
	}
	if len(v.under(key)) > 0 {
		return gitstore.DirEntry{Name: name, Mode: gitstore.ModeTree, Hash: v.treeID(key)}, true, nil
	}
	return gitstore.DirEntry{}, false, nil
}

func (v *view) Get(path string) (*gitstore.Record, error) { return gitstore.ReadRecord(v, path) }

// edit makes v's files its own before the first change.
func (v *view) edit(what, path string) error {
	if v.readOnly {
		return fmt.Errorf("%s %s: read-only view", what, path)
	}
	v.keys, v.trees = nil, nil
	if !v.changed {
		v.orig = v.files
		v.files = make(map[string]file, len(v.orig))
		for k, f := range v.orig {
			v.files[k] = f
		}
		v.changed = true
	}
	return nil
}

// removeKey deletes the file or the directory at key.
func (v *view) removeKey(key string) {
	delete(v.files, key)
	for k := range v.files {
		if strings.HasPrefix(k, key+"/") {
			delete(v.files, k)
		}
	}
}

// place puts f at key: a file on the way (git's tree would need a
// directory there) and a directory at key are replaced, as in the git
// store.
func (v *view) place(key string, f file) {
	for i := strings.IndexByte(key, '/'); i >= 0; i = next(key, i) {
		delete(v.files, key[:i])
	}
	v.removeKey(key)
	v.files[key] = f
}

func next(key string, i int) int {
	j := strings.IndexByte(key[i+1:], '/')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

func (v *view) WriteBlob(path string, data []byte) error {
	if path == "record.json" || strings.HasSuffix(path, "/record.json") {
		return refusal.New(refusal.KindNotDeclared, "write records with Put",
			"%s: a record.json is written only as a record, whose kind is checked", path)
	}
	return v.writeBlob(path, data)
}

func (v *view) writeBlob(path string, data []byte) error {
	if v.readOnly {
		return fmt.Errorf("write %s: read-only view", path)
	}
	key, err := clean(path)
	if err != nil {
		return err
	}
	if key == "" {
		return fmt.Errorf("write: empty path")
	}
	id := gitstore.BlobID(oid.SHA1, data)
	if f, ok := v.files[key]; ok && f.mode == gitstore.ModeFile && f.blob == id {
		return nil
	}
	if err := v.edit("write", path); err != nil {
		return err
	}
	if v.blobs == nil {
		v.blobs = map[oid.ID][]byte{}
	}
	v.blobs[id] = data
	v.place(key, file{mode: gitstore.ModeFile, blob: id})
	return nil
}

func (v *view) Remove(path string) error {
	if v.readOnly {
		return fmt.Errorf("remove %s: read-only view", path)
	}
	key, err := clean(path)
	if err != nil || key == "" {
		return fmt.Errorf("remove %q: empty path", path)
	}
	if _, ok := v.files[key]; !ok && len(v.under(key)) == 0 {
		return nil
	}
	if err := v.edit("remove", path); err != nil {
		return err
	}
	v.removeKey(key)
	return nil
}

func (v *view) Put(path string, rec *gitstore.Record) error {
	if v.readOnly {
		return fmt.Errorf("put %s: read-only view", path)
	}
	enc, err := v.s.opts.Registry.CheckRecord(v.spec, path, rec, v.s.opts.MaxRecordBytes)
	if err != nil {
		return err
	}
	if err := v.Remove(path); err != nil {
		return err
	}
	if err := v.writeBlob(path+"/record.json", enc); err != nil {
		return err
	}
	for name, p := range rec.Payloads {
		if err := v.writeBlob(path+"/payload/"+name, p); err != nil {
			return err
		}
	}
	if rec.Tree != nil {
		return v.attachTree(path+"/"+gitstore.RecordTreeDir, rec.Tree)
	}
	return nil
}

// attachTree stages files at dir by reference: each blob must be in the
// store already (AddBlob, or a record's), as in the git store.
func (v *view) attachTree(dir string, files []gitstore.TreeFile) error {
	if len(files) == 0 {
		return refusal.New(refusal.PathInvalid, "attach at least one file, or no tree", "record tree at %s is empty", dir)
	}
	if _, err := gitstore.TreeOf(files); err != nil {
		return err
	}
	for _, f := range files {
		if _, err := v.read(f.Blob); err != nil {
			return fmt.Errorf("record tree file %s: %w", f.Path, err)
		}
		key, err := clean(dir + "/" + f.Path)
		if err != nil {
			return err
		}
		if err := v.edit("attach", key); err != nil {
			return err
		}
		v.files[key] = file{mode: f.Mode, blob: f.Blob}
	}
	return nil
}

// checkLayout refuses an edit that leaves the ref's declared top level.
func (v *view) checkLayout() error {
	if v.spec.Layout == nil {
		return nil
	}
	for _, rel := range v.under("") {
		name, _, sub := strings.Cut(rel, "/")
		switch {
		case !sub:
			return gitstore.LayoutRefused(v.ref, fmt.Sprintf("%q is a file at the top level", name))
		case !contains(v.spec.Layout, name):
			return gitstore.LayoutRefused(v.ref, fmt.Sprintf("%q is not one of its directories (%s)", name, strings.Join(v.spec.Layout, ", ")))
		}
	}
	return nil
}

// checkImmutable refuses an edit of an append-only ref that removes or
// changes a file under one of its Immutable directories.
func (v *view) checkImmutable() error {
	if !v.spec.AppendOnly() {
		return nil
	}
	if path, gone := altered(v.base0(), v.files, v.spec.Immutable); path != "" {
		return gitstore.ImmutableRefused(v.ref, v.spec, path, gone)
	}
	return nil
}

// altered is the first file (in path order) under dirs that old holds and
// next lacks (gone) or holds otherwise, "" when none.
func altered(old, next map[string]file, dirs []string) (string, bool) {
	var keys []string
	for k := range old {
		top, _, _ := strings.Cut(k, "/")
		if contains(dirs, top) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		f, ok := next[k]
		if !ok || f != old[k] {
			return k, !ok
		}
	}
	return "", false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
