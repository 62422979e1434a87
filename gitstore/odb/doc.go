// Package odb reads objects straight out of a git objects directory: loose
// objects, version-2 pack indexes with their packs, and the object
// directories named in objects/info/alternates.
//
// It exists because nwdes's pre-push hook is a freshly started process that
// needs only a handful of objects (a commit, a couple of trees, a blob) from
// repositories that may hold hundreds of thousands. go-git's filesystem
// storage decodes a whole pack index into memory before answering its first
// lookup, which costs tens of milliseconds per process; this package opens
// nothing until it is asked for an object and then reads only the index
// bytes on the path to it (fanout entry, a few probes of the sorted name
// table, one offset), so a cold lookup costs a few system calls.
//
// Prefix answers what an abbreviated id may name with the same economy: it
// lists the one loose fanout directory the prefix selects and binary-searches
// each pack index for the run of names that begin with it.
//
// A process that reads many objects (fsck, a history check, a ledger's
// verification) reads the versions of one tree or record along a history,
// which a pack stores as one delta chain. A DB keeps the objects it
// resolves from packs, bounded in bytes and least recently used first, as
// git's delta_base_cache does, so a link of a chain still cached is not
// inflated and patched again for the next object read through it
// (BenchmarkLedgerVerify went from 22.7x to 8.3x git's reads with it). The
// first walk through a chain keeps only its base and the object read; the
// links between are kept from the chain's second walk on, and by every
// walk once the DB has made 256, so that a process reading one object at
// the end of a long chain (the hook) does not keep, in fresh memory,
// every link it passed. Such a process also reads entries lying next to
// one another: once it has read 256 objects of one pack, the pack's bytes
// are read in 32 KiB blocks and kept (16 MiB at most, least recently used
// first), where each entry was one pread of 8 KiB of its own (13,000
// preads for the 2 MiB pack of a 1,000-observation draft's fsck, about
// 1,600 with blocks; git maps its packs and reads them with none). What a
// read returns is always the caller's own copy. A DB opened with
// OpenIsolated keeps nothing: its bounds apply to each read whole.
//
// Every object returned has been re-hashed and compared with the id it was
// requested by, so on-disk corruption surfaces as ErrCorrupt instead of
// wrong content. A miss rescans the pack directory once before reporting
// ErrNotFound, because a concurrent git gc or git repack may have moved the
// object into a pack that did not exist when the DB was opened.
//
// A DB reads one object format, SHA-1 or SHA-256, which its opener names
// (the repository's extensions.objectFormat: nothing in an index says
// which it is). Ids are oid.IDs; one of the other format is ErrFormat,
// never cut or padded to the DB's size.
//
// Deltas are applied by applyDelta, to git's patch_delta rules, and zlib
// streams are inflated by github.com/klauspost/compress/zlib, which decodes
// the hook's delta chains about a fifth faster than compress/zlib (its
// decoder reads a *bufio.Reader without an interface call a byte);
// FuzzApplyDelta and FuzzInflateAgreesWithCompressZlib hold each to what
// it replaced, and TestReadAgreesWithGit the whole read to git.
//
// Imports are restricted to the standard library, gitstore/oid, go-git's
// plumbing package (for plumbing.ObjectType, which holds no hash),
// klauspost/compress/zlib and golang.org/x/sys; the package must stay
// cheap to link into the hook binary and must not pull in go-git's
// storage or repository layers.
package odb
