package gitstore

import (
	"container/heap"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nwdes/nwdes/gitstore/git"

	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/refusal"
)

// This file holds the history check of append-only refs: a ref declared
// with Immutable directories keeps every file written there, byte for
// byte, in every later commit. VerifyHistory checks a range of commits
// against their parents; CheckHistory does it incrementally from the tip
// this clone verified last (its checkpoint), and every writer (Update, a
// fetch's merge) calls it before writing on a tip.

// CheckpointPrefix is where a clone keeps its checkpoints: for each
// append-only ref R, the ref CheckpointPrefix + R without "refs/" (for
// refs/nwdes/examine, refs/nwdes-local/verified/nwdes/examine) names the
// last tip of R whose whole history this clone verified. It lives under
// LocalPrefix, so it is never pushed or fetched, and being a ref it keeps
// that commit (and every record it held) alive through git gc: when R is
// rewritten, what it held is still there to restore from. Deleting it only
// resets verification: the next check reads R's whole history.
const CheckpointPrefix = LocalPrefix + "verified/"

// CheckpointRef is the checkpoint of ref (see CheckpointPrefix).
func CheckpointRef(ref RefName) RefName {
	return CheckpointPrefix + RefName(strings.TrimPrefix(string(ref), "refs/"))
}

// appendOnly reports whether spec's history is checked: a chain of
// commits, merged or fast-forwarded between clones, with immutable
// directories.
func appendOnly(spec RefSpec) bool {
	return len(spec.Immutable) > 0 && spec.History == HistoryChain &&
		(spec.Policy == PolicyMerge || spec.Policy == PolicyFastForward)
}

// VerifyHistory checks ref's history from commit from (exclusive; zero:
// the whole history) to commit to: from must be an ancestor of to (a ref
// that moved anywhere else was rewritten), and every commit reachable from
// to and not from from must keep, against each of its parents, every file
// under the ref's Immutable directories, unchanged (additions are what
// append-only allows). A merge commit of a ref declared PolicyMerge may
// decide between two versions of one record its parents both hold (the
// record directory is then one parent's, whole), as a fetch's merge does
// with the kind's rule; anything else that drops or changes a file is a
// break.
//
// A break is a HistoryRewritten refusal naming the ref, the commit, the
// parent and the path. The cost is one commit read per commit checked
// (and one for from), plus tree diffs that skip equal subtrees: what each
// commit changed. The walk is bounded by MaxWalk (WalkLimit); a commit
// whose parents this clone does not have is ShallowClone. A ref declared
// without Immutable directories is checked for ancestry only.
func (s *Store) VerifyHistory(ref RefName, from, to oid.ID) error {
	spec, err := s.opts.Registry.refFor(ref)
	if err != nil {
		return err
	}
	return s.verifyHistory(ref, spec, (from), (to))
}

func (s *Store) verifyHistory(ref RefName, spec RefSpec, from, to oid.ID) error {
	if from == to {
		return nil
	}
	if !from.IsZero() {
		if to.IsZero() {
			return movedBack(ref, from, to, "it was deleted")
		}
		ok, err := s.git.IsAncestor(from, to)
		if err != nil {
			return fmt.Errorf("check history of %s: %w", ref, err)
		}
		if !ok {
			return movedBack(ref, from, to, "it does not contain that commit")
		}
	}
	if len(spec.Immutable) == 0 {
		return nil
	}
	var first *historyBreak
	err := s.walkNew(ref, spec, []oid.ID{from}, to, func(b historyBreak) bool {
		first = &b
		return false
	})
	if err != nil {
		return err
	}
	if first != nil {
		return first.refusal("")
	}
	return nil
}

