// Package refusal holds the one error shape every nwdes refusal takes: a
// stable name a script can match, what was wrong, and the remedy, with a
// class (refused, unreadable, unavailable) that the CLI's one exit-code
// table maps to a code.
//
// It imports nothing but the standard library so that every other package
// (gitstore, examine, hooks, the CLI) can use it without cycles.
package refusal
