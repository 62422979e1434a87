package trial

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/refusal"
)

// NonceRef holds the store reading's nonce: written by compare-and-swap at
// the start of the readings and read back at their end. It is local (never
// pushed or fetched) and keeps no history, so however many preflights run
// nothing any walk must cross grows.
const NonceRef gitstore.RefName = "refs/nwdes-local/trial/nonce"

// KindNonce is the record at NonceRef's "nonce".
//
// trial.nonce v1: {"nonce": 32 lower-case hex digits}, fresh for each
// preflight.
const KindNonce gitstore.Kind = "trial.nonce"

const noncePath = "nonce"

// Register declares the preflight's kind of record and its ref.
func Register(r *gitstore.Registry) error {
	if err := r.DeclareKind(gitstore.KindSpec{Kind: KindNonce, Version: 1, Check: checkNonce}); err != nil {
		return err
	}
	return r.DeclareRef(gitstore.RefSpec{Ref: NonceRef, Policy: gitstore.PolicyLocal,
		History: gitstore.HistoryLatest, Layout: []string{noncePath}, Kinds: []gitstore.Kind{KindNonce}})
}

type nonceBody struct {
	Nonce string `json:"nonce"`
}

func checkNonce(_ gitstore.View, path string, r *gitstore.Record) error {
	_, err := decodeNonce(r)
	return err
}

func decodeNonce(r *gitstore.Record) (string, error) {
	var b nonceBody
	if err := r.Decode(&b); err != nil {
		return "", err
	}
	if len(b.Nonce) != 32 || strings.Trim(b.Nonce, "0123456789abcdef") != "" {
		return "", refusal.NewUnreadable(refusal.RecordMalformed, "run git nwdes fsck",
			"%s record: nonce %q is not 32 hex digits", KindNonce, text.Truncate(b.Nonce, 60))
	}
	return b.Nonce, nil
}

// Limits of a Request.
const (
	// DefaultMaxLead is how far ahead of the last reading a window may open
	// when the request does not say: further ahead, it is not the window
	// this dispatch opens.
	DefaultMaxLead = 15 * time.Minute
	// MaxLeadLimit is the most a request may declare.
	MaxLeadLimit = time.Hour
	// MaxWitnessInterval is the longest wait for a witness to advance.
	MaxWitnessInterval = 10 * time.Minute
)

// Request is what a preflight reads, decoded from the start record's
// "readings" object (ParseRequest):
//
//	{"window": {"open": "2026-05-01T10:00:00Z", "close": "2026-05-01T11:00:00Z", "max_lead_ms": 900000},
//	 "supervisor": {"pid": 4242, "start": 1234567, "host": "box", "boot": "…", "owner": "…"},
//	 "witness": {"file": "/abs/path/heartbeat", "interval_ms": 5000}}
//
// The witness names either "file" (an absolute path whose modification
// time, size or content the supervisor changes) or "ref" (a ref whose tip it
// moves), never both. max_lead_ms may be left out (DefaultMaxLead); host,
// boot and owner may be left out (the supervisor is then read on this host,
// in this boot), so a swarm lease's holder can be given as it is.
type Request struct {
	Window     WindowRequest     `json:"window"`
	Supervisor SupervisorRequest `json:"supervisor"`
	Witness    WitnessRequest    `json:"witness"`
}

// WindowRequest is the window the start record declares, RFC 3339 times.
type WindowRequest struct {
	Open  string `json:"open"`
	Close string `json:"close"`
	// MaxLeadMS bounds how far ahead of the last reading Open may be, in
	// milliseconds; 0 is DefaultMaxLead.
	MaxLeadMS int64 `json:"max_lead_ms,omitempty"`
}

// SupervisorRequest names the supervisor process: its pid and its start
// time in clock ticks since boot (/proc/<pid>/stat field 22), which with
// the pid names one process rather than whichever reuses the pid. Host and
// Boot, when given, are where the pid means something.
type SupervisorRequest struct {
	Owner string `json:"owner,omitempty"`
	Host  string `json:"host,omitempty"`
	Boot  string `json:"boot,omitempty"`
	PID   int    `json:"pid"`
	Start uint64 `json:"start"`
}

// WitnessRequest names what the supervisor advances while it runs, and how
// long to wait for it to advance.
type WitnessRequest struct {
	File       string `json:"file,omitempty"`
	Ref        string `json:"ref,omitempty"`
	IntervalMS int64  `json:"interval_ms"`
}

