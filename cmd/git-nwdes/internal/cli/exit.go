package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"

	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/refusal"
)

// The exit codes. This file is the only place that maps errors and results
// to them: libraries return errors (a refusal carries its class) and
// results, verbs return them, and exitCode decides. Every verb's EXIT
// STATUS is rendered from exitRows, and docs/cli.md's table is held to it
// by a test, so that CI can tell "rejected" (1) from "could not decide"
// (3) and both from a failing runner (4).
const (
	ExitOK          = 0   // success, or a positive judgment
	ExitNegative    = 1   // a negative judgment
	ExitRefused     = 2   // a refused request or a usage error
	ExitUndecided   = 3   // could not decide: input or records missing, damaged or unreadable
	ExitEnvironment = 4   // the environment failed
	ExitInterrupted = 130 // a signal cancelled the run
)

// exitRow is one row of the table: its meaning is what every verb's help
// and docs/cli.md print; cases is docs/cli.md's list of what falls in it.
type exitRow struct {
	code    int
	meaning string
	cases   string
}

// exitRows is the one exit-code table.
func exitRows() []exitRow {
	return []exitRow{
		{ExitOK, "success, or a positive judgment",
			"accepted; every gate MET; CONFORME; a clean window; every reading true; no problem found"},
		{ExitNegative, "a negative judgment",
			"rejected or indeterminate (`examine close`); not accepted (`status`, the hooks); a gate NOT-MET or pending; ECARTS or ABANDONED (`verify`); a window not clean (`ledger grade`); a reading false (`trial preflight`); not landed, the branch having moved (`swarm land`); a lineage not accepted: at its bound, for a person, stopped, or not landed (`swarm run --rework`); problems found and named (`fsck`, `contract check`, `ledger verify`, `trace validate`)"},
		{ExitRefused, "refused, or a usage error: named on stderr, nothing changed",
			"a refusal of class refused (`MissingFact`, `TrialInvalid`, `Conflict`, …); an unknown verb or flag; a missing required flag"},
		{ExitUndecided, "could not decide: input or records missing, damaged or unreadable",
			"a refusal of class unreadable (`ObjectMissing`, `StoreUnreadable`, `RecordMalformed`, `RefUnreadable`, `InputUnreadable`, …); `verify`'s ERROR; a reading unknown (`trial preflight`); any error nwdes does not name"},
		{ExitEnvironment, "the environment failed",
			"a refusal of class unavailable (`SandboxUnavailable`, `RemoteFailed`); git not found; the disk full; memory or file descriptors ran out"},
		{ExitInterrupted, "interrupted",
			"a signal (SIGINT, SIGTERM, SIGHUP) cancelled the run"},
	}
}

// exitCode is the table applied to what a verb returned.
func exitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	if errors.Is(err, context.Canceled) {
		return ExitInterrupted
	}
	var pt *passthrough
	if errors.As(err, &pt) {
		return pt.code
	}
	var j *judgment
	if errors.As(err, &j) {
		if j.undecided {
			return ExitUndecided
		}
		return ExitNegative
	}
	var u *usageError
	if errors.As(err, &u) {
		return ExitRefused
	}
	if r, ok := refusal.As(err); ok {
		switch r.Class {
		case refusal.Refused:
			return ExitRefused
		case refusal.Unavailable:
			return ExitEnvironment
		default:
			return ExitUndecided
		}
	}
	for _, env := range []error{exec.ErrNotFound, syscall.ENOSPC, syscall.EDQUOT, syscall.ENOMEM, syscall.EMFILE, syscall.ENFILE} {
		if errors.Is(err, env) {
			return ExitEnvironment
		}
	}
	return ExitUndecided
}

// judgment is returned by a verb that ran and judged negatively, or could
// not decide (undecided); its output has already been printed. A finding
// is a refusal that is the verb's own answer (ledger verify's
// LedgerBroken): printed as a refusal, it is still a judgment.
type judgment struct {
	reason    string
	undecided bool
	finding   *refusal.Error
}

func (j *judgment) Error() string {
	if j.finding != nil {
		return j.finding.Error()
	}
	return j.reason
}

// Unwrap exposes the finding, so that report prints it as a refusal.
func (j *judgment) Unwrap() error {
	if j.finding == nil {
		return nil
	}
	return j.finding
}

// negative reports a negative judgment without printing anything more.
func negative(reason string) error { return &judgment{reason: reason} }

// undecided reports that the verb could not decide, without printing
// anything more.
func undecided(reason string) error { return &judgment{reason: reason, undecided: true} }

// findings makes the named refusals in err the verb's negative judgment:
// a verb whose question is whether the thing holds (ledger verify: does
// the chain hold?) answers no with them. Any other error is left as it is.
func findings(err error, names ...string) error {
	if r, ok := refusal.As(err); ok {
		for _, n := range names {
			if r.Name == n {
				return &judgment{reason: r.Name, finding: r}
			}
		}
	}
	return err
}

