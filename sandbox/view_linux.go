package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// maskedSecrets are files and directories inside the default roots that a
// job never needs and that hold secrets a job running as root could read
// (root owns them, and mode bits are all that guards them once Landlock
// grants their directory). Each is covered by an empty file or directory
// in the job's view.
var maskedSecrets = []string{
	"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
	"/etc/sudoers", "/etc/sudoers.d", "/etc/ssl/private", "/etc/security/opasswd",
	"/etc/ssh/ssh_host_rsa_key", "/etc/ssh/ssh_host_ecdsa_key", "/etc/ssh/ssh_host_ed25519_key", "/etc/ssh/ssh_host_dsa_key",
}

// viewEntry is one path of the view: bound from the host, read-only or
// read-write, or a symbolic link.
type viewEntry struct {
	path   string // where it appears in the view (as the host names it)
	source string // the host path it shows (symlinks resolved)
	rw     bool
	dev    bool   // a device file: bound without nodev
	link   string // when set, path is a symbolic link to this
}

// makeView replaces the helper's root, in its private mount namespace,
// with a tree that holds only what the job may see: its read set and
// roots (read-only), its write set (read-write), a few device files, a
// private /proc, and nothing else: no /run with the host's sockets, no
// /home, no /tmp but the job's own directory. Every mount outside the
// write set is read-only, which is what keeps chmod, chown, utimes and
// xattrs (which Landlock does not handle) off files the job's user owns.
// It is built the way bubblewrap builds its root: a tmpfs, the host's
// root moved under it, binds from there, then a pivot that drops the
// host's root altogether.
func makeView(s *helperSpec) error { return makeRoot(s, false) }

// makeLaneRoot is makeView for a lane's helper, in its own mount
// namespace, with the wall's roots, its temporary root (where every job
// directory is made) and its caches as s's read and write sets: the root
// its jobs' threads build their views from, so that what the job sees of
// the helper (/proc/1/mountinfo, /proc/1/root) holds nothing else of the
// host. A /tmp is left for a job's view to build on.
func makeLaneRoot(s *helperSpec) error { return makeRoot(s, true) }

func makeRoot(s *helperSpec, lane bool) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make / private: %w", err)
	}
	entries, err := viewEntries(s)
	if err != nil {
		return err
	}
	const base = "/tmp"
	if err := unix.Mount("tmpfs", base, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=64k"); err != nil {
		return fmt.Errorf("mount the view's scratch tmpfs on %s: %w", base, err)
	}
	for _, d := range []string{base + "/newroot", base + "/oldroot"} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
	}
	if err := os.WriteFile(base+"/empty", nil, 0o444); err != nil {
		return err
	}
	if err := os.Mkdir(base+"/emptydir", 0o555); err != nil {
		return err
	}
	// Read-only from here on: a bind of /empty or /emptydir takes this
	// mount's ro, nosuid and nodev with it, so a mask is one mount.
	if err := unix.MountSetattr(unix.AT_FDCWD, base, 0, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
		return fmt.Errorf("make the view's scratch tmpfs read-only: %w", err)
	}
	if err := unix.PivotRoot(base, base+"/oldroot"); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	if err := unix.Chdir("/"); err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", "/newroot", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755"); err != nil {
		return fmt.Errorf("mount the view's root: %w", err)
	}
	for _, e := range entries {
		if err := bindInto("/newroot", e); err != nil {
			return err
		}
	}
	if lane {
		if err := os.MkdirAll("/newroot/tmp", 0o755); err != nil {
			return err
		}
	}
	s.CacheViews = nil
	for _, c := range s.Caches {
		s.CacheViews = append(s.CacheViews, viewCache(c))
	}
	if s.JobAt != "" || len(s.Caches) > 0 {
		// The job's copies of its caches are the overlays' to change.
		if err := mask("/newroot" + s.viewPath(filepath.Join(s.JobRoot, cacheState))); err != nil {
			return err
		}
	}
	if err := os.MkdirAll("/newroot/proc", 0o555); err != nil {
		return err
	}
	// A /proc of the job's own pid namespace: no /proc/<supervisor>/cwd or
	// environ to find the user's repository by.
	// Read-only, as nsjail mounts it: /proc/sys and /proc/sysrq-trigger
	// are guarded by mode bits a root job passes, and Landlock may be
	// missing on a best-effort run.
	if err := unix.Mount("proc", "/newroot/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC|unix.MS_RDONLY, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	for name, target := range map[string]string{"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"} {
		if err := os.MkdirAll("/newroot/dev", 0o755); err != nil {
			return err
		}
		if err := os.Symlink(target, "/newroot/dev/"+name); err != nil && !errors.Is(err, os.ErrExist) {
			return err
		}
	}
	// Not in a lane's root: a recursive bind of /etc into a job's view
	// would carry its masks beneath the view's own, two mounts for one.
	for _, m := range maskedSecrets {
		if lane {
			break
		}
		if err := mask("/newroot" + m); err != nil {
			return err
		}
	}
	if err := unix.Chdir("/newroot"); err != nil {
		return err
	}
	// pivot_root(".", ".") stacks the old root on the new one; detaching
	// it leaves the view as the root, with no path back to the host's.
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root into the view: %w", err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detach the host's root: %w", err)
	}
	if err := unix.Chdir("/"); err != nil {
		return err
	}
	// The view's own skeleton is read-only too; the write set is separate
	// mounts, unaffected.
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", 0, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
		return fmt.Errorf("make the view's root read-only: %w", err)
	}
	return nil
}

