package sandbox

import "golang.org/x/sys/unix"

// nativeAudit is this architecture's AUDIT_ARCH; arm64 has no second
// numbering, so no number is at or above x32Bit.
const (
	nativeAudit = unix.AUDIT_ARCH_AARCH64
	x32Bit      = 0xffffffff
)
