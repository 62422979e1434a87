package boundedio

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/nwdes/nwdes/refusal"
)

// Limit is how much one use reads, named for the refusal of an input over
// it.
type Limit struct {
	// Bytes is the most the input may hold.
	Bytes int64
	// Of names what is bounded, for the refusal: "an event", "a card".
	Of string
	// Remedy says what to do about an input over the limit.
	Remedy string
	// Refusal is the name an input over the limit is refused with;
	// refusal.InputTooLarge when empty (a record's text keeps
	// refusal.RecordTooLarge, the limit being the record's).
	Refusal string
}

func (l Limit) tooLarge(what string) error {
	name := l.Refusal
	if name == "" {
		name = refusal.InputTooLarge
	}
	return refusal.New(name, l.Remedy, "%s holds more than %d bytes, the most %s may hold", what, l.Bytes, l.Of)
}

// ReadFile reads the regular file at path whole, refusing a path that is
// not one (InputUnreadable: missing, unreadable, a FIFO, a device, a
// directory) and a file over lim (InputTooLarge, or lim.Refusal). The
// refusal names the file as path.
func ReadFile(path string, lim Limit) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > lim.Bytes {
		return nil, lim.tooLarge(path)
	}
	return ReadAll(f, path, lim)
}

// Open opens the regular file at path for reading, without blocking: a
// FIFO, a device, a directory or a socket is refused (InputUnreadable)
// after the open descriptor is checked, before any byte is read. The
// caller bounds what it reads from the file (ReadAll, Reader).
func Open(path string) (*os.File, error) {
	f, err := openNonblock(path)
	if err != nil {
		return nil, unreadable(path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, unreadable(path, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, refusal.NewUnreadable(refusal.InputUnreadable, "name a regular file (for a pipe or a stream, give - and feed it on stdin)",
			"%s is %s, not a regular file", path, kind(fi.Mode()))
	}
	return f, nil
}

// ReadAll reads r to its end, at most lim.Bytes+1 bytes of it: an input
// over lim is refused (InputTooLarge, or lim.Refusal) naming it as what.
// An endless stream (stdin fed from /dev/zero) is refused after that many
// bytes, never read whole.
func ReadAll(r io.Reader, what string, lim Limit) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, lim.Bytes+1))
	if err != nil {
		return nil, unreadable(what, err)
	}
	if int64(len(b)) > lim.Bytes {
		return nil, lim.tooLarge(what)
	}
	return b, nil
}

// Reader passes reads through to R until more than Lim.Bytes have come,
// and then fails with the refusal of an input over Lim, which Err keeps:
// a consumer that scans a stream line by line (git's hook protocol on
// stdin) is bounded without holding it whole.
type Reader struct {
	R    io.Reader
	What string
	Lim  Limit
	n    int64
	err  error
}

// NewReader bounds r by lim, naming it as what in the refusal.
func NewReader(r io.Reader, what string, lim Limit) *Reader {
	return &Reader{R: r, What: what, Lim: lim}
}

func (r *Reader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if rest := r.Lim.Bytes + 1 - r.n; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := r.R.Read(p)
	r.n += int64(n)
	if r.n > r.Lim.Bytes {
		r.err = r.Lim.tooLarge(r.What)
		return n - int(r.n-r.Lim.Bytes), r.err
	}
	return n, err
}

// Err is the refusal of an input over the limit once a read has met it,
// else nil: a consumer that wraps read errors in its own still lets the
// caller report the bound by its name.
func (r *Reader) Err() error { return r.err }

func unreadable(what string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return refusal.NewUnreadable(refusal.InputUnreadable, "name a readable regular file", "cannot read %s: %v", what, err).Wrap(err)
}

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return fmt.Sprintf("of type %v", m.Type())
}
