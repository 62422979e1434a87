package gitstore

import (
	"context"
	"time"

	"github.com/nwdes/nwdes/gitstore/git"
	"github.com/nwdes/nwdes/gitstore/oid"
)

// The git layer as the record store shows it. A Store holds a *git.Repo
// (Git returns it): objects, refs and the algorithms that read history
// live there, and know nothing of records. The names below keep the
// store's vocabulary in one place for the packages built on it: refs,
// modes and the errors they branch on are the git layer's own values
// (aliases, not copies, so errors.Is and conversions hold across both),
// and the reading methods hand the question to the git layer unchanged.

// RefName is a full reference name such as refs/nwdes/examine.
type RefName = git.RefName

// Refs moves references with git's own lock protocol (see git.Refs).
type Refs = git.Refs

// NewRefs returns the ref mover for a common git directory.
func NewRefs(commonDir string) *Refs { return git.NewRefs(commonDir) }

// SortedNames returns the keys of a ref map in order.
func SortedNames[V any](m map[RefName]V) []RefName { return git.SortedNames(m) }

// Git tree entry modes nwdes distinguishes.
const (
	ModeTree    = git.ModeTree
	ModeFile    = git.ModeFile
	ModeExec    = git.ModeExec
	ModeSymlink = git.ModeSymlink
	ModeGitlink = git.ModeGitlink
)

// Errors of the git layer callers branch on (see git.ErrConflict, …).
var (
	ErrConflict      = git.ErrConflict
	ErrLocked        = git.ErrLocked
	ErrNotFound      = git.ErrNotFound
	ErrObjectMissing = git.ErrObjectMissing
)

type (
	// ConflictError says what a compare-and-swap expected and found.
	ConflictError = git.ConflictError
	// NotDurableError is an applied update whose sync failed.
	NotDurableError = git.NotDurableError
	// File is one file read from a commit's tree.
	File = git.File
	// CommitMeta is who made a commit and when.
	CommitMeta = git.CommitMeta
	// AdoptLimits bound what Adopt copies from another repository.
	AdoptLimits = git.AdoptLimits
	// Adopted is what Adopt copied.
	Adopted = git.Adopted
	// AdoptError says why Adopt refused what it read.
	AdoptError = git.AdoptError
	// PartialClone tells a store its repository is a partial clone.
	PartialClone = git.PartialClone
)

// GitEnv filters environ down to what git needs (see git.GitEnv).
func GitEnv(environ []string) []string { return git.GitEnv(environ) }

// Git returns the repository the store keeps its records in.
func (s *Store) Git() *git.Repo { return s.git }

// Refs returns the ref mover the store uses.
func (s *Store) Refs() *Refs { return s.refs }

// Resolve parses a revision as git rev-parse does (see git.Repo.Resolve).
func (s *Store) Resolve(rev string) (oid.ID, error) { return s.git.Resolve(rev) }

// MergeBases returns the best common ancestors of a and b.
func (s *Store) MergeBases(a, b oid.ID) ([]oid.ID, error) { return s.git.MergeBases(a, b) }

// IsAncestor reports whether anc is reachable from desc.
func (s *Store) IsAncestor(anc, desc oid.ID) (bool, error) { return s.git.IsAncestor(anc, desc) }

// Parents returns a commit's parents, in order, and its committer time.
func (s *Store) Parents(commit oid.ID) ([]oid.ID, time.Time, error) { return s.git.Parents(commit) }

// CommitMeta reads who made commit and when.
func (s *Store) CommitMeta(commit oid.ID) (CommitMeta, error) { return s.git.CommitMeta(commit) }

// ReadFile returns the committed file at path in commit's tree.
func (s *Store) ReadFile(commit oid.ID, path string) (File, error) {
	return s.git.ReadFile(commit, path)
}

// Walk calls fn for every file in commit's tree, in order.
func (s *Store) Walk(commit oid.ID, fn func(path string, mode uint32, blob oid.ID) error) error {
	return s.git.Walk(commit, fn)
}

// ReadBlob returns a blob's content by id.
func (s *Store) ReadBlob(id oid.ID) ([]byte, error) { return s.git.ReadBlob(id) }

// ChangedPaths lists the files that differ between two commits' trees.
func (s *Store) ChangedPaths(from, to oid.ID, limit int) ([]string, int, error) {
	return s.git.ChangedPaths(from, to, limit)
}

// FetchMissing brings, in a partial clone, what the commits reach and the
// clone lacks (see git.Repo.FetchMissing).
func (s *Store) FetchMissing(ctx context.Context, commits ...oid.ID) error {
	return s.git.FetchMissing(ctx, commits...)
}