// CheckHistory verifies the records ref R as of tip T, incrementally from
// this clone's checkpoint C (CheckpointRef(R); zero when there is none,
// and then the whole history is read): VerifyHistory(R, C, T). It is the
// check to call before judging on R at T, or writing on top of T.
//
// On success it advances the checkpoint to T by compare-and-swap, unless
// the repository cannot be written (a server's quarantine in a
// pre-receive hook, permissions, a read-only file system: then it only
// verifies, and the next call verifies the same commits again). It never
// moves the checkpoint backwards or off T's history: when another
// verifier moved it meanwhile, it is left where it is if it already
// contains T, and otherwise moved on from its new value. A T equal to C
// costs one ref read; otherwise one commit read per commit since C plus
// the tree diffs of what they changed.
//
// A ref that is not append-only (no Immutable directories, a latest or
// local or swap ref) is not checked, and nil is returned. A failure is
// HistoryRewritten (a commit since C drops or changes a record, or T does
// not contain C: the ref was moved back, rebuilt or deleted), ShallowClone,
// WalkLimit, or an error reading the objects; the checkpoint stays.
// Safe for concurrent use, by goroutines and processes.
func (s *Store) CheckHistory(ref RefName, tip oid.ID) error {
	spec, err := s.opts.Registry.refFor(ref)
	if err != nil {
		return err
	}
	cp, err := s.checkHistory(ref, spec, (tip))
	if err == nil && cp != (tip) {
		s.advanceCheckpoint(ref, cp, (tip))
	}
	return err
}

// verifiedView is view after CheckHistory of the ref's tip: a read-only
// view of ref at a tip whose history holds every record it ever held.
func (s *Store) verifiedView(ref RefName) (*Tx, error) {
	tip, err := s.refs.Read(ref)
	if err != nil {
		return nil, err
	}
	if err := s.CheckHistory(ref, (tip)); err != nil {
		return nil, err
	}
	return s.viewAt(ref, tip, true)
}

// checkHistory verifies ref at tip from its checkpoint without moving the
// checkpoint, and returns the checkpoint it verified from: tip itself
// when there was nothing to check, or when tip is an older value of the
// ref inside the checkpoint's verified history (read just before another
// writer moved the ref and the checkpoint on: the ref has moved since, so
// a write on tip loses its compare-and-swap and reads again).
func (s *Store) checkHistory(ref RefName, spec RefSpec, tip oid.ID) (oid.ID, error) {
	if !appendOnly(spec) {
		return tip, nil
	}
	cp, err := s.refs.Read(CheckpointRef(ref))
	if err != nil || cp == tip {
		return tip, err
	}
	if !cp.IsZero() {
		if tip.IsZero() {
			// A zero tip read before another writer created the ref and
			// moved the checkpoint on is stale, as below: a write on it
			// loses its compare-and-swap (the ref must not exist) and
			// reads again. Only a ref that is still absent was deleted.
			now, err := s.refs.Read(ref)
			if err != nil {
				return oid.Zero, err
			}
			if !now.IsZero() {
				return tip, nil
			}
			return oid.Zero, movedBack(ref, cp, tip, "it was deleted")
		}
		ok, err := s.git.IsAncestor(cp, tip)
		if err != nil {
			return oid.Zero, fmt.Errorf("check history of %s: %w", ref, err)
		}
		if !ok {
			// The checkpoint only ever names a value the ref held, and
			// the ref only moves forward: a tip below the checkpoint is
			// stale if the ref has moved since, else the ref moved back.
			stale, err := s.git.IsAncestor(tip, cp)
			if err != nil {
				return oid.Zero, fmt.Errorf("check history of %s: %w", ref, err)
			}
			if stale {
				now, err := s.refs.Read(ref)
				if err != nil {
					return oid.Zero, err
				}
				if now != tip {
					return tip, nil
				}
			}
			return oid.Zero, movedBack(ref, cp, tip, "it does not contain that commit")
		}
	}
	var first *historyBreak
	err = s.walkNew(ref, spec, []oid.ID{cp}, tip, func(b historyBreak) bool {
		first = &b
		return false
	})
	if err != nil {
		return oid.Zero, err
	}
	if first != nil {
		return oid.Zero, first.refusal("")
	}
	return cp, nil
}

// advanceCheckpoint moves ref's checkpoint from old to next, a descendant
// of old that was verified, by compare-and-swap; best effort: a failure
// leaves the checkpoint where it was (the next check verifies more). A
// concurrent verifier's move is kept when it already contains next, and
// built on when next contains it.
func (s *Store) advanceCheckpoint(ref RefName, old, next oid.ID) {
	if next.IsZero() || old == next || s.git.Writable() != nil {
		// A quarantine's refs are not ours to move (git refuses ref
		// updates while GIT_QUARANTINE_PATH is set).
		return
	}
	name := CheckpointRef(ref)
	for range 4 {
		err := s.cpRefs.CompareAndSwap(name, old, next)
		if err == nil || !errors.Is(err, ErrConflict) {
			return
		}
		cur, err := s.cpRefs.Read(name)
		if err != nil || cur == next {
			return
		}
		if !cur.IsZero() {
			if ahead, err := s.git.IsAncestor(next, cur); err != nil || ahead {
				return
			}
			if behind, err := s.git.IsAncestor(cur, next); err != nil || !behind {
				// Off next's history: the next check names it.
				return
			}
		}
		old = cur
	}
}

