//go:build race

package git_test

// raceEnabled: the race detector makes the longest walks and differential
// runs several times slower; those size themselves down (make test runs
// the full-size proofs once more without it).
const raceEnabled = true
