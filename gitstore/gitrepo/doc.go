// Package gitrepo finds a git repository and reads its configuration the way
// git does, without running git: Discover follows GIT_DIR, GIT_WORK_TREE,
// GIT_COMMON_DIR, gitfiles, linked worktrees, bare repositories and
// GIT_CEILING_DIRECTORIES (go-git's open does not), and refuses the formats
// nwdes cannot read (reftable refs, an object format other than SHA-1 and
// SHA-256) by name; ObjectFormat says which hash function names a
// repository's objects (extensions.objectFormat); ReadConfig reads every
// scope in git 2.39's order with its file syntax, includes and includeIf,
// held to `git config --list` by differential tests and a fuzz target.
//
// Layering: imports the standard library, gitstore/oid (the object format)
// and nwdes/refusal only — no go-git, nothing else of gitstore — so that the
// hook and every verb can locate and configure a repository before any
// object is read. gitstore imports it, never the other way round.
package gitrepo
