// Package stage makes a work tree a program can work in as in any clone:
// a repository whose objects are borrowed from another one's (through
// objects/info/alternates: nothing copied, no network), HEAD on a branch
// at a commit, the committed files written and an index that matches
// them. The swarm stages each job's checkout with it. go-git's index
// writer holds 20-byte ids, so a SHA-256 repository's checkout is refused
// by name (indexHash: UnsupportedRepository), never written with ids cut
// to 20 bytes.
//
// Layering: imports gitstore/git, gitstore/oid, go-git's index encoder
// and nwdes/refusal; nothing in the store imports it.
package stage
