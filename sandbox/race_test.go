//go:build race

package sandbox_test

// raceBuilt: this test binary, which is also the wall's helper and second
// stage, is built with the race detector.
const raceBuilt = true
