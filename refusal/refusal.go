package refusal

import (
	"errors"
	"fmt"
)

// Class says which exit code a refusal maps to. The CLI owns the table; the
// class is carried here so that a library decides what kind of failure it
// reports without knowing about processes.
type Class int

const (
	// Refused is a request nwdes will not carry out (exit 2).
	Refused Class = iota
	// Unreadable is input nwdes could not read or trust (exit 1).
	Unreadable
)

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

// New returns a refusal (exit 2).
func New(name, remedy, format string, args ...any) *Error {
	return &Error{Name: name, Detail: fmt.Sprintf(format, args...), Remedy: remedy, Class: Refused}
}

// NewUnreadable returns a refusal for unreadable or untrustworthy input (exit 1).
func NewUnreadable(name, remedy, format string, args ...any) *Error {
	return &Error{Name: name, Detail: fmt.Sprintf(format, args...), Remedy: remedy, Class: Unreadable}
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
