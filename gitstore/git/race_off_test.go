//go:build !race

package git_test

const raceEnabled = false
