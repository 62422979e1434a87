//go:build !race

package gitstore_test

const raceEnabled = false
