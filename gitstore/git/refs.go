package git

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/refusal"
)

// RefName is a full reference name such as refs/nwdes/examine.
type RefName string

// Validate applies git's check-ref-format rules that matter for a file on
// disk: under refs/, no empty, "." or ".." components, no component ending
// in ".lock", none of the characters git forbids.
func (r RefName) Validate() error {
	s := string(r)
	bad := func(why string) error {
		return refusal.New(refusal.RefNameInvalid, "use a name like refs/nwdes/<name>", "ref name %q %s", s, why)
	}
	if !strings.HasPrefix(s, "refs/") {
		return bad("is not under refs/")
	}
	if strings.HasSuffix(s, "/") || strings.Contains(s, "//") {
		return bad("has an empty component")
	}
	for _, c := range strings.Split(s, "/") {
		if c == "" || c[0] == '.' || strings.HasSuffix(c, ".lock") {
			return bad("has a component that is empty, starts with '.' or ends with .lock")
		}
	}
	if strings.Contains(s, "..") || strings.Contains(s, "@{") || strings.HasSuffix(s, ".") {
		return bad("contains '..', '@{' or ends with '.'")
	}
	for _, ch := range s {
		if ch < 0x20 || ch == 0x7f || strings.ContainsRune(" ~^:?*[\\", ch) {
			return bad("contains a character git forbids")
		}
	}
	return nil
}

// Refs moves references with git's own locking protocol, so that nwdes,
// git update-ref, git pack-refs and git gc exclude one another:
//
//  1. create <ref>.lock with O_CREAT|O_EXCL (an existing lock means someone
//     else is updating: wait up to LockTimeout, then report it; a
//     directory git pack-refs removed meanwhile is made again);
//  2. under the lock read the current value (loose file, else packed-refs)
//     and compare it with the expected old value;
//  3. write the new value into the lock file and rename it over the ref.
//
// A rename is atomic, so a reader sees the old value or the new one, never a
// partial file, and a process killed at any instant leaves one of the two.
// go-git's CheckAndSetReference instead flocks and rewrites the ref in place,
// which git's .lock does not exclude; see docs/data-model.md.
type Refs struct {
	dir string     // the common git directory
	f   oid.Format // the repository's object format: every value is of it
	// LockTimeout bounds how long an update waits for another writer's lock.
	LockTimeout time.Duration
	// StaleAfter is the lock age after which a held lock is reported as
	// probably left by a crashed writer.
	StaleAfter time.Duration
	// Durable makes each update fsync the lock file before the rename and the
	// directory after it (the lock file concurrently with the hook that
	// syncs the objects, see compareAndSwap).
	Durable bool
	// Now is the clock used for lock ages.
	Now func() time.Time

	// Test hooks at the two instants a concurrent git pack-refs --prune
	// could make a ref vanish from a scan or come back after a delete:
	// between the walk of the loose files and the read of packed-refs,
	// and between a delete's rewrite of packed-refs and the removal of the
	// loose file. Nil outside tests (export_test.go sets them).
	betweenScans, beforeLooseRemove func()
}

// NewRefs returns the ref mover for a common git directory, of the object
// format its config names (gitrepo.ObjectFormat; SHA-1 when the config
// cannot be read, so that a SHA-256 value then reads as damage, never as
// another id).
func NewRefs(commonDir string) *Refs {
	f, err := gitrepo.ObjectFormat(commonDir)
	if err != nil {
		f = oid.SHA1
	}
	return newRefs(commonDir, f)
}

func newRefs(commonDir string, f oid.Format) *Refs {
	return &Refs{dir: commonDir, f: f, LockTimeout: 2 * time.Second, StaleAfter: 10 * time.Minute, Now: time.Now}
}

// Read returns the value of a ref, or oid.Zero and no error when it does
// not exist. Symbolic refs are refused: nwdes's refs are never symbolic.
func (r *Refs) Read(name RefName) (oid.ID, error) { return r.read(name) }