// requestKeys are the exact spellings of every key a Request holds:
// encoding/json matches keys regardless of case and keeps the last of two
// equal keys, and a strict reading refuses both.
var requestKeys = map[string]bool{
	"window": true, "supervisor": true, "witness": true,
	"open": true, "close": true, "max_lead_ms": true,
	"owner": true, "host": true, "boot": true, "pid": true, "start": true,
	"file": true, "ref": true, "interval_ms": true,
}

func invalid(format string, args ...any) error {
	return refusal.New(refusal.TrialInvalid,
		"fix the start record's readings object (window, supervisor, witness)",
		"readings: "+format, args...)
}

// ParseRequest decodes a start record's readings object strictly: an
// unknown key, a key spelt in another case, a key given twice, trailing
// data or a value out of range is refused with TrialInvalid.
func ParseRequest(raw json.RawMessage) (*Request, error) {
	if err := checkKeys(raw); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var r Request
	if err := dec.Decode(&r); err != nil {
		return nil, invalid("%v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, invalid("data after the object")
	}
	if _, err := r.plan(); err != nil {
		return nil, err
	}
	return &r, nil
}

// checkKeys walks raw's tokens and refuses keys not spelt exactly as
// declared, and keys an object holds twice.
func checkKeys(raw []byte) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	first, err := dec.Token()
	if err != nil || first != json.Delim('{') {
		return invalid("not a JSON object")
	}
	return walkObject(dec)
}

func walkObject(dec *json.Decoder) error {
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return invalid("%v", err)
		}
		key, _ := t.(string)
		switch {
		case !requestKeys[key]:
			return invalid("unknown key %q", text.TerminalLine(key))
		case seen[key]:
			return invalid("key %q given twice", key)
		}
		seen[key] = true
		if err := walkValue(dec); err != nil {
			return err
		}
	}
	_, err := dec.Token() // the closing brace
	if err != nil {
		return invalid("%v", err)
	}
	return nil
}

