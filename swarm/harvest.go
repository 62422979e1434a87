package swarm

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/oid"
)

// What became of a job's commits (Job.Harvest).
const (
	// HarvestNone: the job's head is the card's base: it committed nothing.
	HarvestNone = "none"
	// HarvestDescends: the head descends from the base; it is harvested.
	HarvestDescends = "descends"
	// HarvestDiverged: the head does not contain the base (the job
	// rewrote it: an amend, a rebase, an unrelated history); harvested all
	// the same, and named.
	HarvestDiverged = "diverged"
	// HarvestBehind: the head is an ancestor of the base (the job reset
	// its branch back); its ref is kept, nothing was copied.
	HarvestBehind = "behind"
	// HarvestRefused: nothing was harvested: the head or an object it
	// reaches is missing, malformed or past a limit (HarvestNote says
	// which).
	HarvestRefused = "refused"
)

// The bounds of a harvest: past one, nothing of the job is copied and the
// harvest is refused.
const (
	// MaxHarvestObjects bounds the objects copied from one job.
	MaxHarvestObjects = 100_000
	// MaxHarvestBytes bounds their content together.
	MaxHarvestBytes = 256 << 20
	// MaxHarvestObject bounds one object's content.
	MaxHarvestObject = 64 << 20
	// MaxChangedListed bounds the paths a job record lists as changed
	// (Changed); ChangedCount counts them all.
	MaxChangedListed = 1000
	// maxPackedRefs bounds the job repository's packed-refs read.
	maxPackedRefs = 16 << 20
	// maxSymrefDepth bounds HEAD → ref → ref… as git does.
	maxSymrefDepth = 5
)

// DefaultHarvestLimits are MaxHarvestObjects, MaxHarvestBytes and
// MaxHarvestObject.
func DefaultHarvestLimits() gitstore.AdoptLimits {
	return gitstore.AdoptLimits{Objects: MaxHarvestObjects, Bytes: MaxHarvestBytes, Object: MaxHarvestObject}
}

// HeadRef is the ref that keeps a job's harvested head.
func HeadRef(label string, attempt int, nonce string) gitstore.RefName {
	return gitstore.RefName(fmt.Sprintf("%s%s/%d-%s", Heads, label, attempt, nonce))
}

// harvested is what harvest found and did.
type harvested struct {
	Harvest, Note, Head string
	Ref                 gitstore.RefName
	Commits             int
	Changed             []string
	ChangedCount        int
}

// harvest brings the commits of the sealed job directory dir into the
// store: it reads what the job repository's HEAD names (jobHead), and
// unless that is base, copies what it reaches and the store lacks
// (Store.Adopt, which reads the job's objects itself, follows no alternate
// the job wrote and runs no git) under ref, then says how the head stands
// to base and which paths differ from it. It never fails: what goes wrong
// is a refused harvest, named.
func harvest(ctx context.Context, st *gitstore.Store, dir string, base oid.ID, ref gitstore.RefName, lim gitstore.AdoptLimits) harvested {
	refused := func(format string, args ...any) harvested {
		return harvested{Harvest: HarvestRefused, Note: fmt.Sprintf(format, args...)}
	}
	head, err := jobHead(dir, base.Format())
	if err != nil {
		return refused("%v", err)
	}
	if head == base {
		return harvested{Harvest: HarvestNone}
	}
	got, err := st.Adopt(ctx, ref, filepath.Join(dir, "repo", ".git", "objects"), head, lim)
	if err != nil {
		return refused("head %s: %v", head, err)
	}
	h := harvested{Harvest: HarvestDescends, Head: head.String(), Ref: ref, Commits: got.Commits}
	if ok, err := st.IsAncestor(base, head); err != nil {
		return refused("head %s: %v", head, err)
	} else if !ok {
		h.Harvest = HarvestDiverged
		if behind, err := st.IsAncestor(head, base); err == nil && behind {
			h.Harvest = HarvestBehind
		}
	}
	if h.Changed, h.ChangedCount, err = st.ChangedPaths(base, head, MaxChangedListed); err != nil {
		h.Note = "the paths it changed could not be listed: " + err.Error()
	}
	for i, p := range h.Changed {
		h.Changed[i] = strings.ToValidUTF8(p, "\uFFFD")
	}
	return h
}

// jobHead reads the commit the sealed job repository's HEAD names: HEAD
// itself, then each ref it names (a loose file under refs/, else a line of
// packed-refs), at most maxSymrefDepth deep. Everything is read through an
// os.Root on the job directory, regular files only, bounded; nothing is
// read from the job's config, and no git runs.
func jobHead(dir string, f oid.Format) (oid.ID, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return oid.ID{}, err
	}
	defer root.Close()
	g, err := root.OpenRoot("repo/.git")
	if err != nil {
		return oid.ID{}, fmt.Errorf("the job's repository is gone: %w", err)
	}
	defer g.Close()
	name := "HEAD"
	for depth := 0; depth <= maxSymrefDepth; depth++ {
		b, err := readSmall(g, name, 256)
		if errors.Is(err, fs.ErrNotExist) && name != "HEAD" {
			b, err = packedRef(g, name)
		}
		if err != nil {
			return oid.ID{}, fmt.Errorf("HEAD names %s, which cannot be read: %w", name, err)
		}
		line, ok := strings.CutSuffix(string(b), "\n")
		if !ok || strings.ContainsAny(line, "\n\r") {
			return oid.ID{}, fmt.Errorf("%s is not one line", name)
		}
		if target, ok := strings.CutPrefix(line, "ref: "); ok {
			if !strings.HasPrefix(target, "refs/") || gitstore.RefName(target).Validate() != nil {
				return oid.ID{}, fmt.Errorf("%s names %q, which is no ref", name, target)
			}
			name = target
			continue
		}
		// An id of the repository's own format: the job's config does
		// not decide how its HEAD is read.
		id, err := oid.ParseOf(f, line)
		if err != nil {
			return oid.ID{}, fmt.Errorf("%s holds %q, which is no commit id", name, line)
		}
		return id, nil
	}
	return oid.ID{}, fmt.Errorf("HEAD names refs more than %d deep", maxSymrefDepth)
}

// packedRef finds name in the job repository's packed-refs, as the line
// a loose ref file would hold; fs.ErrNotExist when it is not there (an
// unborn branch).
func packedRef(g *os.Root, name string) ([]byte, error) {
	b, err := readSmall(g, "packed-refs", maxPackedRefs+1)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s has no commit (an unborn branch): %w", name, err)
	}
	if err != nil {
		return nil, err
	}
	if len(b) > maxPackedRefs {
		return nil, fmt.Errorf("packed-refs is larger than %d bytes", maxPackedRefs)
	}
	var found []byte
	for _, line := range strings.Split(string(b), "\n") {
		id, ref, ok := strings.Cut(line, " ")
		if ok && ref == name && !strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "^") {
			// git answers a ref named twice with the line its binary
			// search lands on (the last of two), not the first: the job
			// must not choose what git shows and what is harvested apart.
			if found != nil {
				return nil, fmt.Errorf("packed-refs names %s more than once", name)
			}
			found = []byte(id + "\n")
		}
	}
	if found != nil {
		return found, nil
	}
	return nil, fmt.Errorf("%s has no commit (an unborn branch): %w", name, fs.ErrNotExist)
}
