package swarm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/internal/boundedio"
	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/refusal"
)

// The journal is the examiner's route back out of the wall. An examine
// card's job cannot write the repository, so what it would record with
// examine's verbs it writes, one JSON object a line, to
// $NWDES_JOB_DIR/journal.jsonl; when the job has ended the supervisor
// reads it (bounded, never through a link), checks it whole, and replays
// it through the very examine.Examiner calls the verbs make.
const (
	// JournalName is the journal's name in the job directory.
	JournalName = "journal.jsonl"
	// MaxJournalSize bounds the journal file.
	MaxJournalSize = 1 << 20
	// MaxJournalEntries bounds its entries (lines).
	MaxJournalEntries = 1000
	// MaxJournalPublic bounds the public paths one observation cites.
	MaxJournalPublic = 32
)

// The journal's operations, named as the verbs they stand for.
const (
	OpObservationAdd = "observation add"
	OpVerdictSet     = "verdict set"
	OpClose          = "close"
)

// JournalEntry is one line of a journal. Its fields are the flags of the
// verb Op names: observation add (ID, the O<n> the draft issues it, in
// order from O1; Text; Public, the paths of the workspace's public/ it
// cites), verdict set (Expectation, Verdict, Class, Reason,
// Observations) and close (Outcome, Diagnostic).
type JournalEntry struct {
	Op           string   `json:"op"`
	ID           string   `json:"id,omitempty"`
	Text         string   `json:"text,omitempty"`
	Public       []string `json:"public,omitempty"`
	Expectation  string   `json:"expectation,omitempty"`
	Verdict      string   `json:"verdict,omitempty"`
	Class        string   `json:"class,omitempty"`
	Reason       string   `json:"reason,omitempty"`
	Observations []string `json:"observations,omitempty"`
	Outcome      string   `json:"outcome,omitempty"`
	Diagnostic   string   `json:"diagnostic,omitempty"`

	// Line is the entry's line in the journal (not in the JSON).
	Line int `json:"-"`
}

// JournalError lists everything wrong with a journal, each problem
// naming its line. A refusal JournalInvalid wraps it: the journal is
// refused whole and nothing of it is written.
type JournalError struct {
	Problems []string
}

func (e *JournalError) Error() string { return problemList(e.Problems) }

const journalRemedy = "write " + JournalName + " as docs/swarm.md describes (one JSON object a line: observation add, verdict set, close last), then run the card again (git nwdes swarm requeue)"

func journalRefusal(problems []string) error {
	jerr := &JournalError{Problems: problems}
	return refusal.New(refusal.JournalInvalid, journalRemedy, "%s", jerr).Wrap(jerr)
}

// ErrNoJournal is returned, wrapped, by ReadJournal when the job left no
// journal.
var ErrNoJournal = errors.New("no " + JournalName)

var journalLimit = boundedio.Limit{Bytes: MaxJournalSize, Of: "a journal", Refusal: refusal.JournalInvalid,
	Remedy: "record at most " + strconv.Itoa(MaxJournalSize) + " bytes in " + JournalName}

// ReadJournal reads <jobDir>/journal.jsonl as the job left it (openInJob:
// never through a link, never blocking, a regular file), at most
// MaxJournalSize bytes (JournalInvalid past it). No file at all is
// ErrNoJournal; anything else at the name is JournalInvalid.
func ReadJournal(jobDir string) ([]byte, error) {
	f, err := openInJob(jobDir, JournalName)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s does not exist: %w", filepath.Join(jobDir, JournalName), ErrNoJournal)
	}
	if err != nil {
		return nil, journalRefusal([]string{err.Error()})
	}
	defer f.Close()
	return boundedio.ReadAll(f, JournalName, journalLimit)
}

// openInJob opens the file name a job left in its directory: the
// directory is the job's, so the name is opened without following a
// link or blocking on a FIFO, and must be a regular file. A missing one
// is fs.ErrNotExist; anything else that is not a file to read is an
// error saying what it is, beginning with name.
func openInJob(dir, name string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, err
	case errors.Is(err, syscall.ELOOP):
		return nil, errors.New(name + " is a symbolic link (not followed)")
	case errors.Is(err, syscall.ENXIO):
		return nil, errors.New(name + " is a socket or device")
	case err != nil:
		return nil, errors.New(name + " cannot be opened: " + err.Error())
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		what := "is not a regular file"
		if err == nil {
			what += " (" + fi.Mode().Type().String() + ")"
		}
		return nil, errors.New(name + " " + what)
	}
	return f, nil
}

