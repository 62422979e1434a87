// Package hooks enforces verdicts where pushes happen: it installs nwdes's
// pre-push hook where git runs hooks (core.hooksPath, the common directory
// shared by linked worktrees), chaining any hook that was there, and holds
// the hook's check: for each protected ref a push moves, the pushed commit
// must carry an accepted published examination of every feature whose
// contract exists in its tree.
//
// The check is on the hot path of every git push, so it reads only what it
// needs — the pushed commit's tree and the newest examination of each
// feature at that commit, no history — and reads git configuration in
// process (Config) instead of starting git.
//
// Layering: hooks imports examine, gitstore and refusal; the CLI imports it.
// It never reads the process environment or writes to os.Stdout: the CLI
// passes a Getenv and renders the results.
package hooks
