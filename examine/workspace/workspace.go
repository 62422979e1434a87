package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/refusal"
	"github.com/nwdes/nwdes/sandbox"
)

// The two directories of a workspace.
const (
	PublicDir  = "public"
	ScratchDir = "scratch"
)

// namePrefix starts every workspace's name (examine.Workspace requires it).
const namePrefix = "nwdes-examine-"

// Make creates a workspace for feature at the projection p under tempDir
// (a directory outside every checkout; symbolic links in it are
// resolved), materialises p under public/, read-only, and records it for
// checkout. It refuses a tempDir inside a checkout (TempDirUnusable) and
// leaves nothing behind when it fails.
func Make(ctx context.Context, st examine.Store, p *examine.Projection, feature, checkout, tempDir string, now time.Time) (*examine.Workspace, error) {
	return makeIn(ctx, st, p, feature, checkout, tempDir, "", now)
}

// makeIn is Make for a workspace under tempDir that may lie in the walled
// job directory job ("" for none: workspaceBase).
func makeIn(ctx context.Context, st examine.Store, p *examine.Projection, feature, checkout, tempDir, job string, now time.Time) (*examine.Workspace, error) {
	base, err := workspaceBase(tempDir, checkout, job)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(base, namePrefix+feature+"-")
	if err != nil {
		return nil, refusal.New(refusal.TempDirUnusable, "set TMPDIR to a writable directory outside every checkout",
			"cannot make a workspace in %s: %v", base, err)
	}
	ok := false
	defer func() {
		if !ok {
			sandbox.RemoveAll(dir)
		}
	}()
	if err := materialise(st, filepath.Join(dir, PublicDir), p.Files); err != nil {
		return nil, err
	}
	if err := os.Mkdir(filepath.Join(dir, ScratchDir), 0o700); err != nil {
		return nil, err
	}
	w := examine.Workspace{
		Path: dir, Feature: feature, Candidate: p.Candidate.String(), Projection: p.Tree.String(),
		Checkout: checkout, Created: now.UTC().Format(time.RFC3339Nano),
	}
	if err := examine.RecordWorkspace(ctx, st, w); err != nil {
		return nil, err
	}
	ok = true
	return &w, nil
}

// workspaceBase resolves the directory workspaces are made in (os.TempDir
// when empty): an existing absolute directory outside every checkout, or
// TempDirUnusable.
//
// The rule is there so that the examiner cannot see the candidate's
// files. A swarm job's directory (job, non-empty) lies in the
// repository's git directory, so inside its checkout, yet the examiner
// in it sees none of the checkout: the wall shows the job its own
// directory and nothing above it (the supervisor gives an examine job
// no objects and no read root in the repository). There the rule is
// kept for what the examiner can see: tempDir must be the job directory
// or inside it, and no directory from tempDir up to the job directory
// may hold a .git (a checkout inside the job would be seen whole).
func workspaceBase(tempDir, checkout, job string) (string, error) {
	if tempDir == "" {
		tempDir = os.TempDir()
	}
	base, err := filepath.EvalSymlinks(tempDir)
	if fi, serr := os.Stat(base); err != nil || serr != nil || !fi.IsDir() || !filepath.IsAbs(base) {
		return "", refusal.New(refusal.TempDirUnusable, "set TMPDIR to an existing absolute directory outside every checkout",
			"the directory for workspaces, %q, is not an existing absolute directory", tempDir)
	}
	if job != "" {
		jobDir, err := filepath.EvalSymlinks(job)
		if err != nil || !filepath.IsAbs(jobDir) || !within(base, jobDir) {
			return "", refusal.New(refusal.TempDirUnusable, "make an examine job's workspace in its own job directory",
				"the directory for workspaces, %s, is not inside the job directory %s", base, job)
		}
		for d := base; ; d = filepath.Dir(d) {
			if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
				return "", refusal.New(refusal.TempDirUnusable, "stage no checkout in an examine job's directory (the examiner must not see the candidate's files)",
					"the directory for workspaces, %s, is inside the checkout %s", base, d)
			}
			if d == jobDir {
				return base, nil
			}
		}
	}
	if where := insideCheckout(base, checkout); where != "" {
		return "", refusal.New(refusal.TempDirUnusable, "set TMPDIR to a directory outside every checkout (the examiner must not see the candidate's files)",
			"the directory for workspaces, %s, is inside the checkout %s", base, where)
	}
	return base, nil
}

