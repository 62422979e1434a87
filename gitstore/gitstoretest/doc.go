// Package gitstoretest is the conformance suite of the store's roles
// (gitstore.RecordWriter, NoteKeeper, Replicator): what any implementation
// — the Store itself, memstore, or a wrapper that injects faults, counts
// or caches — must do. It has two halves. RunRecords checks the record and
// note half over any store (memstore runs it in memory); Run checks the git
// store with both halves against real repositories, a real bare remote and
// the git binary as a second reader (git fsck --strict after every check).
//
//	func TestStoreConforms(t *testing.T) {
//		gitstoretest.Run(t, gitstoretest.Harness{Open: func(t *testing.T, dir string, reg *gitstore.Registry) gitstoretest.Store {
//			loc, _ := gitrepo.Discover(dir, nil)
//			st, _ := gitstore.Open(loc, gitstore.Options{Registry: reg})
//			return st
//		}})
//	}
//
// The record half covers records (exact round trip of payload bytes,
// absent versus missing, compare-and-swap, no lost update among concurrent
// writers, declarations, layouts and immutable directories refused by
// name), history (old states readable, Log newest first, latest-only refs
// keep one commit) and notes (git reads what the git store wrote). The
// replication half covers every sync policy
// through git push and fetch: merge, fast-forward (a diverged chain is
// refused naming both tips and nothing moves), local (never leaves the
// clone) and swap (exactly one of racing clones wins a lease; losing is an
// answer carrying the winner's value).
//
// Layering: imports gitstore, nwdes/refusal and nwdes/internal/gittest
// (which runs git) only; nothing in the product imports it.
package gitstoretest