// viewEntries lists what the view binds, parents before children, with
// every host path resolved through its symbolic links before the host's
// root is moved away.
func viewEntries(s *helperSpec) ([]viewEntry, error) {
	var out []viewEntry
	add := func(p string, rw, dev bool) {
		fi, err := os.Lstat(p)
		if err != nil {
			return // a root that does not exist on this host
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return
		}
		if fi.Mode()&os.ModeSymlink != 0 || real != p {
			out = append(out, viewEntry{path: p, link: real})
		}
		out = append(out, viewEntry{path: real, source: real, rw: rw, dev: dev})
	}
	for _, p := range s.Read {
		if p != "/proc" {
			add(p, false, false)
		}
	}
	for _, p := range s.Write {
		if p == s.JobRoot && s.JobAt != "" {
			out = append(out, viewEntry{path: s.JobAt, source: p, rw: true})
			continue
		}
		add(p, true, false)
	}
	for _, p := range s.DevRW {
		add(p, true, true)
	}
	for _, p := range s.DevRO {
		add(p, false, true)
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i].path) < len(out[j].path) })
	return dropCovered(out), nil
}

// dropCovered drops each bind that the bind nearest above it already
// shows, with the same attributes: the nearest entry whose view path
// encloses it (not a link, which encloses nothing: every path is
// resolved), when that one is a recursive bind of the directory that
// holds the same host directory at the same relative path (/usr/bin, the
// target of the /bin link, under /usr), both read-only or both
// read-write, neither a device. That bind and its recursive
// mount_setattr give it the same mount flags, so the mount saved changes
// nothing the job can see or do. Only the nearest counts: under a
// read-only /r, a writable /r/w makes /r/w/x writable unless /r/w/x is
// bound read-only itself. entries are sorted parents first, and among
// the same path in the order they are mounted, the last on top.
func dropCovered(entries []viewEntry) []viewEntry {
	var out []viewEntry
	for _, e := range entries {
		if e.link != "" || e.dev || !coveredBy(e, nearestAbove(out, e.path)) {
			out = append(out, e)
		}
	}
	return out
}

// nearestAbove is the entry of binds, sorted parents first, whose bind
// is on top at path or nearest above it, or nil.
func nearestAbove(binds []viewEntry, path string) *viewEntry {
	for i := len(binds) - 1; i >= 0; i-- {
		if binds[i].link == "" && within(path, binds[i].path) {
			return &binds[i]
		}
	}
	return nil
}

// coveredBy reports whether p's bind already shows e as e's would.
func coveredBy(e viewEntry, p *viewEntry) bool {
	return p != nil && !p.dev && p.rw == e.rw && within(e.source, p.source) &&
		strings.TrimPrefix(e.path, p.path) == strings.TrimPrefix(e.source, p.source)
}

// bindInto makes one entry appear under root.
func bindInto(root string, e viewEntry) error {
	dst := root + e.path
	if e.link != "" {
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if _, err := os.Lstat(dst); err == nil {
			return nil // already in the view (a parent's bind shows it)
		}
		return os.Symlink(e.link, dst)
	}
	src := "/oldroot" + e.source
	fi, err := os.Stat(src)
	if err != nil {
		return fmt.Errorf("view %s: %w", e.path, err)
	}
	if fi.IsDir() {
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return fmt.Errorf("view %s: %w", e.path, err)
		}
	} else {
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fmt.Errorf("view %s: %w", e.path, err)
		}
		if f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			f.Close()
		}
	}
	if err := unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s: %w", e.path, err)
	}
	attr := uint64(unix.MOUNT_ATTR_NOSUID)
	if !e.dev {
		attr |= unix.MOUNT_ATTR_NODEV
	}
	if !e.rw {
		attr |= unix.MOUNT_ATTR_RDONLY
	}
	if err := unix.MountSetattr(unix.AT_FDCWD, dst, unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: attr}); err != nil {
		return fmt.Errorf("view %s: mount_setattr: %w", e.path, err)
	}
	return nil
}