func (r *Refs) read(name RefName) (oid.ID, error) {
	if err := name.Validate(); err != nil {
		return oid.Zero, err
	}
	h, found, err := r.readLoose(name)
	if err != nil || found {
		return h, err
	}
	// A loose ref missing here may have just been packed; pack-refs writes
	// packed-refs before pruning the loose file, so packed-refs has it.
	return r.readPacked(name)
}

func (r *Refs) readLoose(name RefName) (oid.ID, bool, error) {
	b, err := os.ReadFile(filepath.Join(r.dir, filepath.FromSlash(string(name))))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EISDIR) {
		return oid.Zero, false, nil
	}
	if err != nil {
		return oid.Zero, false, fmt.Errorf("read ref %s: %w", name, err)
	}
	s := strings.TrimSpace(string(b))
	if strings.HasPrefix(s, "ref:") {
		return oid.Zero, false, refusal.NewUnreadable(refusal.RefUnreadable,
			"nwdes refs are never symbolic; restore the ref with git update-ref",
			"ref %s is symbolic (%s)", name, s)
	}
	id, ok := parseHex(r.f, s)
	if !ok {
		return oid.Zero, false, refusal.NewUnreadable(refusal.RefUnreadable,
			"inspect the file; restore it with git update-ref or remove it",
			"ref %s holds %q, not a %s object id", name, text.Truncate(s, 70), r.f)
	}
	return id, true, nil
}

func (r *Refs) readPacked(name RefName) (oid.ID, error) {
	f, err := os.Open(filepath.Join(r.dir, "packed-refs"))
	if errors.Is(err, fs.ErrNotExist) {
		return oid.Zero, nil
	}
	if err != nil {
		return oid.Zero, fmt.Errorf("read packed-refs: %w", err)
	}
	defer f.Close()
	want := []byte(name)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	var h oid.ID
	n := 0
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] == '#' || line[0] == '^' {
			continue
		}
		// Any line that names the ref counts: one whose id is not 40 hex
		// digits (64 in a SHA-256 repository) is damage to refuse (git stops with "fatal" too), never a
		// ref to treat as absent and start a fresh history over. The whole
		// file is read: a second line for the ref is damage too.
		if i := bytes.IndexByte(line, ' '); i >= 0 && bytes.Equal(line[i+1:], want) {
			id, ok := parseHex(r.f, string(line[:i]))
			if !ok {
				return oid.Zero, malformedPacked(name)
			}
			h = id
			n++
		}
	}
	if err := sc.Err(); err != nil {
		return oid.Zero, fmt.Errorf("read packed-refs: %w", err)
	}
	if n > 1 {
		return oid.Zero, duplicatePacked(name, n)
	}
	return h, nil
}

// List returns every ref under prefix (loose and packed), with values; a
// ref that exists throughout the call is never missing (see scan). A
// ref packed-refs names on more than one line, with no loose file over
// it, is refused as Read refuses it (RefUnreadable): there is no one
// value to list.
func (r *Refs) List(prefix string) (map[RefName]oid.ID, error) { return r.list(prefix) }

func (r *Refs) list(prefix string) (map[RefName]oid.ID, error) {
	sc, err := r.scan(prefix)
	if err != nil {
		return nil, err
	}
	for _, name := range SortedNames(sc.packedTwice) {
		if !sc.loose[name] {
			return nil, duplicatePacked(name, sc.packedTwice[name])
		}
	}
	return sc.refs, nil
}

// RefScan is what Scan found under a prefix, damage included.
type RefScan struct {
	Refs        map[RefName]oid.ID // each ref's value; a loose file overrides packed-refs
	PackedTwice map[RefName]int    // see refScan.packedTwice
	Loose       map[RefName]bool   // the refs that have a loose file
}