// historyBreak is one commit that drops or changes a file under an
// immutable directory, against one of its parents.
type historyBreak struct {
	ref            RefName
	commit, parent oid.ID
	path           string
	gone           bool
}

func (b historyBreak) what() string {
	verb := "changes"
	if b.gone {
		verb = "removes"
	}
	return fmt.Sprintf("commit %s %s %s, which its parent %s held", b.commit.String()[:12], verb, b.path, b.parent.String()[:12])
}

// refusal is the break as a HistoryRewritten refusal; where says where
// the history came from ("" for the ref itself).
func (b historyBreak) refusal(where string) error {
	if where == "" {
		where = string(b.ref)
	}
	return refusal.NewUnreadable(refusal.HistoryRewritten,
		fmt.Sprintf("records are append-only: see the commit with git log -1 --stat %s, and the record as it was with git show %s:%s; "+
			"it must be restored by whoever can write where the history came from (a commit on top that puts it back as it was, "+
			"or the ref moved back to a good tip); nothing is written on top of it meanwhile",
			b.commit.String()[:12], b.parent.String()[:12], b.path),
		"%s: %s: history rewritten", where, b.what())
}

func movedBack(ref RefName, cp, tip oid.ID, why string) error {
	at := "deleted"
	if !tip.IsZero() {
		at = "at " + tip.String()[:12]
	}
	return refusal.NewUnreadable(refusal.HistoryRewritten,
		fmt.Sprintf("see what it dropped with git log %s..%s (kept alive by %s); restore %s to a commit that contains it "+
			"(git update-ref %s %s, then git nwdes fetch), or, if the rewrite was meant, delete the checkpoint "+
			"(git update-ref -d %s): the whole history is then verified again",
			HexOrEmpty(tip), cp.String()[:12], CheckpointRef(ref), ref, ref, cp.String()[:12], CheckpointRef(ref)),
		"%s %s does not contain %s, the tip this clone verified last (%s): %s; history rewritten",
		ref, at, cp.String()[:12], CheckpointRef(ref), why)
}

// walkNew checks every commit reachable from to and from none of old
// against each of its parents, newest first (by commit time), calling bad
// for each break until it returns false. Commits reachable from old are
// painted as they are met; one taken before its paint arrived is checked
// too, which costs a read and can only find a break that is really there.
func (s *Store) walkNew(ref RefName, spec RefSpec, old []oid.ID, to oid.ID, bad func(historyBreak) bool) error {
	const (
		fresh = 1 << iota
		seen
	)
	w := &histWalk{s: s, info: map[oid.ID]git.Commit{}, flags: map[oid.ID]int{}}
	for _, h := range old {
		if !h.IsZero() {
			if err := w.mark(h, seen); err != nil {
				return err
			}
		}
	}
	if err := w.mark(to, fresh); err != nil {
		return err
	}
	decide := spec.Policy == PolicyMerge
	for n := 0; w.pending(fresh, seen); {
		h := heap.Pop(&w.q).(queued).h
		f := w.flags[h]
		c := w.info[h]
		if f&seen != 0 {
			for _, p := range c.Parents {
				if err := w.mark(p, seen); err != nil {
					return err
				}
			}
			continue
		}
		if n++; n > s.opts.MaxWalk {
			return git.WalkLimit(s.opts.MaxWalk)
		}
		if len(c.Parents) > 0 {
			if shallow, err := s.git.IsShallow(h); err != nil {
				return err
			} else if shallow {
				return git.ShallowBoundary(h)
			}
		}
		trees := make([]oid.ID, len(c.Parents))
		for i, p := range c.Parents {
			if err := w.mark(p, fresh); err != nil {
				return err
			}
			trees[i] = w.info[p].Tree
		}
		for i, p := range c.Parents {
			var alts []oid.ID
			if decide && len(trees) > 1 {
				alts = append(append(alts, trees[:i]...), trees[i+1:]...)
			}
			path, gone, err := s.alteredTrees(trees[i], c.Tree, spec.Immutable, alts)
			if err != nil {
				return fmt.Errorf("check history of %s at %s: %w", ref, h, err)
			}
			if path != "" && !bad(historyBreak{ref: ref, commit: h, parent: p, path: path, gone: gone}) {
				return nil
			}
		}
	}
	return nil
}

