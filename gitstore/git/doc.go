// Package git is nwdes's git layer: a repository's objects and refs, and
// the algorithms that read its history, with no knowledge of records.
//
// A Repo opens a gitrepo.Location. Objects are read through odb, which
// looks them up in pack indexes without decoding them whole, so a
// short-lived process (the pre-push hook) starts fast. Objects are written
// by nwdes's own writers: the objects of one update as one pack (Batch,
// Stage; packwrite.go), single objects (a merge's) as loose files
// (objects.go: a temporary file in objects/xx, then a rename); small packs
// are consolidated geometrically (consolidate.go). No go-git writer is
// used. Refs move by compare-and-swap with git's own lock-file protocol
// (Refs, MoveRef), which publishes the update's pack under the ref's lock,
// so that nwdes and git exclude one another and a crash leaves the old
// value or the new one. Revisions are parsed as git rev-parse does (the
// subset nwdes needs, refusing the rest); merge bases and ancestry are
// walked with the commit-graph's generations when there is one; commit
// metadata and parents are read in process. In a partial clone a read
// that misses asks the promisor remotes as git's own reads do
// (promisor.go); Run is the one way this layer starts git, and transport
// (gitstore/remote) asks it too.
//
// The API and the internals speak oid.ID, in the repository's object
// format (Repo.Format, from extensions.objectFormat): SHA-1 and SHA-256
// repositories alike, one binary. Refs, commits, trees, tags, packs, their
// indexes and the commit-graph (graph.go, nwdes's own reader) are read and
// written at the format's id size with its hash function; an id of the
// other format is refused by name (UnsupportedRepository, ids.go), never
// cut or padded. Tree and commit codecs (TreeEntry, Commit, EncodeTree,
// DecodeCommit, …) are exported for the record store above.
//
// Layering: imports go-git's plumbing (object type names only),
// github.com/pjbgf/sha1cd (SHA-1 with collision detection, as git),
// golang.org/x/sys, gitstore/odb, gitstore/gitrepo, gitstore/oid,
// nwdes/refusal and nwdes/internal/text only; none of those imports it,
// and nothing here imports gitstore (records) or gitstore/remote.
package git
