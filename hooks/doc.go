// Package hooks enforces verdicts where pushes happen: it installs nwdes's
// pre-push hook where git runs hooks (core.hooksPath, the common directory
// shared by linked worktrees), chaining any hook that was there, and holds
// the hook's check: for each protected ref a push moves, the pushed commit
// must carry an accepted published examination of every feature whose
// contract exists in its tree; when it accepts, the records that branch
// was judged by are sent to the same remote before git pushes it
// (CheckAndSend, unless nwdes.push.records=manual), so that one git push
// lands where the server judges. On the server (Receive) it holds the same
// rule where no client can skip it, twice: in pre-receive, and again in
// reference-transaction when git has locked the refs of each transaction,
// judging the ref a name moves (symbolic refs followed), taking no ref
// that stays in one clone, keeping nwdes's records append-only and judging
// a new protected branch against an explicit source.
//
// The check is on the hot path of every git push, so it reads only what it
// needs — the pushed commit's tree and the newest examination of each
// feature at that commit, no history — and reads git configuration in
// process (Config) instead of starting git.
//
// A hook is git's: it opens the git store, and judges through
// judge.Store.
//
// Layering: hooks imports examine, gitstore and refusal; the CLI imports it.
// It never reads the process environment or writes to os.Stdout: the CLI
// passes a Getenv and renders the results.
package hooks
