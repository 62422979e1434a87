package examine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/nwdes/nwdes/gitstore/oid"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/refusal"
)

// modeGroupW is a file mode very old gits wrote; it is read as a plain file.
const modeGroupW = 0o100664

// ExportTree writes the committed tree of commit into dir, an existing
// empty directory: files with their executable bit, symlinks as symlinks,
// and each gitlink (submodule) as an empty directory, as a checkout leaves
// it. Only committed content is written, never a work tree's. Symlinks are
// made last, so that no file is ever written through one.
//
// In a partial clone, what the tree lacks is first fetched from the
// promisor remote in a few requests (Store.FetchMissing), rather than one
// per blob read: a store that can (a Fetcher) is asked.
func ExportTree(st gitstore.CommitReader, commit oid.ID, dir string) error {
	if f, ok := st.(Fetcher); ok {
		if err := f.FetchMissing(context.Background(), commit); err != nil {
			return err
		}
	}
	type link struct{ path, target string }
	var links []link
	err := st.Walk(commit, func(p string, mode uint32, blob oid.ID) error {
		if err := safeTreePath(p); err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		switch mode {
		case gitstore.ModeGitlink:
			return os.Mkdir(dst, 0o755)
		case gitstore.ModeSymlink:
			target, err := st.ReadBlob(blob)
			if err != nil {
				return err
			}
			links = append(links, link{dst, string(target)})
			return nil
		case gitstore.ModeFile, gitstore.ModeExec, modeGroupW:
			data, err := st.ReadBlob(blob)
			if err != nil {
				return err
			}
			perm := os.FileMode(0o644)
			if mode == gitstore.ModeExec {
				perm = 0o755
			}
			f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
			if err != nil {
				return err
			}
			if _, err := f.Write(data); err != nil {
				f.Close()
				return err
			}
			return f.Close()
		default:
			return refusal.NewUnreadable(refusal.TreeUnreadable, "check the commit with git fsck",
				"%s in %s has mode %o, which no checkout writes", p, commit.Short(), mode)
		}
	})
	if err != nil {
		if _, ok := refusal.As(err); ok {
			return err
		}
		// A tree or blob the commit names and the object store lacks (a
		// shallow or damaged clone): named, with a remedy, not a bare error.
		return refusal.NewUnreadable(refusal.TreeUnreadable, "fetch the missing objects (git fetch, or git fsck to see what is missing)",
			"the tree of %s cannot be exported: %v", commit.Short(), err)
	}
	for _, l := range links {
		if err := os.Symlink(l.target, l.path); err != nil {
			return fmt.Errorf("export %s: %w", commit.Short(), err)
		}
	}
	return nil
}

// safeTreePath refuses a tree path that would land outside the export or
// inside a .git directory: git refuses to check such trees out, and so
// does this.
func safeTreePath(p string) error {
	for _, c := range strings.Split(p, "/") {
		if c == "" || c == "." || c == ".." || strings.EqualFold(c, ".git") || strings.ContainsRune(c, 0) {
			return refusal.NewUnreadable(refusal.TreeUnreadable, "check the commit with git fsck",
				"tree path %q has an empty, '.', '..' or '.git' component", p)
		}
	}
	return nil
}

// WorkTreeDiffers returns the first committed path whose work-tree copy in
// dir differs from commit (changed, missing, or a symlink pointing
// elsewhere), or "" when every committed file is as committed. Files the
// commit does not hold are not looked at: it answers "did the gates judge
// what you see?", not "is the work tree clean?".
func WorkTreeDiffers(st gitstore.CommitReader, commit oid.ID, dir string) (string, error) {
	stop := errors.New("differs")
	var first string
	err := st.Walk(commit, func(p string, mode uint32, blob oid.ID) error {
		if safeTreePath(p) != nil {
			return nil
		}
		local := filepath.Join(dir, filepath.FromSlash(p))
		fi, err := os.Lstat(local)
		differs := err != nil
		if err == nil {
			switch mode {
			case gitstore.ModeSymlink:
				want, rerr := st.ReadBlob(blob)
				got, lerr := os.Readlink(local)
				differs = rerr != nil || lerr != nil || got != string(want)
			case gitstore.ModeFile, gitstore.ModeExec, modeGroupW:
				differs = !fi.Mode().IsRegular() || (mode == gitstore.ModeExec) != (fi.Mode()&0o100 != 0)
				if !differs {
					want, rerr := st.ReadBlob(blob)
					differs = rerr != nil || int64(len(want)) != fi.Size()
					if !differs {
						got, ferr := os.ReadFile(local)
						differs = ferr != nil || !bytes.Equal(got, want)
					}
				}
			default:
				return nil
			}
		}
		if differs {
			first = p
			return stop
		}
		return nil
	})
	if errors.Is(err, stop) {
		return first, nil
	}
	return "", err
}
