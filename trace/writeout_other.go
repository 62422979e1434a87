//go:build !unix

package trace

// noFollow is not needed where O_EXCL already refuses every existing
// name, and not available.
const noFollow = 0
