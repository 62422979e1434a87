//go:build linux && !amd64 && !arm64

package sandbox

// No socket filter is written for this architecture yet: a run that asks
// for no network relies on the network namespace alone, and says so.
const (
	nativeAudit = 0
	x32Bit      = 0xffffffff
)
