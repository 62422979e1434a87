// Package gitstore keeps nwdes's state as git objects under custom refs.
//
// A Store holds typed records (canonical JSON plus byte payloads) in the
// trees of a few refs under refs/nwdes/, and notes under refs/notes/nwdes in
// git's own notes layout. Every change is one commit whose parent is the
// ref's tip, and the ref moves only by compare-and-swap, implemented with
// git's own lock-file protocol (Refs) so that nwdes and git exclude one
// another. Records are grouped under a bounded set of refs whose trees hold
// many entries, because every git push lists every remote ref.
//
// Discover finds a repository as git does (GIT_DIR, GIT_WORK_TREE,
// GIT_COMMON_DIR, gitfiles, linked worktrees, bare repositories); go-git's
// open does not, so nothing here uses it.
//
// Layering: gitstore imports go-git (object storage), golang.org/x/sys and
// nwdes/refusal only. It knows no record kinds of its own; the packages that
// store records (examine, swarm, …) declare them.
package gitstore
