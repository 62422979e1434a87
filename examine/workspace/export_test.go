package workspace

import "io"

// NewReplacerForTest exposes the output rewriter to the external tests.
func NewReplacerForTest(w io.Writer, old, new string) interface {
	Write([]byte) (int, error)
	Flush() error
} {
	return newReplacer(w, old, new)
}

// SimulateRefusedDescriptorStart makes p behave as on a system that
// refuses the descriptor start for permission.
func SimulateRefusedDescriptorStart(p *Prober) { p.refuseDescriptorStart = true }

// BeforeStart runs fn between the walk and the start.
func BeforeStart(p *Prober, fn func()) { p.beforeStart = fn }
