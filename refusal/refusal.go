package refusal

import (
	"errors"
	"fmt"
)

// Class says what kind of failure a refusal is. The CLI's exit-code table
// (cmd/git-nwdes/internal/cli/exit.go) maps each class to a code; the class is carried
// here so that a library says what went wrong without knowing about
// processes or exit codes.
type Class int

const (
	// Refused is a request nwdes will not carry out: named, nothing
	// changed, the caller can change the request.
	Refused Class = iota
	// Unreadable is input or records nwdes could not read or trust
	// (missing, damaged, malformed): nothing could be decided from them.
	Unreadable
	// Unavailable is an environment that failed the request: the kernel
	// cannot wall a program in, a remote or git failed, the repository or
	// a directory cannot be written. Neither the request nor the records
	// are at fault.
	Unavailable
)

// String names the class as docs/cli.md does.
func (c Class) String() string {
	switch c {
	case Refused:
		return "refused"
	case Unreadable:
		return "unreadable"
	case Unavailable:
		return "unavailable"
	}
	return fmt.Sprintf("Class(%d)", int(c))
}

// Error is a named refusal. Name is stable and documented in docs/cli.md;
// Detail says what was wrong; Remedy says what to do about it.
type Error struct {
	Name   string
	Detail string
	Remedy string
	Class  Class
	// Err is an optional sentinel or cause callers can test with errors.Is.
	Err error
}

func (e *Error) Error() string { return e.Name + ": " + e.Detail }

// Unwrap exposes the sentinel or cause.
func (e *Error) Unwrap() error { return e.Err }

// Is matches another *Error by name, so errors.Is(err, &Error{Name: "X"})
// works without keeping sentinels for every name.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Name == e.Name && t.Detail == "" && t.Remedy == ""
}

// New returns a refusal of class Refused.
func New(name, remedy, format string, args ...any) *Error {
	return &Error{Name: name, Detail: fmt.Sprintf(format, args...), Remedy: remedy, Class: Refused}
}

// NewUnreadable returns a refusal of class Unreadable: input or records
// that could not be read or trusted.
func NewUnreadable(name, remedy, format string, args ...any) *Error {
	return &Error{Name: name, Detail: fmt.Sprintf(format, args...), Remedy: remedy, Class: Unreadable}
}

// NewUnavailable returns a refusal of class Unavailable: the environment
// failed the request.
func NewUnavailable(name, remedy, format string, args ...any) *Error {
	return &Error{Name: name, Detail: fmt.Sprintf(format, args...), Remedy: remedy, Class: Unavailable}
}

// Wrap sets the cause returned by Unwrap and returns e.
func (e *Error) Wrap(cause error) *Error { e.Err = cause; return e }

// As returns the refusal inside err, if any.
func As(err error) (*Error, bool) {
	var r *Error
	if errors.As(err, &r) {
		return r, true
	}
	return nil, false
}

// Named reports whether err carries a refusal with the given name.
func Named(err error, name string) bool {
	r, ok := As(err)
	return ok && r.Name == name
}
