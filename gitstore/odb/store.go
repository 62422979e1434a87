package odb

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/nwdes/nwdes/gitstore/oid"
)

// store is one objects directory: the primary one or an alternate. All file
// access goes through an os.Root so that a symlink planted inside the
// objects directory cannot make us read files outside it.
type store struct {
	dir string
	f   oid.Format

	mu      sync.Mutex
	root    *os.Root
	scanned bool
	packs   []*pack // replaced, never mutated, so callers may iterate a snapshot
	retired []*pack // dropped from the listing but possibly still being read
	closed  bool
}

func (s *store) fs() (*os.Root, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fsLocked()
}

func (s *store) fsLocked() (*os.Root, error) {
	if s.closed {
		return nil, errClosed()
	}
	if s.root == nil {
		r, err := os.OpenRoot(s.dir)
		if err != nil {
			return nil, fmt.Errorf("open objects directory: %w", err)
		}
		s.root = r
	}
	return s.root, nil
}

// packList returns the packs known to this store, listing the pack
// directory on first use.
func (s *store) packList() ([]*pack, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.scanned {
		if err := s.scanLocked(); err != nil {
			return nil, err
		}
	}
	return s.packs, nil
}

func (s *store) rescan() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.scanLocked()
}

// scanLocked lists objects/pack and reconciles it with the packs already
// known. Known packs keep their open files (and so stay readable even if
// git has since unlinked them); packs no longer listed are retired rather
// than closed because another goroutine may be reading from them.
func (s *store) scanLocked() error {
	root, err := s.fsLocked()
	if err != nil {
		return err
	}
	names, err := listPacks(root, s.f)
	if err != nil {
		return fmt.Errorf("list packs in %s: %w", s.dir, err)
	}
	known := make(map[string]*pack, len(s.packs))
	for _, p := range s.packs {
		known[p.name] = p
	}
	next := make([]*pack, 0, len(names))
	for _, n := range names {
		if p, ok := known[n]; ok {
			next = append(next, p)
			delete(known, n)
			continue
		}
		next = append(next, &pack{f: s.f, name: n, root: root, dir: s.dir})
	}
	for _, p := range s.packs {
		if _, gone := known[p.name]; gone {
			s.retired = append(s.retired, p)
		}
	}
	s.packs = next
	s.scanned = true
	return nil
}

// listPacks returns the names (without extension) of the well-formed pack
// indexes in pack/, sorted. Anything not named like git names packs is
// ignored, which keeps stray or hostile names out of the paths we open.
func listPacks(root *os.Root, f oid.Format) ([]string, error) {
	d, err := root.Open("pack")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer d.Close()
	ents, err := d.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		n, ok := strings.CutSuffix(e.Name(), ".idx")
		if !ok || !validPackName(n, f) {
			continue
		}
		names = append(names, n)
	}
	slices.Sort(names)
	return names, nil
}

// validPackName: pack-<hex of the pack's checksum>, of the format's length.
func validPackName(n string, f oid.Format) bool {
	hex, ok := strings.CutPrefix(n, "pack-")
	if !ok || len(hex) != f.HexLen() {
		return false
	}
	for _, c := range []byte(hex) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func (s *store) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	var errs []error
	for _, p := range slices.Concat(s.packs, s.retired) {
		errs = append(errs, p.close())
	}
	if s.root != nil {
		errs = append(errs, s.root.Close())
	}
	s.packs, s.retired, s.root = nil, nil, nil
	return errors.Join(errs...)
}

// loadAlternates returns stores for the directories listed, transitively,
// in primary's objects/info/alternates, in git's search order. Relative
// entries are relative to the objects directory that lists them, nesting
// stops at maxAlternateDepth as in git, and directories already seen are
// skipped so that cycles terminate.
func loadAlternates(primary *store) ([]*store, error) {
	seen := map[string]bool{primary.dir: true}
	var out []*store
	var walk func(s *store, depth int) error
	walk = func(s *store, depth int) error {
		if depth > maxAlternateDepth {
			return nil
		}
		dirs, err := readAlternates(s)
		if err != nil {
			return err
		}
		for _, d := range dirs {
			if !filepath.IsAbs(d) {
				d = filepath.Join(s.dir, d)
			}
			d = filepath.Clean(d)
			if seen[d] {
				continue
			}
			seen[d] = true
			// git ignores alternates that do not exist, with a
			// warning; a stale entry must not make every read fail.
			if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
				continue
			}
			alt := &store{dir: d, f: primary.f}
			out = append(out, alt)
			if err := walk(alt, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(primary, 1); err != nil {
		for _, s := range out {
			s.close()
		}
		return nil, err
	}
	return out, nil
}

func readAlternates(s *store) ([]string, error) {
	root, err := s.fs()
	if err != nil {
		return nil, err
	}
	f, err := root.Open(filepath.Join("info", "alternates"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read alternates of %s: %w", s.dir, err)
	}
	defer f.Close()
	var dirs []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if line == "" || line[0] == '#' {
			continue
		}
		// git C-quotes entries containing unusual characters; its
		// escapes are a subset of Go's.
		if line[0] == '"' {
			u, err := strconv.Unquote(line)
			if err != nil {
				return nil, fmt.Errorf("alternates of %s: bad quoted entry %q: %w", s.dir, line, ErrCorrupt)
			}
			line = u
		}
		dirs = append(dirs, line)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read alternates of %s: %w", s.dir, err)
	}
	return dirs, nil
}
