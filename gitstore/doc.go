// Package gitstore keeps nwdes's state as git objects under custom refs.
//
// A Store holds typed records (canonical JSON plus byte payloads) in the
// trees of a few refs under refs/nwdes/, and notes under refs/notes/nwdes in
// git's own notes layout. Every change is one commit whose parent is the
// ref's tip (or no parent, on a ref that keeps only its latest state), and
// the ref moves only by compare-and-swap, implemented with
// git's own lock-file protocol (Refs) so that nwdes and git exclude one
// another. Records are grouped under a bounded set of refs whose trees hold
// many entries, because every git push lists every remote ref.
//
// A Store opens a gitrepo.Location (gitrepo finds repositories and reads
// their configuration as git does; go-git's open does not, so nothing here
// uses it). Resolve parses revisions as git
// rev-parse does (the subset nwdes needs, refusing the rest). Reads go
// through odb, which looks objects up in pack indexes without decoding them
// whole, so a short-lived process (the pre-push hook) starts fast; writes go
// through go-git's loose-object writer. Sync moves nwdes refs between clones
// through the git binary (the only place gitstore runs git), merging both
// sides' records.
//
// Layering: gitstore imports go-git's plumbing and filesystem storage,
// golang.org/x/sys, gitstore/odb, gitstore/gitrepo, gitstore/oid,
// gitstore/treemerge, nwdes/refusal and nwdes/internal/text only; none of
// those imports gitstore.
// It knows no record kinds of its own: the packages that store records
// (examine, …) declare them, and the refs that hold them with each ref's
// sync policy, in a Registry (kinds.go); SwapRemote is the swap
// policy's compare-and-swap on a remote.
package gitstore
