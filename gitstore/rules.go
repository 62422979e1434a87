package gitstore

// The rules of records that every implementation of the roles applies the
// same way, exported so that what is built on the store (gitstore/remote's
// merge) reads records and refs as the store does.

// IsNotes reports a notes ref: NotesRef, or one declared Notes.
func (r *Registry) IsNotes(ref RefName) bool { return r.isNotes(ref) }

// PathParts splits a slash-separated record path, refusing an empty, ".",
// ".." or ".git" component (PathInvalid).
func PathParts(p string) ([]string, error) { return splitPath(p) }

// DecodeRecord reads a record.json, refusing unknown fields and
// non-canonical JSON.
func DecodeRecord(b []byte) (*Record, error) { return decodeRecord(b) }
