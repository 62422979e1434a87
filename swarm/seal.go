package swarm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"syscall"
)

// stagedGit is what stage wrote into the job repository's git directory
// that sealing writes back: HEAD, config and objects/info/alternates as
// they were before the job started (read right after staging).
type stagedGit struct {
	HEAD, Config, Alternates []byte
}

// readStaged reads what stage wrote into gitDir, before anything of the
// job runs.
func readStaged(gitDir string) (stagedGit, error) {
	var sg stagedGit
	for _, f := range []struct {
		name string
		to   *[]byte
	}{{"HEAD", &sg.HEAD}, {"config", &sg.Config}, {"objects/info/alternates", &sg.Alternates}} {
		b, err := os.ReadFile(gitDir + "/" + f.name)
		if err != nil {
			return sg, err
		}
		*f.to = b
	}
	return sg, nil
}

// keptGit are the entries of a job repository's git directory that
// outlive the job: its objects and refs (and their logs). Everything else
// there — config, hooks, info/ (attributes, excludes, grafts), the index,
// modules/, worktrees/, commondir, config.worktree, anything else — is
// removed when the job ends, and config is written again.
var keptGit = map[string]bool{"HEAD": true, "objects": true, "refs": true, "packed-refs": true, "logs": true}

// sealedConfig is the staged config with core.bare set: git then consults
// no work tree there (no .gitattributes, no index, no submodule's
// repository, no fsmonitor), so nothing the job left in repo/ is read by
// a git run in it.
func sealedConfig(staged []byte) []byte {
	c := bytes.Replace(staged, []byte("\tbare = false\n"), []byte("\tbare = true\n"), 1)
	if !bytes.Contains(c, []byte("\tbare = true\n")) {
		c = append(append([]byte{}, c...), "[core]\n\tbare = true\n"...)
	}
	return c
}

