package stage

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

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
// The branch is written as the one line of dir/.git/packed-refs, as git
// pack-refs would leave it, not as a loose file under refs/heads/: git
// reads it the same way (and writes it loose at the first commit), and
// the two directories a loose branch needs (refs/heads and the branch's
// own, worker/ for the swarm's) are not made. Making a directory is the
// dearest thing staging does where making files is slow.
//
// write exports the files (the examine package's ExportTree, which checks
// every tree path); it is given so that there is one exporter.
func Repository(s *git.Repo, commit oid.ID, dir, branch string, write func(dir string) error) error {
	if !validBranch(branch) {
		return refusal.New(refusal.RefNameInvalid, "name the branch with letters, digits, '/', '.', '_' and '-'",
			"%q is not a branch name git could hold", branch)
	}
	if commit.Format() != s.Format() {
		return refusal.New(refusal.UnsupportedRepository, "stage a commit of this repository's own object format",
			"commit %s is a %s id in a %s repository", commit, commit.Format(), s.Format())
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
	// What git init writes and git needs not (description, info/exclude,
	// an empty objects/pack, refs/heads and refs/tags, which git makes
	// when it first writes there) is left out: a file or directory made
	// is a cost of every staging. git takes a directory for a repository
	// only with refs/ in it.
	for _, d := range []string{"objects/info", "refs"} {
		if err := os.MkdirAll(filepath.Join(gitDir, filepath.FromSlash(d)), 0o755); err != nil {
			return err
		}
	}
	// A SHA-256 repository says so (format version 1 and its extension),
	// as git init --object-format=sha256 writes it; git reads ids, the
	// index and packs at that size only then.
	config := "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n"
	if s.Format() == oid.SHA256 {
		config = "[core]\n\trepositoryformatversion = 1\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n[extensions]\n\tobjectformat = sha256\n"
	}
	files := map[string]string{
		"HEAD":                    "ref: refs/heads/" + branch + "\n",
		"config":                  config,
		"objects/info/alternates": objects + "\n",
		// git pack-refs' header: the file is sorted, and a branch needs
		// no peeled line.
		"packed-refs": "# pack-refs with: peeled fully-peeled sorted \n" + commit.String() + " refs/heads/" + branch + "\n",
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
	var entries []entry
	err := s.Walk(commit, func(p string, mode uint32, blob oid.ID) error {
		if mode == 0o100664 {
			mode = git.ModeFile // git's index holds 0644 for an old group-writable mode
		}
		e := entry{name: p, mode: mode, id: blob}
		if mode != git.ModeGitlink {
			fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(p)))
			if err != nil {
				return fmt.Errorf("stage %s: %w", p, err)
			}
			e.size = uint32(fi.Size())
			e.mtime = fi.ModTime()
			fillStat(&e, fi)
		}
		entries = append(entries, e)
		return nil
	})
	if err != nil {
		return err
	}
	b, err := encodeIndex(s.Format(), entries)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dir, ".git", "index"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