// Scan reads every ref under prefix, as List does, and says what fsck
// names: refs packed-refs holds more than once, and which refs have a
// loose file (which git reads first).
func (r *Refs) Scan(prefix string) (*RefScan, error) {
	sc, err := r.scan(prefix)
	if err != nil {
		return nil, err
	}
	return &RefScan{Refs: sc.refs, PackedTwice: sc.packedTwice, Loose: sc.loose}, nil
}

// refScan is what scan found under a prefix.
type refScan struct {
	refs map[RefName]oid.ID // each ref's value; a loose file overrides packed-refs
	// packedTwice counts the lines of each ref packed-refs names more
	// than once. git 2.39 answers such a ref with one of its lines, the one
	// its binary search lands on (the last of two, the middle of three),
	// and for-each-ref lists it once per line: it is damage, not a value.
	packedTwice map[RefName]int
	loose       map[RefName]bool // the refs that have a loose file
}

func (r *Refs) scan(prefix string) (*refScan, error) {
	out := &refScan{refs: map[RefName]oid.ID{}, packedTwice: map[RefName]int{}, loose: map[RefName]bool{}}
	// The loose refs are read first and packed-refs second, as git reads
	// them (files_ref_iterator_begin in refs/files-backend.c, since its
	// 2013 "for_each_ref: load all loose refs before packed refs"): a ref
	// that exists throughout the scan is then never missed. Every writer
	// keeps each ref, at every instant, in a loose file or in packed-refs:
	//
	//   - git pack-refs renames the new packed-refs into place before it
	//     deletes any loose file it packed (and removes a directory only
	//     once it has emptied it);
	//   - an update renames its lock over the loose file, which so never
	//     goes missing;
	//   - a delete (git's, and ours in deleteLocked) drops the ref from
	//     packed-refs first and its loose file last, and a rewrite of
	//     packed-refs drops no other ref.
	//
	// So a ref whose loose file the walk did not find (the file, or its
	// directory, gone when read) was in packed-refs at that instant, and
	// is still there when packed-refs is read afterwards. Read the other
	// way round, pack-refs can move a ref from its loose file into
	// packed-refs between the two reads: neither read sees it (a held
	// swarm lease listed as free), or packed-refs, read first, gives an
	// older value the loose file hid. In this order every value listed
	// is one the ref held during the scan: its loose file as the walk read
	// it, else its packed line (with no loose file when the walk looked,
	// the packed line was the ref's value then, and pack-refs changes it
	// after only to a value the ref held then). A ref created or deleted
	// during the scan may be listed or not.
	dir := prefix[:strings.LastIndexByte(prefix, '/')+1]
	if !strings.HasPrefix(dir, "refs/") {
		// Only the directory the prefix names is walked ("refs/notes/"
		// for "refs/notes/nwdes", which is no directory's name; all of
		// refs/ for a prefix outside it).
		dir = "refs/"
	}
	err := r.walkLoose(dir, func(name RefName) error {
		if !strings.HasPrefix(string(name), prefix) {
			return nil
		}
		h, found, err := r.readLoose(name)
		if err != nil {
			return err
		}
		if found {
			out.refs[name] = h
			out.loose[name] = true
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list refs under %s: %w", prefix, err)
	}
	if r.betweenScans != nil {
		r.betweenScans()
	}
	f, err := os.Open(filepath.Join(r.dir, "packed-refs"))
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read packed-refs: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	seen := map[RefName]int{}
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' || line[0] == '^' {
			continue
		}
		i := strings.IndexByte(line, ' ')
		if i < 0 || !strings.HasPrefix(line[i+1:], prefix) {
			continue
		}
		id, ok := parseHex(r.f, line[:i])
		if !ok {
			return nil, malformedPacked(RefName(line[i+1:]))
		}
		name := RefName(line[i+1:])
		if seen[name]++; seen[name] > 1 {
			out.packedTwice[name] = seen[name]
		}
		if !out.loose[name] {
			out.refs[name] = id
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read packed-refs: %w", err)
	}
	return out, nil
}

// walkLoose calls fn with the name of each loose ref file under dir (a
// directory under the common directory, "refs/…/"), lock files left out;
// a directory that does not exist holds none.
func (r *Refs) walkLoose(dir string, fn func(RefName) error) error {
	return filepath.WalkDir(filepath.Join(r.dir, filepath.FromSlash(dir)), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() || strings.HasSuffix(p, ".lock") {
			return nil
		}
		rel, _ := filepath.Rel(r.dir, p)
		return fn(RefName(filepath.ToSlash(rel)))
	})
}

