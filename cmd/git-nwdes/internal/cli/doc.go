// Package cli is the git-nwdes command: urfave/cli wiring, flag binding,
// rendering and the one table from errors to exit codes. Every action is an
// adapter of a few lines over a library package (gitstore, examine, hooks);
// behaviour lives there, not here.
//
// It may import every nwdes package; nothing imports it but cmd/git-nwdes
// and tests.
package cli