func walkValue(dec *json.Decoder) error {
	t, err := dec.Token()
	if err != nil {
		return invalid("%v", err)
	}
	switch t {
	case json.Delim('{'):
		return walkObject(dec)
	case json.Delim('['):
		for dec.More() {
			if err := walkValue(dec); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil {
			return invalid("%v", err)
		}
	}
	return nil
}

// plan is a validated Request.
type plan struct {
	open, close time.Time
	maxLead     time.Duration
	interval    time.Duration
}

func (r *Request) plan() (plan, error) {
	var p plan
	var err error
	if p.open, err = time.Parse(time.RFC3339, r.Window.Open); err != nil {
		return p, invalid("window.open %q is not an RFC 3339 time", text.TerminalLine(r.Window.Open))
	}
	if p.close, err = time.Parse(time.RFC3339, r.Window.Close); err != nil {
		return p, invalid("window.close %q is not an RFC 3339 time", text.TerminalLine(r.Window.Close))
	}
	if !p.close.After(p.open) {
		return p, invalid("window.close %s is not after window.open %s", r.Window.Close, r.Window.Open)
	}
	switch lead := time.Duration(r.Window.MaxLeadMS) * time.Millisecond; {
	case r.Window.MaxLeadMS == 0:
		p.maxLead = DefaultMaxLead
	case r.Window.MaxLeadMS < 0 || lead > MaxLeadLimit:
		return p, invalid("window.max_lead_ms %d is outside 1..%d", r.Window.MaxLeadMS, MaxLeadLimit.Milliseconds())
	default:
		p.maxLead = lead
	}
	if r.Supervisor.PID <= 0 {
		return p, invalid("supervisor.pid %d is not a process id", r.Supervisor.PID)
	}
	if r.Supervisor.Start == 0 {
		return p, invalid("supervisor.start is required: the pid's start time (/proc/<pid>/stat field 22) tells it from a later process with the same pid")
	}
	w := r.Witness
	switch {
	case (w.File == "") == (w.Ref == ""):
		return p, invalid("witness names one of file and ref")
	case w.File != "" && (!filepath.IsAbs(w.File) || filepath.Clean(w.File) != w.File || strings.ContainsRune(w.File, 0)):
		return p, invalid("witness.file %q is not an absolute, clean path", text.TerminalLine(w.File))
	case w.Ref != "":
		if err := gitstore.RefName(w.Ref).Validate(); err != nil {
			return p, invalid("witness.ref: %v", err)
		}
	}
	p.interval = time.Duration(w.IntervalMS) * time.Millisecond
	if w.IntervalMS <= 0 || p.interval > MaxWitnessInterval {
		return p, invalid("witness.interval_ms %d is outside 1..%d", w.IntervalMS, MaxWitnessInterval.Milliseconds())
	}
	return p, nil
}

// Answer is what a reading says.
type Answer string

const (
	// AnswerTrue: the reading was taken and the precondition holds.
	AnswerTrue Answer = "true"
	// AnswerFalse: the reading was taken and the precondition does not hold.
	AnswerFalse Answer = "false"
	// AnswerUnknown: the reading could not be taken. It is never false,
	// and never the answer of another reading.
	AnswerUnknown Answer = "unknown"
)

// ReadingName names one reading.
type ReadingName string

// The readings, in the order Readings lists them.
const (
	// ReadingWindow: the declared window is ahead, and is the one this
	// dispatch opens.
	ReadingWindow ReadingName = "window"
	// ReadingSupervisor: the supervisor is running, by its state letter,
	// at both observations.
	ReadingSupervisor ReadingName = "supervisor"
	// ReadingSession: the supervisor is outside the caller's session.
	ReadingSession ReadingName = "session"
	// ReadingWitness: the supervisor advanced its witness between two
	// observations.
	ReadingWitness ReadingName = "witness"
	// ReadingStore: the store is the same store at the start and at the
	// end of the readings.
	ReadingStore ReadingName = "store"
)

// Reading is one answered precondition: At is the clock reading taken when
// its last observation was made.
type Reading struct {
	Name   ReadingName
	Answer Answer
	Detail string
	At     time.Time
}

// Span is the time the readings took: from the first clock reading to the
// last (the window's).
type Span struct {
	First, Last time.Time
}

// Readings are a preflight's answers, in the order window, supervisor,
// session, witness, store.
type Readings struct {
	List []Reading
	Span Span
}

// Ready reports whether every reading is true.
func (r *Readings) Ready() bool {
	for _, x := range r.List {
		if x.Answer != AnswerTrue {
			return false
		}
	}
	return len(r.List) > 0
}

// Overall is the readings taken together: AnswerTrue when every reading
// is true; AnswerFalse when one is false (a precondition read and found
// not to hold, whatever else could not be read); AnswerUnknown when none
// is false but one could not be taken, or when there are none. The CLI
// maps it to an exit code.
func (r *Readings) Overall() Answer {
	if len(r.List) == 0 {
		return AnswerUnknown
	}
	all := AnswerTrue
	for _, x := range r.List {
		switch x.Answer {
		case AnswerTrue:
		case AnswerFalse:
			return AnswerFalse
		default:
			all = AnswerUnknown
		}
	}
	return all
}

// Reading returns the reading of a name.
func (r *Readings) Reading(name ReadingName) (Reading, bool) {
	for _, x := range r.List {
		if x.Name == name {
			return x, true
		}
	}
	return Reading{}, false
}

const readingStamp = time.RFC3339Nano

type readingsJSON struct {
	Ready    bool          `json:"ready"`
	Readings []readingJSON `json:"readings"`
	Span     spanJSON      `json:"span"`
}

type readingJSON struct {
	Name   ReadingName `json:"name"`
	Answer Answer      `json:"answer"`
	Detail string      `json:"detail"`
	At     string      `json:"at"`
}

type spanJSON struct {
	First      string `json:"first"`
	Last       string `json:"last"`
	DurationMS int64  `json:"duration_ms"`
}

// JSON renders the readings as one object, the same bytes for the same
// readings (times in UTC, RFC 3339 with nanoseconds; no trailing newline):
//
//	{"ready":false,
//	 "readings":[{"name":"window","answer":"true","detail":"…","at":"…"}, …],
//	 "span":{"first":"…","last":"…","duration_ms":1234}}
func (r *Readings) JSON() []byte {
	out := readingsJSON{Ready: r.Ready(), Readings: []readingJSON{}, Span: spanJSON{
		First: r.Span.First.UTC().Format(readingStamp), Last: r.Span.Last.UTC().Format(readingStamp),
		DurationMS: r.Span.Last.Sub(r.Span.First).Milliseconds(),
	}}
	for _, x := range r.List {
		out.Readings = append(out.Readings, readingJSON{Name: x.Name, Answer: x.Answer, Detail: x.Detail, At: x.At.UTC().Format(readingStamp)})
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(out) // strings, bools and numbers only: it cannot fail
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// probes are where the readings look: procfs, and a test's hook.
type probes struct {
	proc string
	// beforeStoreEnd runs between the store's two readings.
	beforeStoreEnd func()
	// afterWitnessSeen runs after the witness's first sighting, before
	// the wait: a test moves the witness there, so the move falls between
	// the two sightings whatever the machine's load.
	afterWitnessSeen func()
}

// Store is what a preflight asks of the store: the nonce it writes and
// reads back, the witness refs, the registry that declares the nonce, and
// the repository's location, whose common directory's identity tells one
// store from a replacement. Only the git store has a location.
type Store interface {
	gitstore.RecordWriter
	Registry() *gitstore.Registry
	Location() gitrepo.Location
}

// Preflight reads a trial's preconditions, immediately before the dispatch
// that opens its window, in this order:
//
//  1. the store's identity (device and inode of its common directory), and
//     a fresh nonce written to NonceRef by compare-and-swap;
//  2. the supervisor (first observation) and its witness (first);
//  3. after the witness interval, the witness again;
//  4. the store again: the same device and inode, the nonce read back;
//  5. the supervisor again, last of all but the clock, with its session,
//     since a supervisor that exits while the others are read must not be
//     published as ready;
//  6. one clock reading, against which the window is judged.
//
// A malformed request is refused with TrialInvalid, a store opened without
// Register with KindNotDeclared; a cancelled ctx ends the run with its
// error. Everything else is an answer: a reading that could not be taken
// is unknown. clock is time.Now when nil.
func Preflight(ctx context.Context, in Request, st Store, clock func() time.Time) (*Readings, error) {
	return preflight(ctx, in, st, clock, probes{proc: "/proc"})
}

func preflight(ctx context.Context, in Request, st Store, clock func() time.Time, pr probes) (*Readings, error) {
	p, err := in.plan()
	if err != nil {
		return nil, err
	}
	if st == nil {
		return nil, errors.New("trial preflight: no store")
	}
	if _, ok := st.Registry().Kind(KindNonce); !ok {
		return nil, refusal.New(refusal.KindNotDeclared, "open the store with a registry that includes trial.Register",
			"record kind %q is not declared: the store reading cannot write its nonce", KindNonce)
	}
	if clock == nil {
		clock = time.Now
	}
	first := clock()

	mark, err := storeStart(ctx, st)
	if err != nil {
		return nil, err
	}
	sup1 := observe(pr.proc, in.Supervisor)
	w1 := observeWitness(st, in.Witness)
	if pr.afterWitnessSeen != nil {
		pr.afterWitnessSeen()
	}
	timer := time.NewTimer(p.interval)
	select {
	case <-ctx.Done():
		timer.Stop()
		return nil, fmt.Errorf("trial preflight: waiting for the witness: %w", ctx.Err())
	case <-timer.C:
	}
	w2 := observeWitness(st, in.Witness)
	witness := judgeWitness(in.Witness, p.interval, w1, w2)
	witness.At = clock()

	if pr.beforeStoreEnd != nil {
		pr.beforeStoreEnd()
	}
	store := storeEnd(st, mark)
	store.At = clock()

	sup2 := observe(pr.proc, in.Supervisor)
	sid, sidErr := callerSession()
	supervisor := judgeSupervisor(sup1, sup2)
	session := judgeSession(in.Supervisor.PID, sup2, sid, sidErr)
	supervisor.At = clock()
	session.At = supervisor.At

	last := clock()
	window := judgeWindow(p, last)
	window.At = last
	return &Readings{List: []Reading{window, supervisor, session, witness, store}, Span: Span{First: first, Last: last}}, nil
}

// judgeWindow decides the window against one clock reading: both bounds
// and the moment reported are that one instant.
func judgeWindow(p plan, now time.Time) Reading {
	r := Reading{Name: ReadingWindow, Answer: AnswerFalse}
	open, close := p.open.UTC().Format(time.RFC3339Nano), p.close.UTC().Format(time.RFC3339Nano)
	lead := p.open.Sub(now)
	switch {
	case lead <= 0:
		r.Detail = fmt.Sprintf("the window opened at %s, %s before this reading: a trial already running", open, -lead)
	case lead > p.maxLead:
		r.Detail = fmt.Sprintf("the window opens at %s, %s after this reading, more than the %s a dispatch may lead it by: not the window this dispatch opens", open, lead, p.maxLead)
	default:
		r.Answer = AnswerTrue
		r.Detail = fmt.Sprintf("the window opens at %s, %s after this reading (at most %s), and closes at %s", open, lead, p.maxLead, close)
	}
	return r
}

// procStat is what a reading takes from /proc/<pid>/stat.
type procStat struct {
	state   byte   // field 3
	session int    // field 6
	start   uint64 // field 22, clock ticks since boot
}

// errGone: no process has the pid.
var errGone = errors.New("no such process")

// parseStat reads the fields of /proc/<pid>/stat a reading needs. The
// command name (field 2) is in parentheses and may hold anything, spaces
// and parentheses included: fields are counted after its last ')'.
func parseStat(b []byte) (procStat, error) {
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, errors.New("stat has no command name")
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return procStat{}, fmt.Errorf("stat has %d fields after the command name, not 20 or more", len(f))
	}
	if len(f[0]) != 1 {
		return procStat{}, fmt.Errorf("state %q is not one letter", text.Truncate(f[0], 20))
	}
	sid, err := strconv.Atoi(f[3])
	if err != nil {
		return procStat{}, fmt.Errorf("session %q is not a number", text.Truncate(f[3], 20))
	}
	start, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return procStat{}, fmt.Errorf("start time %q is not a number", text.Truncate(f[19], 20))
	}
	return procStat{state: f[0][0], session: sid, start: start}, nil
}

// runState decides from the kernel's state letter (proc(5), every letter
// Linux has defined) whether the process runs: it polls, or will once it
// is scheduled. Every liveness reading goes through here. A letter not
// covered is unknown, never running and never stopped.
func runState(letter byte) (Answer, string) {
	switch letter {
	case 'R':
		return AnswerTrue, "running"
	case 'S':
		return AnswerTrue, "sleeping"
	case 'D':
		return AnswerTrue, "in an uninterruptible wait"
	case 'I':
		return AnswerTrue, "idle"
	case 'W':
		return AnswerTrue, "waking" // "paging" before Linux 2.6.0
	case 'Z':
		return AnswerFalse, "a zombie: it exited and polls nothing"
	case 'T':
		return AnswerFalse, "stopped by a signal"
	case 't':
		return AnswerFalse, "stopped by a tracer"
	case 'X', 'x':
		return AnswerFalse, "dead"
	}
	return AnswerUnknown, "in a state this reader does not know"
}

// observation is one look at the supervisor.
type observation struct {
	answer Answer
	detail string
	// stat is the supervisor's own stat, when the pid and start time name
	// it; nil when it could not be read or is another process.
	stat *procStat
}

func observe(proc string, s SupervisorRequest) observation {
	unknown := func(format string, args ...any) observation {
		return observation{answer: AnswerUnknown, detail: fmt.Sprintf(format, args...)}
	}
	if s.Host != "" {
		host, err := os.Hostname()
		if err != nil {
			return unknown("this host's name cannot be read: %v", err)
		}
		if host != s.Host {
			return unknown("pid %d is on host %s; this is %s, whose /proc cannot show it", s.PID, text.TerminalLine(s.Host), text.TerminalLine(host))
		}
	}
	if s.Boot != "" {
		boot, err := bootID(proc)
		if err != nil {
			return unknown("this boot's id cannot be read: %v", err)
		}
		if boot != s.Boot {
			return unknown("pid %d is of boot %s; this is boot %s, whose /proc cannot show it", s.PID, text.TerminalLine(s.Boot), text.TerminalLine(boot))
		}
	}
	// A /proc that does not show the caller would show no supervisor
	// either: that is not a process gone.
	if _, err := readProcStat(proc, os.Getpid()); err != nil {
		return unknown("%s does not show this process: %v", proc, err)
	}
	st, err := readProcStat(proc, s.PID)
	switch {
	case errors.Is(err, errGone):
		return observation{answer: AnswerFalse, detail: fmt.Sprintf("pid %d is gone", s.PID)}
	case err != nil:
		return unknown("pid %d cannot be read: %v", s.PID, err)
	case st.start != s.Start:
		return observation{answer: AnswerFalse,
			detail: fmt.Sprintf("pid %d names another process now (started at tick %d, not %d)", s.PID, st.start, s.Start)}
	}
	answer, what := runState(st.state)
	return observation{answer: answer, detail: fmt.Sprintf("pid %d is %s (state %q)", s.PID, what, rune(st.state)), stat: &st}
}

// judgeSupervisor combines the two observations: not running at either is
// false (a process that exited does not come back), unread at either and
// not running at neither is unknown.
func judgeSupervisor(first, last observation) Reading {
	r := Reading{Name: ReadingSupervisor, Answer: AnswerTrue}
	for _, o := range []observation{first, last} {
		switch {
		case o.answer == AnswerFalse:
			r.Answer = AnswerFalse
		case o.answer == AnswerUnknown && r.Answer == AnswerTrue:
			r.Answer = AnswerUnknown
		}
	}
	if first.detail == last.detail {
		r.Detail = first.detail + ", at both observations"
	} else {
		r.Detail = "first observation: " + first.detail + "; last: " + last.detail
	}
	return r
}

// judgeSession reads the session from the last observation's own stat.
func judgeSession(pid int, last observation, caller int, callerErr error) Reading {
	r := Reading{Name: ReadingSession, Answer: AnswerUnknown}
	switch {
	case last.stat == nil:
		r.Detail = "the supervisor's session cannot be read: " + last.detail
	case callerErr != nil:
		r.Detail = fmt.Sprintf("the caller's session cannot be read: %v", callerErr)
	case last.stat.session == caller:
		r.Answer = AnswerFalse
		r.Detail = fmt.Sprintf("pid %d is in the caller's session %d: it ends with the shell that started it", pid, caller)
	default:
		r.Answer = AnswerTrue
		r.Detail = fmt.Sprintf("pid %d is in session %d, not the caller's %d", pid, last.stat.session, caller)
	}
	return r
}

// sighting is one look at the witness.
type sighting struct {
	present bool
	mark    string // what changes when the witness advances
	problem string // why it could not be looked at
}

func observeWitness(st gitstore.RecordReader, w WitnessRequest) sighting {
	if w.Ref != "" {
		tip, err := st.Tip(gitstore.RefName(w.Ref))
		switch {
		case err != nil:
			return sighting{problem: err.Error()}
		case tip.IsZero():
			return sighting{}
		}
		return sighting{present: true, mark: tip.String()}
	}
	f, err := os.Open(w.File)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return sighting{}
	}
	if err != nil {
		return sighting{problem: err.Error()}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return sighting{problem: err.Error()}
	}
	if !fi.Mode().IsRegular() {
		return sighting{problem: fmt.Sprintf("%s is not a regular file (%s)", text.TerminalLine(w.File), fi.Mode().Type())}
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return sighting{problem: err.Error()}
	}
	return sighting{present: true, mark: fmt.Sprintf("%d %d %x", fi.ModTime().UnixNano(), fi.Size(), h.Sum(nil))}
}

