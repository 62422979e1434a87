package gitstore

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/refusal"
)

// A Registry declares, once, every kind of record a program stores and
// every ref it keeps them under: per kind its newest version, its fsck
// check and its merge rule; per ref its sync policy, whether its history is
// kept, and the layout of its tree. The store reads everything from it:
// sync takes each ref's policy from here (no caller passes one, so none can
// forget it), fsck the checks, the merge the rules, and an update of a ref
// or a record of a kind nobody declared is refused rather than written
// where no rule would later apply.
//
// A Registry is built before the store is opened and not changed after.
type Registry struct {
	kinds map[Kind]KindSpec
	refs  map[RefName]RefSpec // exact names, and families (names ending in "/")
	// frozen is set when a store opens with the registry: it is read by
	// every goroutine from then on and declares nothing more.
	mu     sync.Mutex
	frozen bool
}

// KindSpec declares one kind of record.
type KindSpec struct {
	Kind Kind
	// Version is the newest version readers understand; a record with a
	// newer one is refused (fsck names it).
	Version int
	// Check is fsck's further check of each well-formed record of the kind
	// (its own invariants), given a view of the commit it was found at.
	Check func(v View, path string, r *Record) error
	// Merge decides a record of this kind both clones changed (both sides
	// hold this kind); nil keeps the one whose bytes sort last
	// (DefaultResolve).
	Merge Resolver
}

// SyncPolicy is how a ref moves between clones.
type SyncPolicy string

const (
	// PolicyMerge fetches and merges: fast-forward when behind, otherwise
	// a merge commit whose tree is the three-way union of both sides
	// (records both changed are decided by their kind's Merge rule). Push
	// sends the merged result. For examinations and gate evidence.
	PolicyMerge SyncPolicy = "merge"
	// PolicyFastForward moves only forward: fetch fast-forwards or leaves
	// a ref that is ahead, and a diverged ref (each side has commits the
	// other lacks) is refused (ChainDiverged) naming both tips, never
	// merged. For hash-chained ledgers.
	PolicyFastForward SyncPolicy = "fast-forward"
	// PolicyLocal is never pushed or fetched: the ref lives under
	// refs/nwdes-local/, which no refspec of nwdes carries. For a clone's
	// own drafts and local leases.
	PolicyLocal SyncPolicy = "local"
	// PolicySwap moves only by SwapRemote (gitstore/remote), one atomic push of the
	// one ref with the expected old value; losing the race is an answer
	// (ErrConflict with the remote's value), never something to merge.
	// Fetch mirrors the remote's value onto the local ref; Push leaves
	// these refs alone. For remote leases.
	PolicySwap SyncPolicy = "swap"
)

// History is what an update of a ref keeps.
type History string

const (
	// HistoryChain makes each update a commit whose parent is the previous
	// tip: history is the audit trail.
	HistoryChain History = "chain"
	// HistoryLatest makes each update a commit with no parent: only the
	// current state is kept, so a heartbeat or a lease renewal adds
	// nothing any later walk must cross, however many there are. The
	// replaced commits become unreachable and git gc prunes them. Only
	// PolicyLocal and PolicySwap refs may use it (a merge needs a base,
	// and a fast-forward a chain); it is the default of PolicySwap.
	HistoryLatest History = "latest"
)

// RefSpec declares one ref, or a family of refs by a name ending in "/"
// (refs/nwdes/leases/ declares every ref below it). An exact name wins
// over a family, and a longer family over a shorter one.
type RefSpec struct {
	Ref     RefName
	Policy  SyncPolicy
	History History // HistoryLatest for PolicySwap when empty, else HistoryChain
	// Layout names the top-level directories the ref's tree may hold. A
	// view of a tree holding anything else (a product commit pushed to
	// it, say) is refused, so that nothing reads it as empty and nothing
	// is written on top of it; fsck names it, and any file that is not
	// part of a record. Nil: not checked.
	Layout []string
	// Kinds are the kinds of record the ref may hold; nil allows every
	// declared kind.
	Kinds []Kind
	// Immutable names top-level directories whose files, once written,
	// are never changed or removed (published examinations, gate
	// evidence): a server refuses a push whose tree drops or alters one,
	// even as a fast-forward (see Store.Altered).
	Immutable []string
	// CheckNote, on a notes ref only, is fsck's check of each note at the
	// tip against the records it should be rendered from. fsck calls it
	// once per run and the function it returns for each note, so that one
	// snapshot of those records serves every note (a check that read them
	// afresh per note made fsck quadratic in the examinations).
	CheckNote func(s *Store) func(commit oid.ID, note []byte) error
	// Notes declares a notes ref besides NotesRef (git's notes layout,
	// under refs/notes/): a display ref such as refs/notes/commits, which
	// plain git log and forges read. It is pushed and fetched with the
	// rest; notes both clones changed are joined by MergeNote (given the
	// common base, nil when there was none), or concatenated when nil.
	Notes     bool
	MergeNote func(base, ours, theirs []byte) ([]byte, error)
	// Commit declares refs that name a commit nwdes did not write and
	// holds no records in (a worker's head, Store.Adopt): nothing reads
	// its tree as records, fsck checks only that the commit is there and
	// reads, and sync moves it as a fast-forward ref (policy fast-forward,
	// or local) without listing its history's objects. Such a ref has no
	// layout, kinds or immutable directories, and is no notes ref.
	Commit bool
}

