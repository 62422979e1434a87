//go:build race

package cli_test

// raceEnabled: the race detector's shadow memory needs more address space
// than a bounded script command is given, so there it runs unlimited.
const raceEnabled = true