// materialise writes files under root from their blobs, then makes every
// file and directory of it read-only (directories last, deepest first).
func materialise(st gitstore.CommitReader, root string, files []examine.PublicFile) error {
	if err := os.Mkdir(root, 0o755); err != nil {
		return err
	}
	dirs := map[string]bool{root: true}
	for _, f := range files {
		data, err := st.ReadBlob(f.Blob)
		if err != nil {
			return err
		}
		path := filepath.Join(root, filepath.FromSlash(f.Path))
		for d := filepath.Dir(path); !dirs[d]; d = filepath.Dir(d) {
			dirs[d] = true
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		mode := os.FileMode(0o444)
		if f.Mode == gitstore.ModeExec {
			mode = 0o555
		}
		// O_EXCL: the directory is brand new, so anything already at the
		// path was put there by someone else.
		fh, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		_, werr := fh.Write(data)
		if err := errors.Join(werr, fh.Close(), os.Chmod(path, mode)); err != nil {
			return err
		}
	}
	var order []string
	for d := range dirs {
		order = append(order, d)
	}
	sort.Slice(order, func(i, j int) bool { return len(order[i]) > len(order[j]) })
	for _, d := range order {
		if err := os.Chmod(d, 0o555); err != nil {
			return err
		}
	}
	return nil
}

// insideCheckout returns the checkout dir lies in, or "": the recorded
// checkout, or any directory above dir holding a .git.
func insideCheckout(dir, checkout string) string {
	if checkout != "" && within(dir, checkout) {
		return checkout
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// within reports whether path is dir or beneath it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}

// Open finds the workspace at dir (symbolic links in its path resolved, as
// Make recorded it) and checks it (Check). It returns the recorded
// workspace and its projection, read from the store and checked against
// the candidate.
func Open(st examine.Store, dir string) (*examine.Workspace, *examine.Projection, error) {
	if !filepath.IsAbs(dir) {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, nil, err
		}
		dir = abs
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, nil, refusal.New(refusal.MissingFact, "use the workspace a prompt printed (WORKSPACE: line), or make one with git nwdes examine prompt",
			"workspace %s does not exist", dir)
	}
	w, err := examine.FindWorkspace(st, real)
	if err != nil {
		return nil, nil, err
	}
	p, err := projectionOf(st, w)
	if err != nil {
		return nil, nil, err
	}
	if err := Check(w, p); err != nil {
		return nil, nil, err
	}
	return w, p, nil
}

func projectionOf(st examine.Store, w *examine.Workspace) (*examine.Projection, error) {
	cand, err := oid.Parse(w.Candidate)
	if err != nil {
		return nil, err
	}
	tree, err := oid.Parse(w.Projection)
	if err != nil {
		return nil, err
	}
	return examine.RecordedProjection(st, cand, tree)
}

// Check compares the workspace with its projection, following no symbolic
// link: the top level must be exactly the real directories public and
// scratch, public must hold exactly the projection's files with their
// bytes and nothing else, nothing in public may be writable, and the
// workspace must not lie inside a checkout. Anything else is
// WorkspaceContaminated, naming the first difference found.
func Check(w *examine.Workspace, p *examine.Projection) error {
	bad := func(format string, args ...any) error {
		return refusal.New(refusal.WorkspaceContaminated,
			fmt.Sprintf("make a fresh workspace with git nwdes examine prompt --feature %s (this one is kept as it is, for inspection)", w.Feature),
			"workspace %s: %s", w.Path, fmt.Sprintf(format, args...))
	}
	if where := insideCheckout(w.Path, w.Checkout); where != "" {
		return bad("it lies inside the checkout %s", where)
	}
	if fi, err := os.Lstat(w.Path); err != nil || !fi.IsDir() {
		return bad("it is not a real directory (a symbolic link, or gone)")
	}
	top, err := os.ReadDir(w.Path)
	if err != nil {
		return bad("it cannot be read: %v", err)
	}
	var names []string
	for _, e := range top {
		names = append(names, e.Name())
		if e.Type() != fs.ModeDir {
			return bad("%s at its top level is not a directory (a %s)", e.Name(), typeName(e.Type()))
		}
	}
	if strings.Join(names, " ") != PublicDir+" "+ScratchDir {
		return bad("its top level holds %q, not exactly public and scratch", names)
	}
	want := map[string]examine.PublicFile{}
	wantDirs := map[string]bool{".": true}
	for _, f := range p.Files {
		want[f.Path] = f
		for d := pathDir(f.Path); d != "."; d = pathDir(d) {
			wantDirs[d] = true
		}
	}
	public := filepath.Join(w.Path, PublicDir)
	seen := 0
	err = filepath.WalkDir(public, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return bad("%v", err)
		}
		rel, _ := filepath.Rel(public, path)
		rel = filepath.ToSlash(rel)
		fi, err := d.Info()
		if err != nil {
			return bad("%s: %v", rel, err)
		}
		if fi.Mode().Perm()&0o222 != 0 {
			return bad("public/%s is writable (mode %o)", rel, fi.Mode().Perm())
		}
		switch {
		case d.IsDir():
			if !wantDirs[rel] {
				return bad("public/%s is a directory the projection does not hold", rel)
			}
			return nil
		case !d.Type().IsRegular():
			return bad("public/%s is a %s: the projection holds regular files only", rel, typeName(d.Type()))
		}
		f, ok := want[rel]
		if !ok {
			return bad("public/%s is not in the projection", rel)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return bad("public/%s cannot be read: %v", rel, err)
		}
		if gitstore.BlobID(f.Blob.Format(), data) != f.Blob {
			return bad("public/%s differs from the committed blob %s", rel, f.Blob.Short())
		}
		seen++
		return nil
	})
	if err != nil {
		return err
	}
	if seen != len(p.Files) {
		for _, f := range p.Files {
			if _, err := os.Lstat(filepath.Join(public, filepath.FromSlash(f.Path))); err != nil {
				return bad("public/%s is missing", f.Path)
			}
		}
		return bad("public holds %d of the projection's %d files", seen, len(p.Files))
	}
	return nil
}

