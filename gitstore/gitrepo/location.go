package gitrepo

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/refusal"
)

// ErrNotARepository: no git repository where one was looked for.
var ErrNotARepository = errors.New("not a git repository")

// Location is where a repository's parts live, found the way git finds them.
type Location struct {
	// GitDir is the per-worktree git directory (HEAD, index).
	GitDir string
	// CommonDir holds what every worktree shares: objects, refs, config.
	// All nwdes state lives here, so every worktree sees the same records.
	CommonDir string
	// WorkTree is the top of the working tree, or "" in a bare repository.
	WorkTree string
	// ObjectDir, when set, is where objects are read and written instead of
	// CommonDir/objects (GIT_OBJECT_DIRECTORY: in a server-side hook, the
	// quarantine holding the objects of the push being received), and
	// Alternates are more object directories to read from
	// (GIT_ALTERNATE_OBJECT_DIRECTORIES: there, the repository's own).
	ObjectDir  string
	Alternates []string
}

// Objects is the directory objects are read from and written to.
func (l Location) Objects() string {
	if l.ObjectDir != "" {
		return l.ObjectDir
	}
	return filepath.Join(l.CommonDir, "objects")
}

// Bare reports whether the repository has no working tree.
func (l Location) Bare() bool { return l.WorkTree == "" }

// Getenv looks up an environment variable; the CLI passes os.Getenv, tests
// pass a map. The library never reads the process environment itself.
type Getenv func(string) string

// Discover finds the repository that a git command started in dir would use.
// It honours GIT_DIR, GIT_WORK_TREE and GIT_COMMON_DIR, gitfiles (".git" as a
// file, as in linked worktrees and submodules), the "commondir" file of a
// linked worktree, bare repositories and GIT_CEILING_DIRECTORIES. go-git's
// own open honours none of the environment, hence this function.
func Discover(dir string, getenv Getenv) (Location, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return Location{}, err
	}
	var loc Location
	if gd := getenv("GIT_DIR"); gd != "" {
		gitDir, err := resolveGitDir(absFrom(dir, gd))
		if err != nil {
			return Location{}, err
		}
		loc.GitDir = gitDir
		switch wt := getenv("GIT_WORK_TREE"); {
		case wt != "":
			loc.WorkTree = absFrom(dir, wt)
		case !isBareConfig(gitDir):
			// git treats the current directory as the top of the work tree
			// when GIT_DIR is set without GIT_WORK_TREE.
			loc.WorkTree = dir
		}
	} else {
		loc, err = walkUp(dir, ceilings(getenv("GIT_CEILING_DIRECTORIES")))
		if err != nil {
			return Location{}, err
		}
		if wt := getenv("GIT_WORK_TREE"); wt != "" {
			loc.WorkTree = absFrom(dir, wt)
		}
	}
	loc.CommonDir = loc.GitDir
	if cd := getenv("GIT_COMMON_DIR"); cd != "" {
		loc.CommonDir = absFrom(dir, cd)
	} else if b, err := os.ReadFile(filepath.Join(loc.GitDir, "commondir")); err == nil {
		loc.CommonDir = absFrom(loc.GitDir, strings.TrimSpace(string(b)))
	}
	if !isGitDir(loc.CommonDir, false) {
		return Location{}, notARepo(dir, "%s has no objects/ and refs/", loc.CommonDir)
	}
	if err := checkFormat(loc.CommonDir); err != nil {
		return Location{}, err
	}
	if od := getenv("GIT_OBJECT_DIRECTORY"); od != "" {
		loc.ObjectDir = absFrom(dir, od)
	}
	for _, a := range filepath.SplitList(getenv("GIT_ALTERNATE_OBJECT_DIRECTORIES")) {
		if a = strings.Trim(a, `"`); a != "" {
			loc.Alternates = append(loc.Alternates, absFrom(dir, a))
		}
	}
	return loc, nil
}

func notARepo(dir, format string, args ...any) error {
	r := refusal.New(refusal.NotARepository,
		"run the command inside a git repository, or pass -C <path> or GIT_DIR",
		format, args...)
	r.Err = ErrNotARepository
	_ = dir
	return r
}

