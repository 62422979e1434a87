// Package trace validates sealed trace bundles and keeps them, byte for
// byte, in trace stores held in git refs.
//
// A bundle (Validate) is one canonical JSON document: the events of one
// session and attempt, each naming them and its trace, stating its facts
// each as recorded, computed, unavailable or not-applicable, and joined in
// a SHA-256 chain closed by a seal of the event count and final digest, so
// that a change not rehashed, a lost tail or an event of another run is
// found. Validate returns a deterministic receipt bound to the exact bytes,
// or refuses (TraceInvalid) naming the first defect. The chain is not a
// signature: it proves no producer and grants no authority.
//
// A Store keeps bundles with their receipts in refs/nwdes/traces/<name>,
// one record per bundle at a path named for its receipt, published by one
// compare-and-swap per append. A store only grows (fast-forward, records
// immutable) and is bounded (records, bytes); a full store refuses and
// nothing is evicted. Read checks the stored bytes against the receipt and
// validates them again before returning them; WriteOut puts them in a new
// read-only file. CheckRecord is fsck's check of every stored bundle.
//
// A Store keeps its records in any store that plays Records (the git
// store, or gitstore/memstore in the tests that are not about git).
//
// The package imports gitstore and refusal only (never go-git); the CLI
// imports it.
package trace
