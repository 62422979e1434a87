package stage

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"

	"github.com/nwdes/nwdes/gitstore/git"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/refusal"
)

// Repository makes dir, an existing empty directory, a checkout of
// commit that a program can work in as in any clone: a repository in
// dir/.git whose objects are s's (borrowed through
// objects/info/alternates: nothing is copied, no network), HEAD on
// refs/heads/<branch> at commit, the committed files written (export),
// and an index that matches them, so that git status is clean and a commit
// made there has commit as its parent. What the program commits is
// written to dir/.git/objects, never to s.
//
// write exports the files (the examine package's ExportTree, which checks
// every tree path); it is given so that there is one exporter.
func Repository(s *git.Repo, commit oid.ID, dir, branch string, write func(dir string) error) error {
	if !validBranch(branch) {
		return refusal.New(refusal.RefNameInvalid, "name the branch with letters, digits, '/', '.', '_' and '-'",
			"%q is not a branch name git could hold", branch)
	}
	if _, err := indexHash(commit); err != nil {
		return err
	}
	if _, err := s.ReadCommit(commit); err != nil {
		return err
	}
	if err := write(dir); err != nil {
		return err
	}
	objects, err := filepath.Abs(s.Location().Objects())
	if err != nil {
		return err
	}
	gitDir := filepath.Join(dir, ".git")
	// What git init writes and git needs not (description, info/exclude)
	// is left out: a file or directory made is a cost of every staging.
	for _, d := range []string{"objects/info", "objects/pack", "refs/heads/" + filepath.Dir(branch), "refs/tags"} {
		if err := os.MkdirAll(filepath.Join(gitDir, filepath.FromSlash(d)), 0o755); err != nil {
			return err
		}
	}
	files := map[string]string{
		"HEAD":                    "ref: refs/heads/" + branch + "\n",
		"config":                  "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n",
		"objects/info/alternates": objects + "\n",
		"refs/heads/" + branch:    commit.String() + "\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(gitDir, filepath.FromSlash(name)), []byte(body), 0o644); err != nil {
			return err
		}
	}
	return writeIndex(s, commit, dir)
}

// validBranch is a conservative branch name: what git accepts and more.
func validBranch(b string) bool {
	if b == "" || strings.HasPrefix(b, "/") || strings.HasSuffix(b, "/") || strings.HasSuffix(b, ".lock") || strings.Contains(b, "..") || strings.Contains(b, "//") {
		return false
	}
	for _, r := range b {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-", r)) {
			return false
		}
	}
	for _, c := range strings.Split(b, "/") {
		if strings.HasPrefix(c, ".") {
			return false
		}
	}
	return true
}

// writeIndex writes dir/.git/index for commit's tree, with the stat data
// of the files as they were just written, so that git sees them unchanged.
func writeIndex(s *git.Repo, commit oid.ID, dir string) error {
	idx := &index.Index{Version: 2}
	err := s.Walk(commit, func(p string, mode uint32, blob oid.ID) error {
		fm := filemode.FileMode(mode)
		if mode == 0o100664 {
			fm = filemode.Regular
		}
		h, err := indexHash(blob)
		if err != nil {
			return err
		}
		e := &index.Entry{Hash: h, Name: p, Mode: fm}
		if mode != git.ModeGitlink {
			fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(p)))
			if err != nil {
				return fmt.Errorf("stage %s: %w", p, err)
			}
			e.Size = uint32(fi.Size())
			e.ModifiedAt = fi.ModTime()
			fillStat(e, fi)
		}
		idx.Entries = append(idx.Entries, e)
		return nil
	})
	if err != nil {
		return err
	}
	sort.Slice(idx.Entries, func(i, j int) bool { return idx.Entries[i].Name < idx.Entries[j].Name })
	f, err := os.OpenFile(filepath.Join(dir, ".git", "index"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if err := index.NewEncoder(f).Encode(idx); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// indexHash is id as go-git's index writer holds it: a SHA-1 hash of 20
// bytes, the only size it has. Any other id is refused by name
// (UnsupportedRepository), never cut to 20 bytes, which would name another
// object: a SHA-256 repository's checkout is not staged.
func indexHash(id oid.ID) (plumbing.Hash, error) {
	var h plumbing.Hash
	if id.Format() != oid.SHA1 {
		return h, refusal.New(refusal.UnsupportedRepository, "stage checkouts of SHA-1 repositories only",
			"object %s is a %s id: nwdes writes the index of a staged checkout (go-git's index writer) for SHA-1 only", id, id.Format())
	}
	copy(h[:], id.Bytes())
	return h, nil
}