// histWalk is walkNew's queue: each commit read once, queued once.
type histWalk struct {
	s     *Store
	info  map[oid.ID]git.Commit
	flags map[oid.ID]int
	q     histQueue
	seq   int
}

// mark adds flag to h, queueing h (read once) when first met.
func (w *histWalk) mark(h oid.ID, flag int) error {
	f, met := w.flags[h]
	w.flags[h] = f | flag
	if met {
		return nil
	}
	c, err := w.s.git.ReadCommit(h)
	if err != nil {
		return fmt.Errorf("read commit %s: %w", h, err)
	}
	w.info[h] = c
	w.seq++
	heap.Push(&w.q, queued{h: h, when: c.Time, seq: w.seq})
	return nil
}

// histQueue is a heap of commits, newest first (by commit time), ties in
// the order they were met.
type histQueue []queued

type queued struct {
	h    oid.ID
	when time.Time
	seq  int
}

func (q histQueue) Len() int { return len(q) }
func (q histQueue) Less(i, j int) bool {
	if !q[i].when.Equal(q[j].when) {
		return q[i].when.After(q[j].when)
	}
	return q[i].seq < q[j].seq
}
func (q histQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *histQueue) Push(x any)   { *q = append(*q, x.(queued)) }
func (q *histQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// pending reports whether a queued commit is fresh and not yet painted
// seen: only then is there anything left to check.
func (w *histWalk) pending(fresh, seen int) bool {
	for _, e := range w.q {
		if w.flags[e.h]&(fresh|seen) == fresh {
			return true
		}
	}
	return false
}

// alteredTrees returns the first file under one of dirs (top-level
// directories) that tree old holds and tree next lacks (gone) or holds
// with other content or mode, "" when there is none. alts are the trees
// of a merge's other parents: a record directory (one holding
// record.json) that next holds exactly as one of them does was decided
// by the merge, and is not a change. Equal subtrees are skipped.
func (s *Store) alteredTrees(old, next oid.ID, dirs []string, alts []oid.ID) (string, bool, error) {
	if old == next {
		return "", false, nil
	}
	if len(alts) > 0 {
		return s.compareTrees(old, next, dirs, alts)
	}
	// Trees are content-addressed, so what one comparison found is what
	// any other of the same trees finds: a ledger's verification compares
	// every commit with its parent, and CheckHistory, verifying the same
	// commits on a first run, asks again. The answer is reused only while
	// both trees are still in the object database; their subtrees were
	// read whole when it was found (fsck, which judges what is there now,
	// reads every tree itself).
	k := comparison{old: old, next: next, dirs: strings.Join(dirs, "\x00")}
	if a, ok := s.compared.get(k); ok && s.stillHas(old, next) {
		return a.path, a.gone, nil
	}
	path, gone, err := s.compareTrees(old, next, dirs, nil)
	if err == nil {
		s.compared.put(k, alteration{path, gone})
	}
	return path, gone, err
}

// comparison names one question alteredTrees answers without a merge's
// other parents: trees old and next, under dirs (joined by NUL).
type comparison struct {
	old, next oid.ID
	dirs      string
}

// alteration is alteredTrees's answer.
type alteration struct {
	path string
	gone bool
}

// compareTrees is alteredTrees, asked afresh.
func (s *Store) compareTrees(old, next oid.ID, dirs []string, alts []oid.ID) (string, bool, error) {
	oes, err := s.treeEntries(old)
	if err != nil {
		return "", false, err
	}
	nes, err := s.treeEntries(next)
	if err != nil {
		return "", false, err
	}
	var altes []dirEntries
	for _, a := range alts {
		es, err := s.treeEntries(a)
		if err != nil {
			return "", false, err
		}
		altes = append(altes, es)
	}
	for _, d := range dirs {
		o, ok := oes.lookup(d)
		if !ok {
			continue
		}
		if p, gone, err := s.altered(d, o, nes.get(d), pick(altes, d)); p != "" || err != nil {
			return p, gone, err
		}
	}
	return "", false, nil
}

func (s *Store) altered(path string, o, n git.TreeEntry, alts []git.TreeEntry) (string, bool, error) {
	switch {
	case o.Mode == n.Mode && o.ID == n.ID:
		return "", false, nil
	case n.Mode == 0:
		return path, true, nil
	case !o.IsTree() || !n.IsTree():
		return path, false, nil // a file changed, or turned into a tree
	}
	oes, err := s.treeEntries(o.ID)
	if err != nil {
		return "", false, err
	}
	if oes.hasRecord() {
		for _, a := range alts {
			if a.Mode == n.Mode && a.ID == n.ID {
				return "", false, nil
			}
		}
	}
	nes, err := s.treeEntries(n.ID)
	if err != nil {
		return "", false, err
	}
	var altes []dirEntries
	for _, a := range alts {
		if a.IsTree() && a.ID != n.ID {
			es, err := s.treeEntries(a.ID)
			if err != nil {
				return "", false, err
			}
			altes = append(altes, es)
		}
	}
	// Both are in the order of names: walk them side by side.
	j := 0
	for _, oe := range oes {
		for j < len(nes) && nes[j].Name < oe.Name {
			j++
		}
		var ne git.TreeEntry
		if j < len(nes) && nes[j].Name == oe.Name {
			ne = nes[j]
		}
		if ne.Mode == oe.Mode && ne.ID == oe.ID {
			continue // unchanged, as altered would find, without its path
		}
		if p, gone, err := s.altered(path+"/"+oe.Name, oe, ne, pick(altes, oe.Name)); p != "" || err != nil {
			return p, gone, err
		}
	}
	if oes.hasRecord() {
		// A record is whole: a file added to it (a payload smuggled in)
		// changes it as surely as an edit does.
		return path, false, nil
	}
	return "", false, nil
}

// pick returns the entries named name in each of trees (those that have one).
func pick(trees []dirEntries, name string) []git.TreeEntry {
	var out []git.TreeEntry
	for _, es := range trees {
		if e, ok := es.lookup(name); ok {
			out = append(out, e)
		}
	}
	return out
}

// alteredImmutable returns the first file under one of dirs that the
// view's base tree holds and its staged edits remove (gone) or change, ""
// when there is none. Only the directories the edits touched are read:
// one original tree per edited level.
func (tx *Tx) alteredImmutable(dirs []string) (string, bool, error) {
	if !tx.changed || tx.baseTree.IsZero() || !tx.root.dirty {
		return "", false, nil
	}
	orig, err := tx.s.treeEntries(tx.baseTree)
	if err != nil {
		return "", false, err
	}
	for _, d := range dirs {
		o, ok := orig.lookup(d)
		if !ok {
			continue
		}
		if p, gone, err := tx.alteredNode(d, o, tx.root.entries[d]); p != "" || err != nil {
			return p, gone, err
		}
	}
	return "", false, nil
}

func (tx *Tx) alteredNode(path string, o git.TreeEntry, e *entry) (string, bool, error) {
	switch {
	case e == nil:
		return path, true, nil
	case e.sub == nil || !e.sub.dirty:
		return tx.s.altered(path, o, git.TreeEntry{Mode: e.Mode, ID: e.ID}, nil)
	case !o.IsTree():
		return path, false, nil
	}
	oes, err := tx.s.treeEntries(o.ID)
	if err != nil {
		return "", false, err
	}
	for _, oe := range oes {
		if p, gone, err := tx.alteredNode(path+"/"+oe.Name, oe, e.sub.entries[oe.Name]); p != "" || err != nil {
			return p, gone, err
		}
	}
	if oes.hasRecord() {
		// A record is whole: nothing is added to it either, at any depth
		// (a payload smuggled in beside the others).
		if added, err := tx.addedUnder(o, e); added || err != nil {
			return path, false, err
		}
	}
	return "", false, nil
}

// addedUnder reports whether the staged entry e holds a name the committed
// tree o does not, at any depth.
func (tx *Tx) addedUnder(o git.TreeEntry, e *entry) (bool, error) {
	if e.sub == nil || !e.sub.dirty {
		return e.ID != o.ID, nil
	}
	if !o.IsTree() {
		return true, nil
	}
	oes, err := tx.s.treeEntries(o.ID)
	if err != nil {
		return false, err
	}
	for name, ne := range e.sub.entries {
		oe, ok := oes.lookup(name)
		if ne == nil {
			continue
		}
		if !ok {
			return true, nil
		}
		if added, err := tx.addedUnder(oe, ne); added || err != nil {
			return added, err
		}
	}
	return false, nil
}

// checkImmutable refuses staged edits that remove or change a file under
// one of the ref's immutable directories: records there are written once.
func (tx *Tx) checkImmutable() error {
	if !appendOnly(tx.spec) {
		return nil
	}
	path, gone, err := tx.alteredImmutable(tx.spec.Immutable)
	if err != nil || path == "" {
		return err
	}
	verb := "change"
	if gone {
		verb = "remove"
	}
	return refusal.New(refusal.RecordImmutable,
		"write a new record instead: what is under "+strings.Join(tx.spec.Immutable, ", ")+" is written once",
		"%s: the update would %s %s, which is append-only", tx.ref, verb, path)
}

// fsckHistory checks the whole history of every append-only ref of refs
// (VerifyHistory from the root), naming each break as a problem, and each
// checkpoint that its ref does not contain.
func (s *Store) fsckHistory(rep *FsckReport, refs map[RefName]oid.ID) {
	for _, name := range SortedNames(refs) {
		spec, err := s.opts.Registry.refFor(name)
		if err != nil || !appendOnly(spec) {
			continue
		}
		tip := refs[name]
		err = s.walkNew(name, spec, nil, tip, func(b historyBreak) bool {
			rep.Problems = append(rep.Problems, Problem{Ref: name, Commit: b.commit.String(), Path: b.path,
				What: b.what() + ": history rewritten (records are append-only)"})
			return true
		})
		if err != nil {
			rep.Problems = append(rep.Problems, Problem{Ref: name, Commit: tip.String(), What: "history not checked: " + err.Error()})
		}
	}
	cps, err := s.refs.List(CheckpointPrefix)
	if err != nil {
		rep.Problems = append(rep.Problems, Problem{Ref: CheckpointPrefix, What: "checkpoints unreadable: " + err.Error()})
		return
	}
	for _, cpRef := range SortedNames(cps) {
		ref := RefName("refs/" + strings.TrimPrefix(string(cpRef), CheckpointPrefix))
		cp, tip := cps[cpRef], refs[ref]
		ok := false
		if !tip.IsZero() {
			if ok, err = s.git.IsAncestor(cp, tip); err != nil {
				rep.Problems = append(rep.Problems, Problem{Ref: ref, Commit: cp.String(), What: "checkpoint not checked: " + err.Error()})
				continue
			}
		}
		if !ok {
			rep.Problems = append(rep.Problems, Problem{Ref: ref, Commit: cp.String(),
				What: fmt.Sprintf("%s does not contain %s, the tip this clone verified last (%s): history rewritten", describeTip(tip), cp.String()[:12], cpRef)})
		}
	}
}

func describeTip(tip oid.ID) string {
	if tip.IsZero() {
		return "the ref is gone and"
	}
	return "its tip " + tip.String()[:12]
}

// checkpointRefs moves checkpoints: without fsync (a checkpoint lost to a
// power cut only means more to verify next time) and with a short lock
// wait (another verifier holds it for microseconds).
func checkpointRefs(commonDir string, now func() time.Time) *Refs {
	r := NewRefs(commonDir)
	r.LockTimeout = 100 * time.Millisecond
	r.Now = now
	return r
}

// verifyIncoming checks the commits of to that none of old reaches, as
// VerifyHistory does, naming the remote they came from.
func (s *Store) verifyIncoming(ref RefName, spec RefSpec, old []oid.ID, to oid.ID, from string) error {
	var first *historyBreak
	if err := s.walkNew(ref, spec, old, to, func(b historyBreak) bool { first = &b; return false }); err != nil {
		return err
	}
	if first != nil {
		return first.refusal(fmt.Sprintf("%s as fetched from %s", ref, from))
	}
	return nil
}

// stillHas reports whether the object database has every one of ids now
// (a lookup each, no read); an unreadable index counts as not.
func (s *Store) stillHas(ids ...oid.ID) bool {
	for _, id := range ids {
		if there, err := s.git.Has(id); err != nil || !there {
			return false
		}
	}
	return true
}