// SortedNames returns the keys of a ref map in order.
func SortedNames[V any](m map[RefName]V) []RefName {
	names := make([]RefName, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return names[i] < names[j] })
	return names
}

// CompareAndSwap moves name from old to new. A zero old means "must not
// exist"; a zero new means "delete". It returns ErrConflict (wrapped) when
// the ref does not hold old, and a LockHeld refusal when another writer's
// lock outlives LockTimeout. Nothing is changed on any error.
func (r *Refs) CompareAndSwap(name RefName, old, new oid.ID) error {
	if err := checkIDs(r.f, old, new); err != nil {
		return err
	}
	return r.compareAndSwap(name, old, new, nil)
}

// compareAndSwap is CompareAndSwap with a hook run under the lock, once the
// ref is known to hold old, after the new value is written and before the
// rename: MoveRef publishes the update's pack there (and in durable mode
// syncs it), while the lock file is synced concurrently.
func (r *Refs) compareAndSwap(name RefName, old, new oid.ID, beforeRename func() error) error {
	if err := name.Validate(); err != nil {
		return err
	}
	lock, err := r.lock(name)
	if err != nil {
		return err
	}
	defer lock.release()
	cur, err := r.read(name)
	if err != nil {
		return err
	}
	if cur != old {
		return &ConflictError{Ref: name, Expected: old, Actual: cur}
	}
	if new.IsZero() {
		return r.deleteLocked(name, lock)
	}
	return lock.commit(new, r.Durable, beforeRename)
}

type refLock struct {
	path, target string
	f            *os.File
	done         bool
}

// lock creates <ref>.lock exclusively, waiting with backoff while another
// writer holds it, as git does for core.filesRefLockTimeout.
//
// git pack-refs --prune (and so git gc) removes the directories it
// emptied: between making the lock's directory and opening the lock in
// it, or while its parents are made, a directory can vanish. Then it is
// made again and the open retried, at most dirVanished times in a row, as
// git's raceproof_create_file (object-file.c) does for its own locks.
func (r *Refs) lock(name RefName) (*refLock, error) {
	target := filepath.Join(r.dir, filepath.FromSlash(string(name)))
	p := target + ".lock"
	deadline := time.Now().Add(r.LockTimeout)
	wait := 200 * time.Microsecond
	vanished := 0
	mkdir := true
	for {
		if mkdir {
			err := os.MkdirAll(filepath.Dir(p), 0o777)
			if errors.Is(err, fs.ErrNotExist) && vanished < dirVanished {
				vanished++ // a parent went between MkdirAll's steps
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("lock %s: %w", name, err)
			}
			mkdir = false
		}
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if err == nil {
			return &refLock{path: p, target: target, f: f}, nil
		}
		if errors.Is(err, fs.ErrNotExist) && vanished < dirVanished {
			vanished++
			mkdir = true
			continue
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("lock %s: %w", name, err)
		}
		// The directory was there: a vanishing after this wait is
		// another race, counted afresh (the deadline bounds the whole).
		vanished = 0
		if time.Now().After(deadline) {
			return nil, r.heldLock(name, p)
		}
		time.Sleep(Jitter(wait))
		if wait < 20*time.Millisecond {
			wait *= 2
		}
	}
}

// dirVanished is how many times in a row lock makes the lock's directory
// again after it vanished (git's create_directories_remaining): a racer
// that removes it each time is fought no further.
const dirVanished = 3

