package sandbox

import "golang.org/x/sys/unix"

// nativeAudit is this architecture's AUDIT_ARCH; x32Bit marks x32 system
// call numbers, which reach the same kernel entry points.
const (
	nativeAudit = unix.AUDIT_ARCH_X86_64
	x32Bit      = 0x40000000
)
