package workspace

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/refusal"
)

// Entry is one name in a listed directory of the projection.
type Entry struct {
	Name string `json:"name"`
	Dir  bool   `json:"dir"`
	Size int64  `json:"size"`
}

// Content is what Read found: a directory's entries or a file's bytes.
type Content struct {
	Path    string  `json:"path"`
	Dir     bool    `json:"dir"`
	Entries []Entry `json:"entries,omitempty"`
	Data    []byte  `json:"-"`
}

// Read returns what public/ of a checked workspace holds at rel, a
// slash-separated path relative to it ("" or "." for public/ itself). A
// path that is absolute, leaves the projection, does not exist in it, or
// passes through a symbolic link is refused (ReadRefused): each name is
// opened relative to the directory before it without following a link, so
// nothing renamed between the workspace's check and the read redirects it.
func Read(w *examine.Workspace, rel string) (*Content, error) {
	refuse := func(format string, args ...any) error {
		return refusal.New(refusal.ReadRefused,
			fmt.Sprintf("read a path of the public projection, relative to it (git nwdes examine read --workspace %s lists it)", w.Path),
			"%s", fmt.Sprintf(format, args...))
	}
	if strings.HasPrefix(rel, "/") || filepath.IsAbs(rel) {
		return nil, refuse("%q is absolute: read paths are relative to the public projection", rel)
	}
	clean := filepath.ToSlash(filepath.Clean("/" + rel))[1:]
	for _, seg := range strings.Split(rel, "/") {
		if seg == ".." {
			return nil, refuse("%q climbs out with '..': only the public projection can be read", rel)
		}
	}
	if strings.ContainsRune(rel, 0) {
		return nil, refuse("%q holds a NUL", rel)
	}
	f, err := openInPublic(filepath.Join(w.Path, PublicDir), clean)
	var link *linkError
	switch {
	case errors.As(err, &link):
		return nil, refuse("%q passes through a symbolic link: nothing is read through one", rel)
	case err != nil:
		return nil, refuse("%q is not in the public projection", rel)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	out := &Content{Path: clean}
	switch {
	case fi.IsDir():
		ents, err := f.ReadDir(-1)
		if err != nil {
			return nil, err
		}
		out.Dir = true
		out.Entries = []Entry{}
		for _, e := range ents {
			info, err := e.Info()
			if err != nil {
				return nil, err
			}
			out.Entries = append(out.Entries, Entry{Name: e.Name(), Dir: e.IsDir(), Size: info.Size()})
		}
		sort.Slice(out.Entries, func(i, j int) bool { return out.Entries[i].Name < out.Entries[j].Name })
	case fi.Mode().IsRegular():
		if out.Data, err = io.ReadAll(f); err != nil {
			return nil, err
		}
	default:
		return nil, refuse("%q is a %s, neither a directory nor a regular file", rel, typeName(fi.Mode().Type()))
	}
	return out, nil
}