// passthrough carries the exit code of a program nwdes ran for the user
// (sandbox run, examine probe), whatever it is; its output has already
// been printed.
type passthrough struct{ code int }

func (p *passthrough) Error() string { return fmt.Sprintf("exit %d", p.code) }

// usageError is a command-line mistake.
type usageError struct{ err error }

func (u *usageError) Error() string { return u.err.Error() }
func (u *usageError) Unwrap() error { return u.err }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

// report prints err the one way nwdes prints errors and returns its exit
// code. interrupted says the run's context was cancelled: an error then is
// the interruption's, whatever it says.
func report(err error, interrupted bool, stdout, stderr io.Writer, jsonOut bool, st style) int {
	if err == nil {
		return ExitOK
	}
	code := exitCode(err)
	if interrupted {
		code = ExitInterrupted
	}
	var j *judgment
	if errors.As(err, &j) && j.finding == nil {
		return code
	}
	var pt *passthrough
	if errors.As(err, &pt) {
		return code
	}
	// Details quote what a commit, a record or the command line held:
	// escaped (text.TerminalLine), they stay one line and act on nothing.
	var u *usageError
	if errors.As(err, &u) {
		fmt.Fprintf(stderr, "%s %s\n", st.red("usage:"), text.TerminalLine(u.err.Error()))
		fmt.Fprintln(stderr, "remedy: run the verb with -h for its usage and examples")
		return code
	}
	if r, ok := refusal.As(err); ok {
		fmt.Fprintf(stderr, "%s: %s\n", st.red(text.TerminalLine(r.Name)), text.TerminalLine(text.OneLine(r.Detail)))
		if r.Remedy != "" {
			fmt.Fprintf(stderr, "remedy: %s\n", text.TerminalLine(text.OneLine(r.Remedy)))
		}
		if jsonOut {
			writeJSON(stdout, map[string]any{"refusal": map[string]string{"name": r.Name, "detail": r.Detail, "remedy": r.Remedy}})
		}
		return code
	}
	label := "error:"
	if code == ExitInterrupted {
		label = "interrupted:"
	}
	fmt.Fprintf(stderr, "%s %s\n", st.red(label), text.TerminalLine(text.OneLine(err.Error())))
	return code
}

// exitNote says what a row of the table means for one verb.
type exitNote struct {
	code int
	note string
}

// judges is the note of a verb that judges: what its negative judgment is.
// Only such a verb shows row 1.
func judges(what string) exitNote { return exitNote{ExitNegative, what} }

// decides is the note of row 3 for a verb with a result of its own that is
// no decision (verify's ERROR, a preflight's unknown reading).
func decides(what string) exitNote { return exitNote{ExitUndecided, what} }

// passesThrough is the paragraph of a verb that ends with the exit code of
// a program it ran; the table's rows but 0 follow it, for nwdes's own
// failures.
func passesThrough(what string) exitNote { return exitNote{-1, what} }

// exitStatus renders a verb's EXIT STATUS section from the table: every
// row but 1, which only a verb that judges shows (see judges), each with
// the verb's note, if any, in parentheses.
func exitStatus(notes ...exitNote) string {
	if len(notes) == 0 {
		return plainExitStatus()
	}
	return renderExitStatus(false, notes)
}

// exitStatusAll is the section of the top level and of a verb group: every
// row, row 1 included.
func exitStatusAll() string { return allExitStatus() }

// The two sections most verbs share are rendered once per process: a verb
// group builds the help of each of its verbs, and help and completion that
// of every verb.
var (
	plainExitStatus = sync.OnceValue(func() string { return renderExitStatus(false, nil) })
	allExitStatus   = sync.OnceValue(func() string { return renderExitStatus(true, nil) })
)

func renderExitStatus(all bool, notes []exitNote) string {
	byCode := map[int]string{}
	for _, n := range notes {
		byCode[n.code] = n.note
	}
	var b strings.Builder
	b.WriteString("\nEXIT STATUS")
	p, passes := byCode[-1]
	if passes {
		for _, line := range strings.Split(p, "\n") {
			b.WriteString("\n   " + line)
		}
		b.WriteString("\n   and nwdes's own:")
	}
	for _, r := range exitRows() {
		note, ok := byCode[r.code]
		if r.code == ExitNegative && !all && !ok || r.code == ExitOK && passes {
			continue
		}
		fmt.Fprintf(&b, "\n   %-3d  %s", r.code, r.meaning)
		if note != "" {
			fmt.Fprintf(&b, " (%s)", note)
		}
	}
	return b.String()
}

// exitDocTable is docs/cli.md's table of exit codes, rendered from the
// one table.
func exitDocTable() string {
	var b strings.Builder
	b.WriteString("| code | meaning | when |\n|---|---|---|\n")
	for _, r := range exitRows() {
		fmt.Fprintf(&b, "| %d | %s | %s |\n", r.code, r.meaning, r.cases)
	}
	return b.String()
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
