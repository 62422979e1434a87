// Package stage makes a work tree a program can work in as in any clone:
// a repository whose objects are borrowed from another one's (through
// objects/info/alternates: nothing copied, no network), HEAD on a branch
// at a commit, the committed files written and an index that matches
// them. The swarm stages each job's checkout with it.
//
// The index is written by nwdes's own encoder (index.go, git's version 2
// format) at the repository's object format, 20 or 32 bytes an id, with
// the trailing checksum in that format's hash, and a SHA-256 repository's
// checkout says so in its config (format version 1, extensions.objectformat)
// as git init writes it. An id of another format than the repository's is
// refused by name (UnsupportedRepository), never cut or padded. The tests
// ask git, as a second client, about what was staged: ls-files against
// ls-tree, diff-files (stat data alone), status, fsck --strict, a commit
// on top.
//
// Layering: imports gitstore/git, gitstore/oid and nwdes/refusal; nothing
// in the store imports it.
package stage