func judgeWitness(w WitnessRequest, interval time.Duration, first, last sighting) Reading {
	what := "witness file " + text.TerminalLine(w.File)
	if w.Ref != "" {
		what = "witness ref " + w.Ref
	}
	r := Reading{Name: ReadingWitness, Answer: AnswerFalse}
	switch {
	case first.problem != "":
		r.Answer, r.Detail = AnswerUnknown, "the "+what+" cannot be read at the first observation: "+text.TerminalLine(first.problem)
	case last.problem != "":
		r.Answer, r.Detail = AnswerUnknown, "the "+what+" cannot be read at the last observation: "+text.TerminalLine(last.problem)
	case !first.present && !last.present:
		r.Detail = fmt.Sprintf("the %s is absent at both observations, %s apart: nothing writes it", what, interval)
	case !last.present:
		r.Detail = fmt.Sprintf("the %s was removed within %s", what, interval)
	case !first.present:
		r.Answer, r.Detail = AnswerTrue, fmt.Sprintf("the %s appeared within %s", what, interval)
	case first.mark == last.mark:
		r.Detail = fmt.Sprintf("the %s did not advance within %s", what, interval)
	default:
		r.Answer, r.Detail = AnswerTrue, fmt.Sprintf("the %s advanced within %s", what, interval)
	}
	return r
}

