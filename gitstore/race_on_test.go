//go:build race

package gitstore_test

// raceEnabled: the race detector makes the longest walks and differential
// runs several times slower; those size themselves down (make test runs
// the full-size proofs once more without it).
const raceEnabled = true
