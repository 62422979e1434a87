//go:build !unix

package workspace

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

type linkError struct{ name string }

func (e *linkError) Error() string { return e.name + " is a symbolic link" }

// openInPublic checks each name with Lstat, then opens the path: without
// descriptor-relative opens a rename in between is not excluded.
func openInPublic(root, rel string) (*os.File, error) {
	path := root
	if rel != "" {
		for _, name := range strings.Split(rel, "/") {
			path = filepath.Join(path, name)
			fi, err := os.Lstat(path)
			if err != nil {
				return nil, err
			}
			if fi.Mode()&fs.ModeSymlink != 0 {
				return nil, &linkError{name}
			}
		}
	}
	return os.Open(path)
}
