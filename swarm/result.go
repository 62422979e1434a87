package swarm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"

	"github.com/nwdes/nwdes/internal/text"
)

// The report a job publishes, and its bounds.
const (
	// ResultName is the report's name in its job directory.
	ResultName = "RESULT.md"
	// MaxResultSize bounds a report.
	MaxResultSize = 1 << 20
	// MaxResultLines bounds a report's lines.
	MaxResultLines = 2000
	// MaxResultLine bounds one line of a report, its "\n" not counted.
	MaxResultLine = 8 << 10
)

// Verdict is what a report counts for.
type Verdict string

const (
	// VerdictOK is a report that holds the card's contract and says DONE.
	VerdictOK Verdict = "ok"
	// VerdictBlocked is a well-formed report that says BLOCKED or ABSTAIN.
	VerdictBlocked Verdict = "blocked"
	// VerdictRefused is a report that breaks the contract or a bound.
	VerdictRefused Verdict = "refused"
)

// Status is line 2 of a report: what the worker says of its card.
type Status string

const (
	StatusDone    Status = "DONE"
	StatusBlocked Status = "BLOCKED"
	StatusAbstain Status = "ABSTAIN"
)

// Result is the check of one report against its card.
type Result struct {
	Verdict Verdict
	// Status and Note are line 2's, when it was read.
	Status Status
	Note   string
	// Reason says why a report is refused; empty otherwise.
	Reason string
	// Lines is how many lines the report has (a last line without "\n"
	// counts; an empty report has none).
	Lines int
}

// CheckResult checks a report against its card and never fails: a
// malformed report is a refused result. The report is refused, with the
// first reason in this order, when there is no card contract line to hold
// it to, it is larger than MaxResultSize, holds a NUL, is not valid UTF-8,
// has more than MaxResultLines lines or a line longer than MaxResultLine,
// its line 1 is not the card's ContractLine byte for byte (a "\r" before
// the "\n" included), or its line 2 is not a status: DONE, BLOCKED or
// ABSTAIN, alone or followed by one space and a note with no control
// character. DONE is ok; BLOCKED and ABSTAIN are blocked.
func CheckResult(c *Card, b []byte) Result {
	r := Result{Verdict: VerdictRefused, Lines: countLines(b)}
	refuse := func(format string, args ...any) Result {
		r.Reason = fmt.Sprintf(format, args...)
		return r
	}
	switch {
	case c == nil || c.ContractLine == "":
		return refuse("there is no card contract line to check the report against")
	case len(b) > MaxResultSize:
		return refuse("the report is larger than %d bytes", MaxResultSize)
	case bytes.IndexByte(b, 0) >= 0:
		return refuse("the report holds a NUL byte at offset %d", bytes.IndexByte(b, 0))
	case !utf8.Valid(b):
		return refuse("the report is not valid UTF-8 (first bad byte at offset %d)", invalidUTF8At(b))
	case r.Lines > MaxResultLines:
		return refuse("the report has %d lines, more than %d", r.Lines, MaxResultLines)
	}
	lines := strings.SplitN(string(b), "\n", 3)
	for i, line := range strings.Split(string(b), "\n") {
		if len(line) > MaxResultLine {
			return refuse("line %d is %d bytes, more than %d", i+1, len(line), MaxResultLine)
		}
	}
	switch {
	case lines[0] == c.ContractLine+"\r":
		return refuse("line 1 ends with \\r\\n; it must be the card's line 1 byte for byte, ended by \\n")
	case lines[0] != c.ContractLine:
		return refuse("line 1 %s is not the card's line 1 %s", strconv.Quote(text.Truncate(lines[0], 120)), strconv.Quote(c.ContractLine))
	case len(lines) < 2 || lines[1] == "" && len(lines) == 2:
		return refuse("there is no line 2, the status (DONE, BLOCKED or ABSTAIN)")
	}
	word, note, hasNote := strings.Cut(lines[1], " ")
	switch Status(word) {
	case StatusDone, StatusBlocked, StatusAbstain:
	default:
		return refuse("line 2 %s does not begin with DONE, BLOCKED or ABSTAIN", strconv.Quote(text.Truncate(lines[1], 120)))
	}
	switch {
	case hasNote && note == "":
		return refuse("line 2 has a space after %s but no note", word)
	case strings.IndexFunc(note, unicode.IsControl) >= 0:
		return refuse("line 2's note holds a control character")
	}
	r.Status, r.Note = Status(word), note
	if r.Status == StatusDone {
		r.Verdict = VerdictOK
	} else {
		r.Verdict = VerdictBlocked
	}
	return r
}

func countLines(b []byte) int {
	n := bytes.Count(b, []byte("\n"))
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}

// The two marks of a report the machinery wrote.
const (
	// MachineryPrefix opens line 1 of a report the machinery wrote. It is
	// never a card's contract line: a label holds no space.
	MachineryPrefix = "RESULT: BLOCKED "
	// MachineryWrittenBy is line 2 of a report the machinery wrote; it is
	// not a status, so CheckResult never counts the report ok.
	MachineryWrittenBy = "written-by: nwdes swarm"
)

// MachineryResult is the RESULT.md the machinery writes for a card that
// published none, or whose report could not be read: line 1
// `RESULT: BLOCKED <reason> <label>`, line 2 MachineryWrittenBy. The
// reason and label are put on one line without control characters; an
// empty one is written "-". CheckResult never counts it ok, whatever the
// card.
func MachineryResult(c *Card, reason string) []byte {
	label := ""
	if c != nil {
		label = c.Label
	}
	return []byte(MachineryPrefix + oneWord(reason, 200) + " " + oneWord(label, 100) + "\n" + MachineryWrittenBy + "\n")
}

// oneWord makes s one line of printable text, at most n bytes, "-" if
// nothing is left.
func oneWord(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	if s = text.Truncate(text.OneLine(s), n); s == "" {
		return "-"
	}
	return s
}

// IsMachineryResult reports whether b is a report the machinery wrote: line
// 1 opens with MachineryPrefix and line 2 is MachineryWrittenBy.
func IsMachineryResult(b []byte) bool {
	lines := strings.SplitN(string(b), "\n", 3)
	return len(lines) >= 2 && strings.HasPrefix(lines[0], MachineryPrefix) && lines[1] == MachineryWrittenBy
}

// ErrNoResult is returned, wrapped, by FindResult when a job directory
// holds no published report.
var ErrNoResult = errors.New("no " + ResultName + " published")

// FindResult reads <jobDir>/RESULT.md when it is a regular file: it is
// opened without following a symbolic link and without blocking on a FIFO,
// and checked on the open file. A missing name, a symbolic link, a FIFO, a
// directory or any other non-regular file is ErrNoResult. At most
// MaxResultSize+1 bytes are read, so that CheckResult refuses a larger
// report without reading it whole. Any other failure is returned wrapped
// with the path.
func FindResult(jobDir string) ([]byte, error) {
	p := filepath.Join(jobDir, ResultName)
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s does not exist: %w", p, ErrNoResult)
	case errors.Is(err, syscall.ELOOP):
		return nil, fmt.Errorf("%s is a symbolic link: %w", p, ErrNoResult)
	case errors.Is(err, syscall.ENXIO):
		return nil, fmt.Errorf("%s is a socket or device: %w", p, ErrNoResult)
	case err != nil:
		return nil, fmt.Errorf("read the report: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read the report %s: %w", p, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (a %s): %w", p, fileKind(fi.Mode()), ErrNoResult)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxResultSize+1))
	if err != nil {
		return nil, fmt.Errorf("read the report %s: %w", p, err)
	}
	return b, nil
}
