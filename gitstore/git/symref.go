package git

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/refusal"
)

// SymrefMaxDepth is how many symbolic refs git follows before it gives up
// (SYMREF_MAXDEPTH in git's refs.h).
const SymrefMaxDepth = 5

// Symbolic reads name without following it: the ref a loose file
// "ref: <target>" names, or "" when name is not a symbolic ref (an object
// id, a packed ref, or no ref at all; packed-refs cannot hold symbolic refs).
// A target that is not a valid ref name under refs/ is refused
// (RefUnreadable), never read as no target.
func (r *Refs) Symbolic(name RefName) (RefName, error) {
	if err := name.Validate(); err != nil {
		return "", err
	}
	b, err := os.ReadFile(filepath.Join(r.dir, filepath.FromSlash(string(name))))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EISDIR) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read ref %s: %w", name, err)
	}
	s, ok := strings.CutPrefix(string(b), "ref:")
	if !ok {
		return "", nil
	}
	target := RefName(strings.TrimSpace(s))
	if target.Validate() != nil {
		return "", refusal.NewUnreadable(refusal.RefUnreadable,
			"point it at a ref under refs/ (git symbolic-ref), or remove it",
			"ref %s is symbolic to %q, which is not a ref under refs/", name, text.Truncate(string(target), 60))
	}
	return target, nil
}

// Referent follows name through symbolic refs as git does when it updates
// or reads it: the ref that holds the value (name itself when it is not
// symbolic; possibly a ref that does not exist yet), and every name passed
// on the way, name first. A chain longer than SymrefMaxDepth, or a loop,
// is refused (RefUnreadable).
func (r *Refs) Referent(name RefName) (RefName, []RefName, error) {
	chain := []RefName{name}
	for range SymrefMaxDepth + 1 {
		target, err := r.Symbolic(name)
		if err != nil {
			return "", nil, err
		}
		if target == "" {
			return name, chain, nil
		}
		chain = append(chain, target)
		name = target
	}
	return "", nil, refusal.NewUnreadable(refusal.RefUnreadable,
		"shorten the chain of symbolic refs (git symbolic-ref), or remove one",
		"ref %s is a chain of more than %d symbolic refs, which git does not follow", chain[0], SymrefMaxDepth)
}

// Names lists the refs, loose and packed, symbolic or not, whose names keep
// reports, in order, each once. Only names are read here: a value is read
// with Read or Referent, so that what counts as a ref's value stays in one
// place.
func (r *Refs) Names(keep func(RefName) bool) ([]RefName, error) {
	seen := map[RefName]bool{}
	if f, err := os.Open(filepath.Join(r.dir, "packed-refs")); err == nil {
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if line == "" || line[0] == '#' || line[0] == '^' {
				continue
			}
			if i := strings.IndexByte(line, ' '); i >= 0 && keep(RefName(line[i+1:])) {
				seen[RefName(line[i+1:])] = true
			}
		}
		err := sc.Err()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("read packed-refs: %w", err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read packed-refs: %w", err)
	}
	err := r.walkLoose("refs/", func(name RefName) error {
		if keep(name) {
			seen[name] = true
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list refs: %w", err)
	}
	out := make([]RefName, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

// SymbolicRefs maps each loose symbolic ref whose name keep reports to the
// ref it names (one step, not followed). Only loose refs are read:
// packed-refs cannot hold a symbolic ref.
func (r *Refs) SymbolicRefs(keep func(RefName) bool) (map[RefName]RefName, error) {
	out := map[RefName]RefName{}
	err := r.walkLoose("refs/", func(name RefName) error {
		if !keep(name) {
			return nil
		}
		target, err := r.Symbolic(name)
		if err != nil {
			return err
		}
		if target != "" {
			out[name] = target
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list symbolic refs: %w", err)
	}
	return out, nil
}
