// Package refusal holds the one error shape every nwdes refusal takes: a
// stable name a script can match, what was wrong, and the remedy, with a
// class that the CLI maps to an exit code (2 refused, 1 unreadable input).
//
// It imports nothing but the standard library so that every other package
// (gitstore, examine, hooks, the CLI) can use it without cycles.
package refusal
