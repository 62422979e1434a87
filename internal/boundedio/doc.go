// Package boundedio is the one way nwdes reads a file or a stream it did
// not write itself: an argument (--event-file, --card, a bundle, --key), a
// file git config names (nwdes.allowedSignersFile, user.signingKey), a
// work-tree file it edits (the signing policy), and stdin. Every read is
// bounded by a Limit that names what it bounds: at most Limit.Bytes+1 bytes
// are read, and an input holding more is refused (InputTooLarge, saying the
// limit and what to do) instead of being read whole into memory.
//
// Where a regular file is meant, ReadFile opens it without blocking
// (O_NONBLOCK, so a FIFO with no writer cannot hang the open), checks the
// open descriptor with fstat and refuses anything but a regular file — a
// FIFO, a device such as /dev/zero, a directory, a socket — as
// InputUnreadable. A final symbolic link is followed, as cat and git
// follow it for a file named on their command line: the path is the
// user's own, and what could hang or exhaust memory is the target's type
// and size, which the descriptor is checked for. Streams (stdin, "-") go
// through ReadAll, or through Reader where the consumer scans lines.
//
// Records read from git objects are bounded by the store
// (nwdes.maxRecordBytes) and do not pass here.
//
// It imports only the standard library and refusal, so every layer may use
// it; it never reads the environment or writes to os.Stdout.
package boundedio
