// Package examine holds what nwdes judges: a feature's contract (parsed
// fail-closed), the examiner's drafts (observations and verdicts), the close
// that derives an outcome and publishes an immutable examination, and the
// acceptance brief written as a git note on the candidate commit.
//
// nwdes never judges the evidence itself: it checks that every expectation
// has a verdict, that every met or unmet verdict cites recorded text, and
// derives the outcome from the verdicts.
//
// A draft is kept in this clone's refs/nwdes-local/drafts as a head record
// and one record per observation (draft.go, draftobs.go): a verb reads the
// head and the observations it names, and writes what it changed, so that
// recording evidence costs the same on the thousandth observation as on
// the first; show and retarget read them all.
//
// It also holds the gates (command oracles run through sandbox, evidence
// recorded in refs/nwdes/gates; run at a base too, the evidence says
// whether each MET oracle is proven or vacuous) and verify, the
// mechanical verdict.
//
// It takes the store's roles, not the git store (store.go names the
// compositions: Records, Reading, Store, Fetcher), so that any store that
// plays them will do; the CLI passes the git store.
//
// It imports gitstore, sandbox and refusal; the CLI, hooks and report import it.
package examine