// fileID is a file's device and inode.
type fileID struct{ dev, ino uint64 }

func (id fileID) String() string { return fmt.Sprintf("device %d inode %d", id.dev, id.ino) }

// storeMark is the store reading's start: the common directory's identity
// and the nonce written, or why they could not be taken.
type storeMark struct {
	dir     string
	id      fileID
	commit  oid.ID
	nonce   string
	problem string
}

func storeStart(ctx context.Context, st Store) (storeMark, error) {
	m := storeMark{dir: st.Location().CommonDir}
	id, err := fileIdentity(m.dir)
	if err != nil {
		m.problem = fmt.Sprintf("the common directory cannot be read: %v", err)
		return m, nil
	}
	m.id = id
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		m.problem = fmt.Sprintf("no nonce: %v", err)
		return m, nil
	}
	m.nonce = hex.EncodeToString(b[:])
	rec, err := gitstore.NewRecord(KindNonce, 1, nonceBody{Nonce: m.nonce})
	if err != nil {
		return m, err
	}
	m.commit, err = st.Change(ctx, NonceRef, "trial: preflight nonce", func(tx gitstore.Edit) error {
		return tx.Put(noncePath, rec)
	})
	if ctx.Err() != nil {
		return m, fmt.Errorf("trial preflight: writing the nonce: %w", ctx.Err())
	}
	if err != nil {
		m.problem = fmt.Sprintf("the nonce cannot be written to %s: %v", NonceRef, err)
	}
	return m, nil
}

