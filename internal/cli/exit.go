package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/refusal"
)

// Exit codes, documented in docs/cli.md. This file is the only place that
// maps errors to them.
const (
	ExitOK       = 0 // success; a positive judgment
	ExitNegative = 1 // a negative judgment, or input that could not be read
	ExitRefused  = 2 // a refused request or a usage error
)

// judgment is returned by a verb that ran fine but judged negatively; its
// output has already been printed.
type judgment struct{ reason string }

func (j *judgment) Error() string { return j.reason }

// negative reports a negative judgment (exit 1) without printing anything more.
func negative(reason string) error { return &judgment{reason} }

// passthrough carries the exit code of a program nwdes ran for the user
// (sandbox run), whatever it is; its output has already been printed.
type passthrough struct{ code int }

func (p *passthrough) Error() string { return fmt.Sprintf("exit %d", p.code) }

// usageError is a command-line mistake (exit 2).
type usageError struct{ err error }

func (u *usageError) Error() string { return u.err.Error() }
func (u *usageError) Unwrap() error { return u.err }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

// report prints err the one way nwdes prints errors and returns the exit code.
func report(err error, stdout, stderr io.Writer, jsonOut bool, st style) int {
	if err == nil {
		return ExitOK
	}
	var j *judgment
	if errors.As(err, &j) {
		return ExitNegative
	}
	var pt *passthrough
	if errors.As(err, &pt) {
		return pt.code
	}
	// Details quote what a commit, a record or the command line held:
	// escaped (text.TerminalLine), they stay one line and act on nothing.
	var u *usageError
	if errors.As(err, &u) {
		fmt.Fprintf(stderr, "%s %s\n", st.red("usage:"), text.TerminalLine(u.err.Error()))
		fmt.Fprintln(stderr, "remedy: run the verb with -h for its usage and examples")
		return ExitRefused
	}
	if r, ok := refusal.As(err); ok {
		fmt.Fprintf(stderr, "%s: %s\n", st.red(text.TerminalLine(r.Name)), text.TerminalLine(text.OneLine(r.Detail)))
		if r.Remedy != "" {
			fmt.Fprintf(stderr, "remedy: %s\n", text.TerminalLine(text.OneLine(r.Remedy)))
		}
		if jsonOut {
			writeJSON(stdout, map[string]any{"refusal": map[string]string{"name": r.Name, "detail": r.Detail, "remedy": r.Remedy}})
		}
		if r.Class == refusal.Unreadable {
			return ExitNegative
		}
		return ExitRefused
	}
	fmt.Fprintf(stderr, "%s %s\n", st.red("error:"), text.TerminalLine(text.OneLine(err.Error())))
	return ExitNegative
}

// writeJSON prints v as one JSON document. Texts keep their bytes,
// JSON-escaped; text.JSON also escapes the controls encoding/json leaves
// raw (DEL, C1, bidirectional), so the document prints safely and means
// the same.
func writeJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(text.JSON(buf.Bytes()))
	return err
}