func (r *Refs) heldLock(name RefName, p string) error {
	fi, err := os.Stat(p)
	age := "unknown"
	stale := false
	if err == nil {
		d := r.Now().Sub(fi.ModTime())
		age = d.Round(time.Second).String()
		stale = d > r.StaleAfter
	}
	e := refusal.New(refusal.LockHeld,
		fmt.Sprintf("wait for the other git or nwdes process to finish; if none is running, a crashed writer left the lock: remove %s", p),
		"ref %s is locked by %s (held for %s)", name, p, age)
	if stale {
		e.Name = "StaleLock"
		e.Detail = fmt.Sprintf("ref %s is locked by %s, left %s ago, probably by a writer that crashed", name, p, age)
		e.Remedy = fmt.Sprintf("make sure no git or nwdes process is writing to this repository, then remove %s", p)
	}
	e.Err = ErrLocked
	return e
}

func (l *refLock) commit(h oid.ID, durable bool, beforeRename func() error) error {
	if _, err := l.f.WriteString(h.String() + "\n"); err != nil {
		return fmt.Errorf("write %s: %w", l.path, err)
	}
	// In durable mode the lock file is fsynced concurrently with the hook
	// (which syncs the objects the new value names): both must reach the
	// disk before the rename, in no order between them, and a journalling
	// file system commits concurrent fsyncs together.
	var synced chan error
	if durable {
		synced = make(chan error, 1)
		go func() { synced <- l.f.Sync() }()
	}
	var hookErr error
	if beforeRename != nil {
		hookErr = beforeRename()
	}
	if synced != nil {
		if err := <-synced; err != nil && hookErr == nil {
			hookErr = fmt.Errorf("sync %s: %w", l.path, err)
		}
	}
	if hookErr != nil {
		return hookErr
	}
	if err := l.f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", l.path, err)
	}
	l.f = nil
	if err := os.Rename(l.path, l.target); err != nil {
		return fmt.Errorf("rename %s: %w", l.path, err)
	}
	l.done = true
	if durable {
		if err := syncDir(filepath.Dir(l.target)); err != nil {
			// The ref has moved; only its durability is in doubt. Saying
			// the update failed would invite a retry that repeats it.
			return &NotDurableError{Ref: l.target, Err: err}
		}
	}
	return nil
}

// NotDurableError reports an update that was applied (the ref moved) but
// could not be synced to disk afterwards.
type NotDurableError struct {
	Ref string
	Err error
}

func (e *NotDurableError) Error() string {
	return fmt.Sprintf("%s was updated, but syncing it to disk failed (the update may not survive a power loss): %v", e.Ref, e.Err)
}

func (e *NotDurableError) Unwrap() error { return e.Err }

func (l *refLock) release() {
	if l.f != nil {
		l.f.Close()
	}
	if !l.done {
		os.Remove(l.path)
	}
}