// Family reports whether the spec declares every ref under a prefix.
func (r RefSpec) Family() bool { return strings.HasSuffix(string(r.Ref), "/") }

// NewRegistry returns a registry that declares the notes ref (merged:
// notes both clones changed are concatenated), then runs each declare
// function on it (each package that stores records has one, such as
// examine.Register).
func NewRegistry(declare ...func(*Registry) error) (*Registry, error) {
	r := &Registry{kinds: map[Kind]KindSpec{}, refs: map[RefName]RefSpec{}}
	r.refs[NotesRef] = RefSpec{Ref: NotesRef, Policy: PolicyMerge, History: HistoryChain}
	for _, d := range declare {
		if err := d(r); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// MustRegistry is NewRegistry for declarations fixed at compile time (in
// tests and examples): a conflicting declaration is a programming error.
func MustRegistry(declare ...func(*Registry) error) *Registry {
	r, err := NewRegistry(declare...)
	if err != nil {
		panic(err)
	}
	return r
}

// OpenRegistry declares every ref under refs/nwdes/ merged and every ref
// under refs/nwdes-local/ local, with kinds: what a store opened without a
// registry uses, so that library tests and tools that know no kinds can
// still read, write and sync.
func OpenRegistry(kinds ...KindSpec) func(*Registry) error {
	return func(r *Registry) error {
		for _, k := range kinds {
			if err := r.DeclareKind(k); err != nil {
				return err
			}
		}
		if err := r.DeclareRef(RefSpec{Ref: "refs/nwdes/", Policy: PolicyMerge}); err != nil {
			return err
		}
		return r.DeclareRef(RefSpec{Ref: LocalPrefix, Policy: PolicyLocal})
	}
}

// DeclareKind adds a kind. Declaring one twice is refused: two packages
// claiming one name would read each other's records.
func (r *Registry) DeclareKind(k KindSpec) error {
	if err := r.open(); err != nil {
		return err
	}
	if k.Kind == "" || k.Version < 1 {
		return fmt.Errorf("declare kind %q: a kind needs a name and a version of at least 1", k.Kind)
	}
	if _, dup := r.kinds[k.Kind]; dup {
		return fmt.Errorf("declare kind %q: declared twice", k.Kind)
	}
	r.kinds[k.Kind] = k
	return nil
}

// DeclareRef adds a ref or a family of refs, refusing combinations the
// store could not honour.
func (r *Registry) DeclareRef(spec RefSpec) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("declare ref %s: %s", spec.Ref, fmt.Sprintf(format, args...))
	}
	if err := r.open(); err != nil {
		return err
	}
	if spec.History == "" {
		// A lease renewal must not grow a chain unless asked to.
		spec.History = HistoryChain
		if spec.Policy == PolicySwap {
			spec.History = HistoryLatest
		}
	}
	name := strings.TrimSuffix(string(spec.Ref), "/")
	if err := RefName(name).Validate(); err != nil {
		return bad("%v", err)
	}
	local := strings.HasPrefix(string(spec.Ref), LocalPrefix)
	if spec.Notes && (!strings.HasPrefix(string(spec.Ref), "refs/notes/") || spec.Family() || spec.Ref == NotesRef || spec.Policy != PolicyMerge) {
		return bad("a notes ref is one ref under refs/notes/, other than %s, merged", NotesRef)
	}
	shared := strings.HasPrefix(string(spec.Ref), "refs/nwdes/") || spec.Ref == NotesRef || spec.Notes
	switch spec.Policy {
	case PolicyLocal:
		if !local {
			return bad("a local ref must be under %s, which nwdes never pushes or fetches", LocalPrefix)
		}
	case PolicyMerge, PolicyFastForward, PolicySwap:
		if !shared {
			return bad("a ref that travels between clones must be under refs/nwdes/")
		}
	default:
		return bad("unknown sync policy %q", spec.Policy)
	}
	switch spec.History {
	case HistoryChain:
	case HistoryLatest:
		if spec.Policy != PolicyLocal && spec.Policy != PolicySwap {
			return bad("history %q needs policy local or swap (a %s ref needs its chain)", spec.History, spec.Policy)
		}
	default:
		return bad("unknown history %q", spec.History)
	}
	if (spec.CheckNote != nil || spec.MergeNote != nil) && spec.Ref != NotesRef && !spec.Notes {
		return bad("only a notes ref holds notes")
	}
	if spec.Commit && (spec.Policy != PolicyFastForward && spec.Policy != PolicyLocal || spec.History != HistoryChain ||
		spec.Layout != nil || spec.Kinds != nil || spec.Immutable != nil || spec.Notes || spec.CheckNote != nil) {
		return bad("a commit ref is fast-forward or local, keeps its chain, and has no layout, kinds, immutable directories or notes")
	}
	for _, l := range spec.Layout {
		if l == "" || strings.ContainsAny(l, "/\x00") || l == "." || l == ".." {
			return bad("layout entry %q is not a directory name", l)
		}
	}
	if old, dup := r.refs[spec.Ref]; dup {
		// The notes ref is built in; its owner may add the fsck check of
		// the notes, once, and nothing else.
		addsCheck := spec.Ref == NotesRef && old.CheckNote == nil && spec.CheckNote != nil &&
			spec.Policy == PolicyMerge && spec.History == HistoryChain && spec.Layout == nil && spec.Kinds == nil
		if !addsCheck {
			return bad("declared twice")
		}
	}
	// git cannot hold refs/x and refs/x/y at once: an exact name and a
	// family of the same stem cannot both be declared.
	other := RefName(strings.TrimSuffix(string(spec.Ref), "/"))
	if !spec.Family() {
		other += "/"
	}
	if _, clash := r.refs[other]; clash {
		return bad("%s is declared too; git cannot hold both", other)
	}
	r.refs[spec.Ref] = spec
	return nil
}