// ParseJournal reads a journal's entries and checks what can be checked
// without the repository: every line one JSON object with only the
// fields of its op; observation IDs issued in order from O1; verdicts
// citing only observations added before them; at most MaxJournalPublic
// public paths an observation, each one public(path) admits (nil admits
// every clean relative path); exactly one close, last. Every problem is
// returned, each naming its line.
func ParseJournal(b []byte, public func(string) bool) ([]JournalEntry, []string) {
	var entries []JournalEntry
	var problems []string
	add := func(line int, format string, args ...any) {
		problems = append(problems, fmt.Sprintf("line %d: ", line)+fmt.Sprintf(format, args...))
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, []string{"the journal is empty; its last entry must be a close"}
	}
	if !utf8.Valid(b) {
		return nil, []string{fmt.Sprintf("the journal is not valid UTF-8 (first bad byte at offset %d)", invalidUTF8At(b))}
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) > MaxJournalEntries {
		return nil, []string{fmt.Sprintf("the journal has %d lines, more than %d", len(lines), MaxJournalEntries)}
	}
	issued := 0
	closes := 0
	for i, l := range lines {
		n := i + 1
		if strings.TrimSpace(l) == "" {
			add(n, "is empty (one JSON object a line, no blank lines)")
			continue
		}
		dec := json.NewDecoder(strings.NewReader(l))
		dec.DisallowUnknownFields()
		var e JournalEntry
		if err := dec.Decode(&e); err != nil {
			add(n, "is not a journal entry: %s", text.OneLine(err.Error()))
			continue
		}
		if dec.More() {
			add(n, "holds more than one JSON object")
			continue
		}
		e.Line = n
		for _, why := range e.problems(issued, public) {
			add(n, "%s", why)
		}
		switch e.Op {
		case OpObservationAdd:
			issued++
		case OpClose:
			closes++
			if n != len(lines) {
				add(n, "close is not the last entry (%d more follow)", len(lines)-n)
			}
		}
		entries = append(entries, e)
	}
	if closes == 0 {
		problems = append(problems, "the journal has no close; its last entry must be one")
	} else if closes > 1 {
		problems = append(problems, fmt.Sprintf("the journal closes %d times; it closes once, last", closes))
	}
	return entries, problems
}

// problems checks one entry's fields for its op, issued observations
// having been added before it.
func (e *JournalEntry) problems(issued int, public func(string) bool) []string {
	var p []string
	given := map[string]bool{
		"id": e.ID != "", "text": e.Text != "", "public": e.Public != nil, "expectation": e.Expectation != "",
		"verdict": e.Verdict != "", "class": e.Class != "", "reason": e.Reason != "", "observations": e.Observations != nil,
		"outcome": e.Outcome != "", "diagnostic": e.Diagnostic != "",
	}
	var fields []string
	switch e.Op {
	case OpObservationAdd:
		fields = []string{"id", "text", "public"}
		if want := "O" + strconv.Itoa(issued+1); e.ID != want {
			p = append(p, fmt.Sprintf("observation add: id %s is not %s (ids are issued in order from O1)", strconv.Quote(text.Truncate(e.ID, 20)), want))
		}
		if e.Text == "" {
			p = append(p, "observation add: text is empty")
		}
		if len(e.Public) > MaxJournalPublic {
			p = append(p, fmt.Sprintf("observation add: cites %d public paths, more than %d", len(e.Public), MaxJournalPublic))
		}
		for _, path := range e.Public {
			if !cleanPublic(path) || public != nil && !public(path) {
				p = append(p, fmt.Sprintf("observation add: %s is not a file of the workspace's public projection", strconv.Quote(text.Truncate(path, 120))))
			}
		}
	case OpVerdictSet:
		fields = []string{"expectation", "verdict", "class", "reason", "observations"}
		if e.Expectation == "" || e.Verdict == "" {
			p = append(p, "verdict set: names an expectation and a verdict")
		}
		for _, o := range e.Observations {
			n, err := strconv.Atoi(strings.TrimPrefix(o, "O"))
			if !strings.HasPrefix(o, "O") || err != nil || n < 1 || n > issued || "O"+strconv.Itoa(n) != o {
				p = append(p, fmt.Sprintf("verdict set: cites %s, which no observation add before it issued", strconv.Quote(text.Truncate(o, 20))))
			}
		}
	case OpClose:
		fields = []string{"outcome", "diagnostic"}
		if e.Outcome == "" || e.Diagnostic == "" {
			p = append(p, "close: names an outcome (accepted) and a diagnostic")
		}
	default:
		return []string{fmt.Sprintf("op %s is not %q, %q or %q", strconv.Quote(text.Truncate(e.Op, 40)), OpObservationAdd, OpVerdictSet, OpClose)}
	}
	allowed := map[string]bool{}
	for _, f := range fields {
		allowed[f] = true
	}
	for _, f := range []string{"id", "text", "public", "expectation", "verdict", "class", "reason", "observations", "outcome", "diagnostic"} {
		if given[f] && !allowed[f] {
			p = append(p, fmt.Sprintf("%s takes no %s", e.Op, f))
		}
	}
	return p
}