// sealJob makes the job directory dir, once every process of the job has
// ended, one in which git runs nothing the job wrote: the git directory
// of repo/ keeps only HEAD (when it still names a ref or an object),
// objects, refs, packed-refs and logs, each tree of those holding only
// directories and regular files; config (made bare) is written again from
// what stage wrote, and the alternates when they are not the file stage
// wrote, or one equivalent to it (asStaged); a .git or HEAD the job left at
// the top of dir, which would make dir itself a repository to git's
// discovery, is removed. The work tree's files stay as the job left them.
//
// Every step goes through an os.Root opened on dir, after an lstat of the
// name: no symbolic link the job planted is followed out of dir, and a
// name is never written through (it is removed, then created with
// O_EXCL, or m's premade file is renamed to it without replacing
// anything). It returns what it removed or rewrote that stage had not
// written, as paths relative to dir.
func sealJob(dir string, sg stagedGit, m machine) ([]string, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	var changed []string
	for _, name := range []string{".git", "HEAD"} {
		if _, err := root.Lstat(name); err == nil {
			if err := root.RemoveAll(name); err != nil {
				return changed, err
			}
			changed = append(changed, name)
		}
	}
	// The job could have opened the directories above objects/ to every
	// user (0777): another user of the host could then rename objects/
	// away or plant a config or hooks git trusts (they are ours), undoing
	// the seal. They get the mode staging gave them.
	if err := root.Chmod(".", 0o755); err != nil {
		return changed, err
	}
	for _, name := range []string{"repo", "repo/.git"} {
		fi, err := root.Lstat(name)
		if err == nil && fi.IsDir() {
			if err := root.Chmod(name, 0o755); err != nil {
				return changed, err
			}
			continue
		}
		if err == nil {
			if err := root.RemoveAll(name); err != nil {
				return changed, err
			}
			changed = append(changed, fmt.Sprintf("%s (a %s)", name, fileKind(fi.Mode())))
		} else if !errors.Is(err, fs.ErrNotExist) {
			return changed, err
		} else {
			changed = append(changed, name+" (missing)")
		}
		if err := root.Mkdir(name, 0o755); err != nil {
			return changed, err
		}
	}
	g, err := root.OpenRoot("repo/.git")
	if err != nil {
		return changed, err
	}
	defer g.Close()
	names, err := readNames(g, ".")
	if err != nil {
		return changed, err
	}
	for _, name := range names {
		if keptGit[name] {
			continue
		}
		if err := g.RemoveAll(name); err != nil {
			return changed, err
		}
		switch name {
		case "config", "index":
			// stage wrote these; config is written again below
		default:
			changed = append(changed, "repo/.git/"+name)
		}
	}
	for _, name := range []string{"packed-refs", "HEAD"} {
		if fi, err := g.Lstat(name); err == nil && !fi.Mode().IsRegular() {
			if err := g.RemoveAll(name); err != nil {
				return changed, err
			}
			changed = append(changed, fmt.Sprintf("repo/.git/%s (a %s)", name, fileKind(fi.Mode())))
		}
	}
	for _, d := range []string{"objects", "refs", "logs"} {
		c, err := onlyFilesAndDirs(g, d)
		changed = append(changed, c...)
		if err != nil {
			return changed, err
		}
	}
	// git takes the directory for a repository only with refs/ in it; the
	// branch may be in packed-refs (as staged), so refs/heads need not be.
	for _, d := range []string{"objects/info", "refs"} {
		if err := mkdirAllIn(g, d); err != nil {
			return changed, err
		}
	}
	if !validHEAD(g) {
		changed = append(changed, "repo/.git/HEAD (rewritten)")
		if err := replaceIn(g, "HEAD", sg.HEAD); err != nil {
			return changed, err
		}
	}
	// The alternates are written again only when they are not what stage
	// wrote, as HEAD is: a file that holds those bytes, is no other name's
	// (one link) and only its owner may write, is left in place. Writing
	// it again would make a file and remove one a card for nothing.
	if !asStaged(g, "objects/info/alternates", sg.Alternates) {
		changed = append(changed, "repo/.git/objects/info/alternates (rewritten)")
		if err := m.replaceIn(g, "objects/info/alternates", sg.Alternates); err != nil {
			return changed, err
		}
	}
	if _, err := g.Lstat("objects/info/http-alternates"); err == nil {
		if err := g.RemoveAll("objects/info/http-alternates"); err != nil {
			return changed, err
		}
		changed = append(changed, "repo/.git/objects/info/http-alternates")
	}
	return changed, m.replaceIn(g, "config", sealedConfig(sg.Config))
}

// fileKind names a file type for a person.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m.IsRegular():
		return "regular file"
	case m.IsDir():
		return "directory"
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

// readNames lists a directory of r, sorted.
func readNames(r *os.Root, name string) ([]string, error) {
	f, err := r.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	sort.Strings(names)
	return names, err
}

