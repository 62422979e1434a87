//go:build !race

package sandbox_test

const raceBuilt = false
