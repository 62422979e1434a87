// Package lazyre holds regular expressions that compile on first use instead
// of at package initialisation.
//
// A package-level regexp.MustCompile runs before main in every process that
// links the package, whatever verb it serves. Name rules such as
// `[A-Za-z0-9._-]{0,99}` expand to hundreds of instructions, and a dozen of
// them cost git-nwdes thousands of allocations and most of a millisecond at
// every start (GODEBUG=inittrace=1), so `git nwdes version` paid for
// validators it never ran. A lazyre.Regexp compiles once, when a method is
// first called, and is safe for concurrent use.
//
// It imports only the standard library (regexp, sync).
package lazyre
