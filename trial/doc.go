// Package trial grades a trial's window and reads its preconditions.
//
// The preconditions are read by Preflight, immediately before the dispatch
// that opens the window: the window the start record declares is ahead and
// is the one this dispatch opens; the supervisor that will poll is running,
// by the kernel's own state letter, and sits outside the caller's session,
// so that it survives the shell that started it; it advanced its witness
// between two observations; and the store is the same store at the start
// and at the end of the readings. Each reading answers true, false or
// unknown: a reading that could not be taken is unknown, never false, and
// never takes the answer of the reading beside it.
//
// Preflight takes a trial.Store: the record roles, the registry, and the
// repository's location (the common directory's identity is a reading).
//
// Grade measures a window from its events. LedgerEvents reads them from a
// trial ledger's entries, handed over by the caller (trial does not import
// the ledger package), and sets apart the preflights, which GradeCiting
// cites and holds to the grading moment; RequestFor and
// Readings.LedgerEvent are the preflight's side of the same ledger.
//
// It may import gitstore (and gitstore/oid, gitstore/gitrepo), refusal,
// internal/text, golang.org/x/sys/unix and the standard library. It does
// not import swarm, examine, the sandbox or the CLI: it reads /proc itself,
// so that the packages above it stay independent of one another.
package trial
