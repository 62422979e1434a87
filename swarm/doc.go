// Package swarm runs one-task workers — coding agents or any command — as
// a pool, coordinated by leases kept in git refs.
//
// A card (ParseCard) is one task: its line 1 is the contract line its
// RESULT.md must repeat, its headers name the base commit and, typed, the
// paths it may change (PATHS), the cards that must finish ok first
// (DEPENDS-ON), the oracle that must be NOT-MET at its base (TEST, run
// through examine's gates by CheckCard) and its budget (BUDGET). AddCard
// checks it against the repository, every problem at once, and adds it
// to refs/nwdes/swarm/queue. A supervisor (Supervisor.Run) takes a lease
// on a queued card by compare-and-swap — a local ref, or with a remote one
// atomic push with the expected old value, so supervisors on many machines
// sharing only a git remote never run a task twice — stages a job
// directory (the base's checkout, scratch, a private data home), runs the
// worker's harness (ParseWorker) inside the wall with the job's write set
// and deadline, renews the lease's heartbeat while it runs, then writes
// exit.json (attested with a secret only the supervisor held), checks
// RESULT.md against the card's contract line (CheckResult), records the
// job in refs/nwdes/swarm/jobs, and releases the lease. While the job
// runs it reads what the harness reports it spent (spent.json, bounded,
// never through a link) against the card's and the worker's budget; a job
// that failed to launch is recorded and retried with a jittered backoff
// (RetryPolicy, on the supervisor's clock and random source).
//
// A card of KIND examine (examinecard.go) runs without a repository: its
// job gets the examiner's bundle and a public workspace (made by the
// Examining the CLI passes: examine prompt's own) and writes a journal
// (journal.go) that the supervisor checks whole and replays through
// examine.Examiner's calls, into an examination of CANDIDATE naming the
// worker; a worker that produced the candidate may not examine it
// (examine.OwnWork, the judgment's rule asked earlier).
//
// Liveness (Lease.State) follows one rule: a lease held on this host is
// live exactly while its holder process (pid and start time) lives; one
// from another host is held until its heartbeat is older than the stale
// window. Heartbeats rewrite a parentless commit (history "latest"), so a
// year of them leaves nothing to walk.
//
// What swarm leases, release and status show is read here too
// (status.go): Leases lists each lease with its state as a one-shot
// reader (a LeaseQuery) sees it, ReleaseLease refuses to free one whose
// holder may still run it, and ReadStatus puts the queue, jobs, leases,
// control records and lineages into one Report.
//
// Reads and writes of the queue, jobs, stops and control take the record
// roles (gitstore.RecordReader, RecordWriter; Queuer to add a card); the
// supervisor, the local book and harvest take the git store, which alone
// adopts a worker's commit, stages a repository and lists a ref family.
//
// With HeadGates (swarm run --gate) each harvested head is gated with the
// card's BASE as base before its job is recorded (gate.go). ReworkCard
// turns a refused outcome of a head into the next card of its lineage
// (REWORK-OF), bounded; Lineages reads each card's journey back from the
// records (rework.go, lineage.go). Loop (swarm run --rework; loop.go)
// joins them unattended: a producer and an examiner supervisor, and
// between their passes Decide, which reads from the records alone what
// comes next in each lineage (an examine card for a new head, the
// judgment of an examined one, its rework, its end), done through those
// same calls.
//
// docs/swarm.md describes worker descriptions, cards, leases and their
// states. The package imports the store, the wall, examine (its tree
// export, its gates for TEST and for heads, its FILE SCOPE globs for
// PATHS) and judge (the one judgment a rework starts from); the CLI is a
// thin layer over it.
package swarm