// viewCache shows one shared cache in the view, copy-on-write: an overlay
// whose lower layer is the host's directory (never written) and whose
// upper layer is the job's own. Where no overlay can be mounted the cache
// is bound read-only, never writable.
func viewCache(c cacheSpec) CacheView {
	dst := "/newroot" + c.Path
	v := CacheView{Path: c.Path, Mode: CacheOverlay}
	err := os.MkdirAll(dst, 0o755)
	if err == nil {
		err = mountOverlay("/oldroot"+c.Path, "/oldroot"+c.Upper, "/oldroot"+c.Work, dst)
	}
	if err == nil {
		return v
	}
	v.Mode, v.Why = CacheReadOnly, "overlay: "+err.Error()
	if berr := bindInto("/newroot", viewEntry{path: c.Path, source: c.Path}); berr != nil {
		v.Why += "; read-only bind: " + berr.Error()
	}
	return v
}

// mountOverlay mounts an overlay of lower under upper on dst, nosuid and
// nodev. metacopy=on lets a change of metadata (Go's cache touches the
// times of what it uses) copy up no data; where the kernel refuses it (in
// a user namespace, say) the overlay is made without it.
func mountOverlay(lower, upper, work, dst string) error {
	for _, p := range []string{lower, upper, work} {
		if strings.ContainsAny(p, ",:\\") {
			return fmt.Errorf("%s holds a character overlayfs options cannot carry (, : or \\)", strings.TrimPrefix(p, "/oldroot"))
		}
	}
	opts := "lowerdir=" + lower + ",upperdir=" + upper + ",workdir=" + work
	var err error
	for _, extra := range []string{",metacopy=on", "", ",userxattr"} {
		if err = unix.Mount("overlay", dst, "overlay", unix.MS_NOSUID|unix.MS_NODEV, opts+extra); err == nil {
			return nil
		}
	}
	return err
}

// viewPath is where the view shows host path p: beneath JobAt for what
// lies in the job directory, when the job directory is moved there.
func (s *helperSpec) viewPath(p string) string {
	if s.JobAt == "" || !within(p, s.JobRoot) {
		return p
	}
	return s.JobAt + strings.TrimPrefix(p, s.JobRoot)
}

// relocate gives the job's directory, write set and variables as the view
// shows them, once it is built.
func (s *helperSpec) relocate() {
	if s.JobAt == "" {
		return
	}
	s.Dir = s.viewPath(s.Dir)
	if s.Program != "" {
		s.Program = s.viewPath(s.Program)
	}
	for i, p := range s.Write {
		s.Write[i] = s.viewPath(p)
	}
	for i, kv := range s.Env {
		if k, v, ok := strings.Cut(kv, "="); ok && filepath.IsAbs(v) {
			s.Env[i] = k + "=" + s.viewPath(v)
		}
	}
}

// placeCaches adds each cache to the write set where the job has a copy of
// its own, and to the read set otherwise (without a view, Landlock alone
// holds: the job reads the host's cache and writes none of it).
func (s *helperSpec) placeCaches() {
	if len(s.CacheViews) != len(s.Caches) {
		s.CacheViews = nil
		for _, c := range s.Caches {
			s.CacheViews = append(s.CacheViews, CacheView{Path: c.Path, Mode: CacheReadOnly, Why: "no filesystem view of the job's own"})
		}
	}
	for _, v := range s.CacheViews {
		if v.Mode == CacheOverlay {
			s.Write = append(s.Write, v.Path)
		} else {
			s.Read = append(s.Read, v.Path)
		}
	}
}

// mask covers a secret with an empty, read-only file or directory.
func mask(p string) error {
	fi, err := os.Lstat(p)
	if err != nil || fi.Mode()&os.ModeSymlink != 0 {
		return nil
	}
	src := "/empty"
	if fi.IsDir() {
		src = "/emptydir"
	}
	// The bind takes the scratch tmpfs's flags: read-only, nosuid, nodev.
	if err := unix.Mount(src, p, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("mask %s: %w", p, err)
	}
	return nil
}
