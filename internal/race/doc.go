// Package race says whether this binary was built with the race detector,
// for tests that size themselves down under it (make test runs them again
// at full size without it; scripts/test.sh lists which).
//
// Layering: imports nothing.
package race