// open refuses declarations once a store uses the registry.
func (r *Registry) open() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.frozen {
		return fmt.Errorf("the registry is in use by a store: declare everything before opening one")
	}
	return nil
}

// freeze ends declarations, checking what could only be checked once all
// are in: every kind a ref names is declared.
func (r *Registry) freeze() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.frozen {
		return nil
	}
	for _, spec := range r.refs {
		for _, k := range spec.Kinds {
			if _, ok := r.kinds[k]; !ok {
				return fmt.Errorf("declare ref %s: kind %q is not declared", spec.Ref, k)
			}
		}
	}
	r.frozen = true
	return nil
}

// Kind returns a kind's declaration.
func (r *Registry) Kind(k Kind) (KindSpec, bool) {
	spec, ok := r.kinds[k]
	return spec, ok
}

// Ref returns the declaration that governs ref: its own, else the longest
// family it belongs to.
func (r *Registry) Ref(ref RefName) (RefSpec, bool) {
	if spec, ok := r.refs[ref]; ok && !spec.Family() {
		return spec, true
	}
	best, found := RefSpec{}, false
	for name, spec := range r.refs {
		if spec.Family() && strings.HasPrefix(string(ref), string(name)) && len(name) > len(best.Ref) {
			best, found = spec, true
		}
	}
	return best, found
}

// Kinds lists the declared kinds, sorted.
func (r *Registry) Kinds() []KindSpec {
	out := make([]KindSpec, 0, len(r.kinds))
	for _, k := range r.kinds {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Kind < out[j].Kind })
	return out
}

// Refs lists the declared refs and families, sorted by name.
func (r *Registry) Refs() []RefSpec {
	out := make([]RefSpec, 0, len(r.refs))
	for _, s := range r.refs {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Ref < out[j].Ref })
	return out
}

// refFor is the store's lookup: an undeclared ref is refused by name.
func (r *Registry) refFor(ref RefName) (RefSpec, error) {
	spec, ok := r.Ref(ref)
	if !ok {
		return RefSpec{}, refusal.New(refusal.RefNotDeclared,
			"use a ref the program declares (docs/data-model.md lists them), or upgrade nwdes if a newer one wrote it",
			"no kind of record is declared for %s", ref)
	}
	return spec, nil
}

// kindFor checks that a record of kind k may be stored in ref.
func (r *Registry) kindFor(ref RefSpec, k Kind, v int) error {
	spec, ok := r.kinds[k]
	switch {
	case !ok:
		return refusal.New(refusal.KindNotDeclared, "store only the kinds the program declares",
			"record kind %q is not declared", k)
	case v > spec.Version:
		return refusal.New(refusal.KindNotDeclared, "upgrade nwdes to one that writes this version",
			"record %s v%d is newer than the v%d declared", k, v, spec.Version)
	case ref.Kinds != nil && !containsKind(ref.Kinds, k):
		return refusal.New(refusal.KindNotDeclared, "store the record in a ref declared for its kind",
			"%s does not hold records of kind %q", ref.Ref, k)
	}
	return nil
}

func containsKind(list []Kind, k Kind) bool {
	for _, x := range list {
		if x == k {
			return true
		}
	}
	return false
}

// Resolve decides a record both sides of a merge changed: by the kind's
// own rule when both hold the same kind, else by bytes.
func (r *Registry) Resolve(ref RefName, path string, ours, theirs *Record) (Side, error) {
	if ours.Kind == theirs.Kind {
		if spec, ok := r.kinds[ours.Kind]; ok && spec.Merge != nil {
			return spec.Merge(ref, path, ours, theirs)
		}
	}
	return DefaultResolve(ref, path, ours, theirs)
}

// NotesRefs are the notes refs declared besides NotesRef, sorted.
func (r *Registry) NotesRefs() []RefName {
	var out []RefName
	for name, spec := range r.refs {
		if spec.Notes {
			out = append(out, name)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// isNotes reports a notes ref: NotesRef or one declared Notes.
func (r *Registry) isNotes(ref RefName) bool {
	if ref == NotesRef {
		return true
	}
	spec, ok := r.refs[ref]
	return ok && spec.Notes
}
