package gitstore

import (
	"strings"

	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/internal/names"
	"github.com/nwdes/nwdes/refusal"
)

// The rules of records that every implementation of the roles applies the
// same way, exported so that one that does not keep git objects (memstore)
// refuses what the git store refuses, by the same names and remedies, and
// so that what is built on the store (gitstore/remote's merge) reads
// records and refs as the store does.

// Writable is the declaration of ref for a local update (Change, Update):
// refused by name, as Update refuses it, when the name is invalid
// (RefNameInvalid), nothing declares it (RefNotDeclared), it is a swap ref
// (decided on the remote) or a checkpoint (PolicyRefused).
func (r *Registry) Writable(ref RefName) (RefSpec, error) {
	if err := ref.Validate(); err != nil {
		return RefSpec{}, err
	}
	spec, err := r.refFor(ref)
	if err != nil {
		return RefSpec{}, err
	}
	if spec.Policy == PolicySwap {
		return RefSpec{}, refusal.New(refusal.PolicyRefused,
			"move it with SwapRemote (a compare-and-swap on the remote); a fetch mirrors the remote's value here",
			"%s is declared swap: it is decided on the remote, never by a local update", ref)
	}
	if strings.HasPrefix(string(ref), CheckpointPrefix) {
		return RefSpec{}, refusal.New(refusal.PolicyRefused,
			"checkpoints move only when a history check passes (Store.CheckHistory)",
			"%s is a checkpoint, not a ref of records", ref)
	}
	return spec, nil
}

// CheckRecord refuses rec at path in a ref declared spec as Tx.Put does: a
// kind not declared for the ref, or newer than declared (KindNotDeclared),
// a bad payload name (PathInvalid), over maxBytes (RecordTooLarge). It
// returns the record.json the record is stored as.
func (r *Registry) CheckRecord(spec RefSpec, path string, rec *Record, maxBytes int) ([]byte, error) {
	if err := r.kindFor(spec, rec.Kind, rec.V); err != nil {
		return nil, err
	}
	enc, err := rec.encode()
	if err != nil {
		return nil, err
	}
	if n := rec.size(enc); n > maxBytes {
		return nil, refusal.New(refusal.RecordTooLarge,
			"store less (for command output keep a digest and a bounded tail), or raise nwdes.maxRecordBytes",
			"record %s is %d bytes, over the limit of %d bytes", path, n, maxBytes)
	}
	for name := range rec.Payloads {
		if !names.Valid(name, maxPayloadName) {
			return nil, refusal.New(refusal.PathInvalid, "name payloads with letters, digits, '.', '_' and '-'",
				"payload name %q is not allowed", name)
		}
	}
	return enc, nil
}

// IsNotes reports a notes ref: NotesRef, or one declared Notes.
func (r *Registry) IsNotes(ref RefName) bool { return r.isNotes(ref) }

// Seal ends declarations, as opening a store does: every kind a ref names
// must be declared, and nothing more is declared afterwards.
func (r *Registry) Seal() error { return r.freeze() }

// AppendOnly reports whether updates of the ref keep every file under its
// Immutable directories (RecordImmutable otherwise).
func (spec RefSpec) AppendOnly() bool { return appendOnly(spec) }

// PathParts splits a slash-separated record path, refusing an empty, ".",
// ".." or ".git" component (PathInvalid).
func PathParts(p string) ([]string, error) { return splitPath(p) }

// DecodeRecord reads a record.json, refusing unknown fields and
// non-canonical JSON.
func DecodeRecord(b []byte) (*Record, error) { return decodeRecord(b) }

// Retries reports whether an update given opts retries after a conflict
// (no NoRetry among them).
func Retries(opts ...UpdateOption) bool {
	var cfg updateConfig
	for _, o := range opts {
		o(&cfg)
	}
	return !cfg.noRetry
}

// NotePath is where a new note on commit goes: git's one-level fanout.
func NotePath(commit oid.ID) string { return notePaths(commit)[0] }

// ImmutableRefused is the refusal of an update that would remove (gone) or
// change path under an Immutable directory of ref.
func ImmutableRefused(ref RefName, spec RefSpec, path string, gone bool) error {
	verb := "change"
	if gone {
		verb = "remove"
	}
	return refusal.New(refusal.RecordImmutable,
		"write a new record instead: what is under "+strings.Join(spec.Immutable, ", ")+" is written once",
		"%s: the update would %s %s, which is append-only", ref, verb, path)
}

// RecordTreeDir is where, beside record.json, a record keeps its tree.
const RecordTreeDir = recordTreeDir

// LayoutRefused is the refusal of an update that would leave ref's tree
// outside its declared layout; what says how.
func LayoutRefused(ref RefName, what string) error {
	return refusal.New(refusal.PathInvalid, "write under one of the ref's declared directories", "%s: %s", ref, what)
}