// cleanPublic reports whether path is a clean relative slash path.
func cleanPublic(path string) bool {
	return path != "" && !strings.HasPrefix(path, "/") && filepath.ToSlash(filepath.Clean(path)) == path && path != "." &&
		path != ".." && !strings.HasPrefix(path, "../") && !strings.ContainsAny(path, "\\\x00")
}

// observationText is what observation add records of an entry: its text,
// then, when it cites public files, a last line naming them.
func (e *JournalEntry) observationText() []byte {
	if len(e.Public) == 0 {
		return []byte(e.Text)
	}
	t := e.Text
	if !strings.HasSuffix(t, "\n") {
		t += "\n"
	}
	return []byte(t + "public evidence: " + strings.Join(e.Public, ", ") + "\n")
}

// Replay runs a journal through x, the examine verbs' own library calls,
// on target t: it opens a draft (x.Drafts, which must be a fresh ref of
// the examine.ReplayDrafts family), adds each observation, sets each
// verdict, and, when every entry before it was taken, closes. Every entry
// refused is a problem naming its line and its refusal; with any problem
// the close is not made and nothing is published (the caller removes the
// private draft), and the problems come back as a JournalInvalid refusal.
// An error that is no refusal (the store failed) is returned as it is.
func Replay(ctx context.Context, x *examine.Examiner, t examine.Target, entries []JournalEntry) (*examine.Examination, error) {
	if _, err := x.Open(ctx, t, false); err != nil {
		return nil, err
	}
	var problems []string
	refused := func(e JournalEntry, err error) error {
		rf, ok := refusal.As(err)
		if !ok {
			return err
		}
		problems = append(problems, fmt.Sprintf("line %d: %s: %s: %s", e.Line, e.Op, rf.Name, text.OneLine(rf.Detail)))
		return nil
	}
	for _, e := range entries {
		var err error
		switch e.Op {
		case OpObservationAdd:
			var res *examine.Result
			res, err = x.AddObservation(ctx, t, examine.SourceExaminer, e.observationText())
			if err == nil && res.Message != e.ID {
				problems = append(problems, fmt.Sprintf("line %d: observation add: the draft issued %s, not %s", e.Line, res.Message, e.ID))
			}
		case OpVerdictSet:
			in := examine.VerdictInput{Expectation: examine.ExpectationID(e.Expectation), Verdict: examine.Verdict(e.Verdict),
				Class: examine.Class(e.Class), Reason: e.Reason}
			for _, o := range e.Observations {
				in.Observations = append(in.Observations, examine.ObservationID(o))
			}
			_, err = x.SetVerdict(ctx, t, in)
		case OpClose:
			if len(problems) > 0 {
				problems = append(problems, fmt.Sprintf("line %d: close: not made (%s)", e.Line, text.Plural(len(problems), "entry before it was refused", "entries before it were refused")))
				continue
			}
			var ex *examine.Examination
			ex, _, err = x.Close(ctx, t, e.Outcome, e.Diagnostic)
			if err == nil || ex != nil {
				return ex, err // published (a brief not written is said, not undone)
			}
		}
		if err != nil {
			if err := refused(e, err); err != nil {
				return nil, err
			}
		}
	}
	return nil, journalRefusal(problems)
}