// storeEnd reads the nonce back, then the common directory's identity
// again, last, so that a replacement up to the end of the reading is seen.
func storeEnd(st gitstore.RecordReader, m storeMark) Reading {
	r := Reading{Name: ReadingStore, Answer: AnswerUnknown}
	dir := text.TerminalLine(m.dir)
	if m.problem != "" {
		r.Detail = "the first reading of " + dir + " could not be taken: " + text.TerminalLine(m.problem)
		return r
	}
	tip, tipErr := st.Tip(NonceRef)
	var nonce string
	var nonceErr error
	if tipErr == nil && !tip.IsZero() {
		nonce, nonceErr = readNonce(st, tip)
	}
	id, idErr := fileIdentity(m.dir)
	switch {
	case errors.Is(idErr, fs.ErrNotExist):
		r.Answer, r.Detail = AnswerFalse, fmt.Sprintf("%s is gone: the store was moved or removed during the readings", dir)
	case idErr != nil:
		r.Detail = fmt.Sprintf("the common directory cannot be read again: %v", text.TerminalLine(idErr.Error()))
	case id != m.id:
		r.Answer, r.Detail = AnswerFalse, fmt.Sprintf("%s was %s and is %s: another repository took its place during the readings", dir, m.id, id)
	case tipErr != nil:
		r.Detail = fmt.Sprintf("%s cannot be read back: %v", NonceRef, text.TerminalLine(tipErr.Error()))
	case tip.IsZero():
		r.Answer, r.Detail = AnswerFalse, fmt.Sprintf("%s is absent from %s at the end: not the store the nonce was written to", NonceRef, dir)
	case nonceErr != nil:
		r.Detail = fmt.Sprintf("the nonce at %s cannot be read back: %v", NonceRef, text.TerminalLine(nonceErr.Error()))
	case nonce != m.nonce:
		// Another preflight may have written its own nonce: the store
		// may be the same, and this run cannot tell.
		r.Detail = fmt.Sprintf("%s was moved by another writer during the readings (nonce %s, not %s): this one cannot be read back", NonceRef, nonce, m.nonce)
	default:
		r.Answer, r.Detail = AnswerTrue, fmt.Sprintf("%s is %s at both readings, and nonce %s reads back from %s", dir, id, m.nonce, NonceRef)
	}
	return r
}

func readNonce(st gitstore.RecordReader, tip oid.ID) (string, error) {
	tx, err := st.RecordsAt(NonceRef, tip)
	if err != nil {
		return "", err
	}
	rec, err := tx.Get(noncePath)
	if err != nil {
		return "", err
	}
	if rec.Kind != KindNonce || rec.V != 1 {
		return "", fmt.Errorf("a %s v%d record, not a %s v1", rec.Kind, rec.V, KindNonce)
	}
	return decodeNonce(rec)
}
