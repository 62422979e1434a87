package workspace

import "io"

// NewReplacerForTest exposes the output rewriter to the external tests.
func NewReplacerForTest(w io.Writer, old, new string) interface {
	Write([]byte) (int, error)
	Flush() error
} {
	return newReplacer(w, old, new)
}