func pathDir(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return "."
	}
	return p[:i]
}

func typeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m.IsDir():
		return "directory"
	case m.IsRegular():
		return "regular file"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

// Swept is what Sweep did to a feature's workspaces.
type Swept struct {
	Removed []string
	// Kept are contaminated workspaces, each with why.
	Kept []string
	// Elsewhere are workspaces a prompt in another checkout made.
	Elsewhere []string
}

// Sweep is what a successful close does to the feature's workspaces: those
// a prompt in this checkout recorded are removed when they still match
// their projection and kept (and named) when not; those of other
// checkouts are left alone. The records of removed workspaces, and of
// those already gone, are marked removed (and kept: the examination of
// the feature names the projection its examiner saw).
func Sweep(ctx context.Context, st examine.Store, feature, checkout string, now time.Time) (*Swept, error) {
	ws, err := examine.Workspaces(st)
	if err != nil {
		return nil, err
	}
	out := &Swept{}
	var forget []string // removed, or already gone
	for i := range ws {
		w := &ws[i]
		if w.Feature != feature || w.Removed != "" {
			continue
		}
		if w.Checkout != checkout {
			out.Elsewhere = append(out.Elsewhere, w.Path)
			continue
		}
		if _, err := os.Lstat(w.Path); errors.Is(err, fs.ErrNotExist) {
			forget = append(forget, w.Path)
			continue
		}
		p, err := projectionOf(st, w)
		if err == nil {
			err = Check(w, p)
		}
		if err != nil {
			out.Kept = append(out.Kept, fmt.Sprintf("%s (%v)", w.Path, err))
			continue
		}
		// A file system mounted inside the workspace (a fixture in
		// scratch) is never removed through: the workspace is kept.
		if m := sandbox.MountsUnder(w.Path); len(m) > 0 {
			out.Kept = append(out.Kept, fmt.Sprintf("%s (a file system is mounted at %s: unmount it, then remove the workspace)", w.Path, strings.Join(m, ", ")))
			continue
		}
		if err := sandbox.RemoveAll(w.Path); err != nil {
			out.Kept = append(out.Kept, fmt.Sprintf("%s (cannot remove: %v)", w.Path, err))
			continue
		}
		out.Removed = append(out.Removed, w.Path)
		forget = append(forget, w.Path)
	}
	return out, examine.MarkRemoved(ctx, st, forget, now)
}
