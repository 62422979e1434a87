// Package ledger keeps append-only, hash-chained event ledgers in git
// refs, and proves them intact.
//
// A ledger NAME lives in refs/nwdes/ledgers/NAME, one commit per append.
// Entry n (entries/<bucket>/<n>) holds the event (canonical JSON), its
// sequence number, the SHA-256 digest of entry n-1 (zeros for the first)
// and its own digest over those three. Seal records the count and the
// final digest; an append after it is refused. Verify re-derives every
// digest and walks the history (one linear chain from a first commit
// holding entry 1, no step removing or changing what an earlier one held)
// and names the first break. Between clones a ledger only moves forward:
// the ref's policy is fast-forward, and a diverged ledger is refused, never
// merged.
//
// It takes the store's roles (Store to append: records, history checks
// and parents; gitstore.AppendOnly to read); its tests of what is not
// about git run on gitstore/memstore.
package ledger