// onlyFilesAndDirs removes from the tree at name in r everything that is
// neither a directory nor a regular file (a symbolic link, a FIFO that
// would hang a reader, a socket or a device), and makes every directory
// searchable; name itself, when it is not a directory, is removed.
func onlyFilesAndDirs(r *os.Root, name string) ([]string, error) {
	fi, err := r.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var changed []string
	var walk func(p string, fi fs.FileInfo) error
	walk = func(p string, fi fs.FileInfo) error {
		switch {
		case fi.Mode().IsRegular():
			// What the job opened to others' writes (a ref made 0666
			// would let another user of the host move what git shows
			// away from what was harvested) is closed again.
			// Group-writable is closed without a word: git makes its
			// files so under a umask of 002, which is no job's doing.
			if m := fi.Mode(); m&(0o022|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != 0 {
				if m&(0o002|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != 0 {
					changed = append(changed, fmt.Sprintf("repo/.git/%s (mode %v, made %v)", p, m, m.Perm()&^0o022))
				}
				return r.Chmod(p, m.Perm()&^0o022)
			}
			return nil
		case !fi.IsDir():
			changed = append(changed, fmt.Sprintf("repo/.git/%s (a %s)", p, fileKind(fi.Mode())))
			return r.Remove(p)
		}
		if err := r.Chmod(p, 0o755); err != nil {
			return err
		}
		names, err := readNames(r, p)
		if err != nil {
			return err
		}
		for _, n := range names {
			q := path.Join(p, n)
			fi, err := r.Lstat(q)
			if err != nil {
				return err
			}
			if err := walk(q, fi); err != nil {
				return err
			}
		}
		return nil
	}
	return changed, walk(name, fi)
}

// mkdirAllIn makes the directory name (slash-separated) in r and every
// directory above it that is missing.
func mkdirAllIn(r *os.Root, name string) error {
	if err := r.MkdirAll(name, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}

// replaceIn writes body at name in r: whatever is there is removed first,
// and the file is created with O_EXCL, so nothing is written through.
func replaceIn(r *os.Root, name string, body []byte) error {
	return machine{}.replaceIn(r, name, body)
}

// replaceIn is replaceIn from m's premade file of name's base name, when
// there is one (the sealed config and alternates).
func (m machine) replaceIn(r *os.Root, name string, body []byte) error {
	return m.writeIn(r, name, body, 0o644)
}

// writeIn removes whatever is at name in r and writes body there as a
// file of mode: m's premade file of name's base name when there is one,
// filled outside the job directory and renamed to name, never over
// anything; else a file created where nothing is (O_EXCL).
func (m machine) writeIn(r *os.Root, name string, body []byte, mode os.FileMode) error {
	if err := r.RemoveAll(name); err != nil {
		return err
	}
	if premade := m.premade(path.Base(name)); premade != "" {
		if fill(premade, body, mode) == nil {
			if d, err := r.Open(path.Dir(name)); err == nil {
				err = renameNoReplaceAt(premade, d, path.Base(name))
				d.Close()
				if err == nil {
					return nil
				}
			}
		}
	}
	f, err := r.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	_, err = f.Write(body)
	if err == nil {
		err = f.Chmod(mode) // whatever the umask took away
	}
	return errors.Join(err, f.Close())
}

// asStaged reports whether name in r is a regular file holding exactly
// body, owned by this user, with one link and the mode staging gives
// (0644: no write for group or others, no set-id bits, readable by the
// user's git): one the machinery may leave as it is. The job may have made it anew with those
// bytes; it is then equivalent to staging's, not staging's.
func asStaged(r *os.Root, name string, body []byte) bool {
	fi, err := r.Lstat(name)
	if err != nil || fi.Mode() != 0o644 {
		return false
	}
	// Ours (another user who could reach the directory could have put
	// it there, and could write it after the seal), and no other name's.
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Nlink != 1 || int(st.Uid) != os.Geteuid() {
		return false
	}
	b, err := readSmall(r, name, len(body)+1)
	return err == nil && bytes.Equal(b, body)
}

// readSmall reads at most max bytes of the regular file name in r.
func readSmall(r *os.Root, name string, max int) ([]byte, error) {
	fi, err := r.Lstat(name)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is a %s", name, fileKind(fi.Mode()))
	}
	// Not following a link, and not blocking on a FIFO, put there since
	// the lstat; what is read must be the file the lstat saw.
	f, err := r.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if ofi, err := f.Stat(); err != nil || !os.SameFile(fi, ofi) {
		return nil, fmt.Errorf("%s changed while it was read", name)
	}
	return io.ReadAll(io.LimitReader(f, int64(max)))
}

// validHEAD reports whether HEAD in r is a regular file git reads as a
// HEAD: "ref: refs/…" or an object id, on one line.
func validHEAD(r *os.Root) bool {
	b, err := readSmall(r, "HEAD", 256)
	if err != nil || len(b) == 0 || len(b) >= 256 || b[len(b)-1] != '\n' {
		return false
	}
	line := string(b[:len(b)-1])
	if rest, ok := bytes.CutPrefix([]byte(line), []byte("ref: refs/")); ok {
		return len(rest) > 0 && !bytes.ContainsAny(rest, " \t\r\n\x00") && !bytes.Contains(rest, []byte(".."))
	}
	if len(line) != 40 && len(line) != 64 {
		return false
	}
	for _, c := range line {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
