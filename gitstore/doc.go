// Package gitstore keeps nwdes's state as records in git, under custom refs.
//
// A Store holds typed records (canonical JSON plus byte payloads) in the
// trees of a few refs under refs/nwdes/, and notes under refs/notes/nwdes in
// git's own notes layout. Every change is one commit whose parent is the
// ref's tip (or no parent, on a ref that keeps only its latest state), and
// the ref moves only by compare-and-swap (Update), so that nwdes and git
// exclude one another. Records are grouped under a bounded set of refs
// whose trees hold many entries, because every git push lists every remote
// ref. Append-only refs have their history checked against a checkpoint
// (history.go), and Fsck re-reads every record.
//
// A Store holds a *git.Repo (gitstore/git, returned by Git): the git
// layer writes the objects (its own pack and loose-object writers, no
// go-git writer), moves refs with git's lock protocol, and reads history
// (revisions, merge bases, parents, commit metadata). The store adds what
// records mean: kinds and refs declared in a Registry, transactions (Tx),
// notes, history checks and fsck of records. Its reading methods (Resolve,
// MergeBases, ReadFile, …) hand the question to the git layer unchanged,
// and RefName, Refs and the ref and object errors are the git layer's own
// (git.go). Moving refs between clones is gitstore/remote's job (the
// Replicator role, roles.go); the store gives it Integrate and Prepare.
//
// Layering: gitstore imports gitstore/git, gitstore/gitrepo, gitstore/oid,
// nwdes/refusal and nwdes/internal/text, and no go-git; none of those
// imports gitstore. gitstore/remote, gitstore/stage and gitstore/memstore
// import it, never the other way.
// It knows no record kinds of its own: the packages that store records
// (examine, …) declare them, and the refs that hold them with each ref's
// sync policy, in a Registry (kinds.go).
package gitstore