func walkUp(dir string, ceil []string) (Location, error) {
	start := dir
	for {
		dotgit := filepath.Join(dir, ".git")
		if fi, err := os.Lstat(dotgit); err == nil {
			gitDir, err := resolveGitDir(dotgit)
			if err == nil {
				_ = fi
				return Location{GitDir: gitDir, WorkTree: dir}, nil
			}
			if !os.IsNotExist(err) {
				return Location{}, err
			}
		}
		if isGitDir(dir, true) {
			loc := Location{GitDir: dir}
			if !isBareConfig(dir) {
				// A git directory entered directly (cd .git) is not a work
				// tree; git treats it as bare-like too.
				loc.WorkTree = ""
			}
			return loc, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir || slices.Contains(ceil, parent) {
			return Location{}, notARepo(start, "not a git repository (or any parent up to %s): %s", parent, start)
		}
		dir = parent
	}
}

// resolveGitDir follows a gitfile ("gitdir: <path>") to the real directory.
func resolveGitDir(p string) (string, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return "", err
	}
	if fi.IsDir() {
		if !isGitDir(p, true) && !isLinkedGitDir(p) {
			return "", notARepo(p, "%s is not a git directory", p)
		}
		return p, nil
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return "", err
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	target, ok := strings.CutPrefix(strings.TrimSpace(string(line)), "gitdir:")
	if !ok {
		return "", notARepo(p, "%s is neither a directory nor a gitfile", p)
	}
	return absFrom(filepath.Dir(p), strings.TrimSpace(target)), nil
}

func isGitDir(d string, wantHead bool) bool {
	if wantHead {
		if _, err := os.Stat(filepath.Join(d, "HEAD")); err != nil {
			return false
		}
	}
	for _, sub := range []string{"objects", "refs"} {
		fi, err := os.Stat(filepath.Join(d, sub))
		if err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}

// isLinkedGitDir recognises .git/worktrees/<name>: HEAD and a commondir file,
// with objects and refs living in the common directory.
func isLinkedGitDir(d string) bool {
	_, err1 := os.Stat(filepath.Join(d, "HEAD"))
	_, err2 := os.Stat(filepath.Join(d, "commondir"))
	return err1 == nil && err2 == nil
}

func absFrom(base, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}

func ceilings(v string) []string {
	var out []string
	for _, c := range filepath.SplitList(v) {
		if c != "" && filepath.IsAbs(c) {
			out = append(out, filepath.Clean(c))
		}
	}
	return out
}

// repoConfig reads a repository's own config file (with its includes):
// what git consults for core.bare and the repository format before any
// other scope. A file git could not parse is refused, as git refuses it.
func repoConfig(gitDir string) (*Config, error) {
	c := &Config{}
	if err := c.readFile(filepath.Join(gitDir, "config"), "", 0); err != nil {
		return nil, err
	}
	return c, nil
}

func isBareConfig(gitDir string) bool {
	c, err := repoConfig(gitDir)
	if err != nil {
		return false
	}
	v, ok := c.Get("core.bare")
	return ok && configTrue(v)
}

// checkFormat refuses repositories whose format nwdes cannot read correctly
// rather than misreading them: an object format other than SHA-1 and
// SHA-256, and reftable refs.
func checkFormat(commonDir string) error {
	c, err := repoConfig(commonDir)
	if err != nil {
		return err
	}
	if _, err := objectFormat(commonDir, c); err != nil {
		return err
	}
	if v, ok := c.Get("extensions.refstorage"); ok && !strings.EqualFold(v, "files") {
		return refusal.New(refusal.UnsupportedRepository,
			"use nwdes in a repository with the files ref backend",
			"repository %s uses ref storage %s", commonDir, v)
	}
	return nil
}

// ObjectFormat is the object format of the repository whose common
// directory is commonDir: extensions.objectFormat of its own config, SHA-1
// when unset (as git reads it). A format git 2.39 does not know is refused
// by name (UnsupportedRepository).
func ObjectFormat(commonDir string) (oid.Format, error) {
	c, err := repoConfig(commonDir)
	if err != nil {
		return 0, err
	}
	return objectFormat(commonDir, c)
}

func objectFormat(commonDir string, c *Config) (oid.Format, error) {
	v, ok := c.Get("extensions.objectformat")
	if !ok {
		return oid.SHA1, nil
	}
	f, err := oid.ParseFormat(v)
	if err != nil {
		return 0, refusal.New(refusal.UnsupportedRepository,
			"use nwdes in a SHA-1 or SHA-256 repository",
			"repository %s uses object format %s", commonDir, v)
	}
	return f, nil
}