// deleteLocked removes a ref while its own lock is held, as git does
// (files_transaction_finish): it takes packed-refs.lock, replaces
// packed-refs with one without the ref, removes the loose file, and only
// then releases packed-refs.lock. The lock is taken even when the ref
// looks unpacked, and held until the loose file is gone, because a
// concurrent git pack-refs could otherwise pack the loose value after
// packed-refs was rewritten and bring the deleted ref back. So, as git's
// packed backend does (its packed-refs.new), the new packed-refs is
// written to a file of its own and renamed into place, never the lock
// file itself, whose rename would release the lock before the unlink.
// The lock waits longer than a ref's, as git's core.packedRefsTimeout
// does.
//
// In durable mode the new packed-refs is fsynced before its rename and
// the common directory after it, and the loose file's directory after
// the unlink: the packed line is gone for good before the loose file
// goes, so a power loss leaves the ref deleted or whole (its loose value
// over packed-refs), never its older packed value.
func (r *Refs) deleteLocked(name RefName, lock *refLock) error {
	pl := &Refs{dir: r.dir, f: r.f, LockTimeout: 5 * r.LockTimeout, StaleAfter: r.StaleAfter, Now: r.Now}
	plock, err := pl.lock("packed-refs")
	if err != nil {
		return err
	}
	defer plock.release()
	var notDurable error
	if err := r.removePacked(name); err != nil {
		var nd *NotDurableError
		if !errors.As(err, &nd) {
			return err
		}
		// packed-refs no longer names the ref: the loose file must go
		// too, or the delete would be half done.
		notDurable = err
	}
	if r.beforeLooseRemove != nil {
		r.beforeLooseRemove()
	}
	err = os.Remove(lock.target)
	if errors.Is(err, fs.ErrNotExist) {
		return notDurable
	}
	if err != nil {
		return fmt.Errorf("delete ref %s: %w", name, err)
	}
	if r.Durable && notDurable == nil {
		if err := syncDir(filepath.Dir(lock.target)); err != nil {
			return &NotDurableError{Ref: lock.target, Err: err}
		}
	}
	return notDurable
}

// removePacked replaces packed-refs with one without name, if it names
// it; the caller holds packed-refs.lock. A NotDurableError means
// packed-refs was replaced but the directory's sync failed.
func (r *Refs) removePacked(name RefName) error {
	packed := filepath.Join(r.dir, "packed-refs")
	b, err := os.ReadFile(packed)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read packed-refs: %w", err)
	}
	// A cheap look before the line-by-line one below, which also finds
	// the ref on a last line with no newline (git reads that file too).
	if !bytes.Contains(b, []byte(" "+string(name))) {
		return nil
	}
	var out bytes.Buffer
	lines := bytes.SplitAfter(b, []byte("\n"))
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if hl := r.f.HexLen(); len(l) > hl+1 && l[hl] == ' ' && string(bytes.TrimRight(l[hl+1:], "\n")) == string(name) {
			// Drop the peeled line that belongs to it, if any.
			if i+1 < len(lines) && len(lines[i+1]) > 0 && lines[i+1][0] == '^' {
				i++
			}
			continue
		}
		out.Write(l)
	}
	// A name of its own, not git's packed-refs.new: one a killed writer
	// left would make git's next write of packed-refs fail. Created as the
	// lock file was (0666 less the umask), as git creates packed-refs.
	tmp, err := os.OpenFile(filepath.Join(r.dir, fmt.Sprintf("packed-refs.nwdes-%016x", rand.Uint64())), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return fmt.Errorf("write packed-refs: %w", err)
	}
	renamed := false
	defer func() {
		if !renamed {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(out.Bytes()); err != nil {
		return fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if r.Durable {
		if err := tmp.Sync(); err != nil {
			return fmt.Errorf("sync %s: %w", tmp.Name(), err)
		}
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), packed); err != nil {
		return fmt.Errorf("rename %s over packed-refs: %w", tmp.Name(), err)
	}
	renamed = true
	if r.Durable {
		if err := syncDir(r.dir); err != nil {
			return &NotDurableError{Ref: packed, Err: err}
		}
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

func malformedPacked(name RefName) error {
	return refusal.NewUnreadable(refusal.RefUnreadable,
		"repair packed-refs (restore the line from a good clone, or delete it and git nwdes fetch), then run git nwdes fsck",
		"packed-refs has a malformed line for %s", name)
}

func duplicatePacked(name RefName, lines int) error {
	return refusal.NewUnreadable(refusal.RefUnreadable,
		"keep one line for the ref in packed-refs (the value a good clone holds), then run git nwdes fsck",
		"packed-refs has more than one line for %s (%d): git reads one or another of them, so it holds no one value", name, lines)
}

// Jitter is a wait of about d (between d/2 and 3d/2), so that writers
// that collided do not retry in step.
func Jitter(d time.Duration) time.Duration {
	return d/2 + time.Duration(rand.Int64N(int64(d)+1))
}
