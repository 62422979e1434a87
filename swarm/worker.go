package swarm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/nwdes/nwdes/internal/lazyre"
	"github.com/nwdes/nwdes/internal/names"
	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/refusal"
)

// Worker is a parsed worker description: a program the supervisors run once
// per card, with what it may read and which variables it inherits.
type Worker struct {
	// Name names the worker; it follows NamePattern.
	Name string
	// Harness is the program: an absolute clean path, or a bare name
	// looked up on PATH.
	Harness string
	// HarnessArgs are the program's arguments, with placeholders (see
	// Args).
	HarnessArgs []string
	// Model replaces {model} in HarnessArgs; it may be empty.
	Model string
	// Deadline bounds one job's run: more than zero, at most MaxDeadline.
	Deadline time.Duration
	// Idle ends a job that wrote no output and used no CPU for this long,
	// as its deadline would (end idle): more than zero, at most
	// MaxDeadline; zero for DefaultIdle.
	Idle time.Duration
	// Slots is how many jobs of this worker may run at once, 1 to
	// MaxSlots.
	Slots int
	// ReadRoots are absolute clean directories a job may read besides its
	// own job directory.
	ReadRoots []string
	// Env names the variables a job inherits from the supervisor's
	// environment; never one of ReservedEnv(), nor a GIT_CONFIG one.
	Env []string
	// Identity is "Name <email>", the git identity of the commits a job
	// makes; empty for the default (DefaultIdentity).
	Identity string
	// Budget bounds what each job may spend, as its harness reports it
	// (spent.json); zero bounds nothing. A card's BUDGET bounds it too.
	Budget Budget
}

// The bounds of a worker description.
const (
	// NamePattern is the rule a worker's name follows; it may not hold "..".
	NamePattern = "[A-Za-z0-9][A-Za-z0-9._-]{0,63}"
	// MaxDeadline bounds a worker's and a card's deadline.
	MaxDeadline = 24 * time.Hour
	// DefaultIdle is a worker's idle time when its description names none.
	DefaultIdle = 5 * time.Minute
	// MaxSlots bounds a worker's slots.
	MaxSlots = 64
	// EnvPattern is the rule a name in env follows.
	EnvPattern = "[A-Za-z_][A-Za-z0-9_]*"
)

// DefaultIdentity is the git identity of a worker's commits when its
// description names none: the pool's, never the host's.
func DefaultIdentity(worker string) string {
	return "nwdes worker " + worker + " <" + worker + "@nwdes.invalid>"
}

// Ident is the worker's git identity, Identity or the default, as a name
// and an email.
func (w *Worker) Ident() (name, email string) {
	id := w.Identity
	if id == "" {
		id = DefaultIdentity(w.Name)
	}
	m := identity.FindStringSubmatch(id)
	if m == nil {
		return "", ""
	}
	return m[1], m[2]
}

// identity is what "identity" holds: a name that git keeps as it is (no
// angle brackets, quotes, backslashes or control characters, no space at
// either end) and an email in angle brackets with no space in it.
var identity = lazyre.New(`^([^<>"\\\x00-\x1f\x7f ](?:[^<>"\\\x00-\x1f\x7f]{0,126}[^<>"\\\x00-\x1f\x7f ])?) <([^<>"\\\x00-\x20\x7f]{1,254})>$`)

// The placeholders of HarnessArgs.
const (
	PromptPlaceholder = "{prompt}"
	ModelPlaceholder  = "{model}"
)

// ReservedEnv returns the variables the machinery sets for every job; a
// worker may not ask to inherit them.
func ReservedEnv() []string {
	return []string{"PATH", "HOME", "LANG", "TMPDIR", "XDG_DATA_HOME", "NWDES_JOB_DIR", "GIT_CONFIG_NOSYSTEM"}
}

// placeholder is what HarnessArgs treats as a placeholder: "{", a letter,
// then letters, digits, "_" or "-", and "}". Every other brace is literal
// text ("{}", "{{", "{ x }", "{1}"), and there is no escape: an argument
// cannot hold the literal text "{prompt}".
var placeholder = lazyre.New(`\{[A-Za-z][A-Za-z0-9_-]*\}`)

// WorkerError lists everything wrong with a worker description, in document
// order, each problem prefixed with the field it concerns ("env[1]: …",
// list indices counted from 0). A refusal WorkerInvalid wraps it.
type WorkerError struct {
	Problems []string
}

func (e *WorkerError) Error() string { return problemList(e.Problems) }

// problemList is one problem alone, or "n problems: a; b; …".
func problemList(problems []string) string {
	if len(problems) == 1 {
		return problems[0]
	}
	return text.Plural(len(problems), "problem", "problems") + ": " + strings.Join(problems, "; ")
}

const workerRemedy = `describe a worker as one JSON object, e.g. {"name": "coder", "harness": "/usr/local/bin/agent", "harness_args": ["--prompt-file", "{prompt}", "--model", "{model}"], "model": "m1", "deadline": "30m", "slots": 2, "read_roots": ["/usr/share/doc"], "env": ["API_KEY"]}, and fix every problem listed`

// ParseWorker reads a worker description: one JSON object with the keys
// name, harness and deadline (required) and harness_args, model, idle, slots,
// read_roots, env, identity and budget (optional). It is read strictly — an unknown or
// repeated key, a value of the wrong type, a null, a string holding
// U+FFFD (the mark of invalid UTF-8 or an unpaired surrogate escape), data
// after the object are all problems — and every value is checked as
// Validate checks it. Every problem found is reported at once, in a
// refusal WorkerInvalid wrapping a *WorkerError; invalid JSON ends the
// reading, so problems after it are not seen.
func ParseWorker(b []byte) (*Worker, error) {
	w := &Worker{Slots: 1}
	var problems []string
	add := func(p ...string) { problems = append(problems, p...) }

	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	seen := map[string]bool{}
	complete := false
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		add("the description is not a JSON object")
	} else {
		for {
			if !dec.More() {
				if _, err := dec.Token(); err != nil {
					add(jsonProblem(err))
				} else {
					complete = true
				}
				break
			}
			tok, err := dec.Token()
			if err != nil {
				add(jsonProblem(err))
				break
			}
			key, _ := tok.(string) // a key is always a string
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				add(jsonProblem(err))
				break
			}
			if seen[key] {
				add(fmt.Sprintf("%s: the key is given twice", strconv.Quote(key)))
				continue
			}
			seen[key] = true
			add(w.field(key, raw)...)
		}
	}
	if complete {
		if _, err := dec.Token(); err != io.EOF {
			add("data follows the object")
		}
		for _, key := range []string{"name", "harness", "deadline"} {
			if !seen[key] {
				add(key + ": missing")
			}
		}
	}
	if len(problems) > 0 {
		werr := &WorkerError{Problems: problems}
		return nil, refusal.New(refusal.WorkerInvalid, workerRemedy, "%s", werr).Wrap(werr)
	}
	return w, nil
}

func jsonProblem(err error) string {
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return "the description ends early"
	}
	return "the description is not valid JSON: " + err.Error()
}

var workerKeys = []string{"name", "harness", "harness_args", "model", "deadline", "idle", "slots", "read_roots", "env", "identity", "budget"}

// IdleTime is the worker's idle time, Idle or DefaultIdle.
func (w *Worker) IdleTime() time.Duration {
	if w.Idle > 0 {
		return w.Idle
	}
	return DefaultIdle
}

// field decodes and checks one key's value, returning its problems.
func (w *Worker) field(key string, raw json.RawMessage) []string {
	var p []string
	switch key {
	case "name":
		s, bad := stringValue(key, raw)
		if bad != "" {
			return []string{bad}
		}
		w.Name, p = s, nameProblems(s)
	case "harness":
		s, bad := stringValue(key, raw)
		if bad != "" {
			return []string{bad}
		}
		w.Harness, p = s, harnessProblems(s)
	case "model":
		s, bad := stringValue(key, raw)
		if bad != "" {
			return []string{bad}
		}
		w.Model, p = s, modelProblems(s)
	case "identity":
		s, bad := stringValue(key, raw)
		if bad != "" {
			return []string{bad}
		}
		w.Identity, p = s, identityProblems(s)
	case "deadline":
		s, bad := stringValue(key, raw)
		if bad != "" {
			return []string{bad}
		}
		d, why := parseDeadline(s)
		if why != "" {
			return []string{"deadline: " + why}
		}
		w.Deadline = d
	case "idle":
		s, bad := stringValue(key, raw)
		if bad != "" {
			return []string{bad}
		}
		d, why := parseDeadline(s)
		if why != "" {
			return []string{"idle: " + why}
		}
		w.Idle = d
	case "budget":
		s, bad := stringValue(key, raw)
		if bad != "" {
			return []string{bad}
		}
		b, problems := ParseBudget(s)
		for _, why := range problems {
			p = append(p, "budget: "+why)
		}
		w.Budget = b
	case "slots":
		n, bad := intValue(key, raw)
		if bad != "" {
			return []string{bad}
		}
		w.Slots = n
		p = slotsProblems(n)
	case "harness_args", "read_roots", "env":
		list, bad := stringList(key, raw)
		if list == nil {
			return bad
		}
		switch key {
		case "harness_args":
			w.HarnessArgs, p = list, argsProblems(list, bad)
		case "read_roots":
			w.ReadRoots, p = list, readRootsProblems(list, bad)
		case "env":
			w.Env, p = list, envProblems(list, bad)
		}
	default:
		msg := fmt.Sprintf("%s: unknown key", strconv.Quote(key))
		if near := text.Nearest(key, workerKeys); near != "" {
			msg += " (did you mean " + near + "?)"
		}
		return []string{msg}
	}
	return p
}

// kind names a JSON value's type by its first byte.
func kind(raw json.RawMessage) string {
	switch raw[0] {
	case '"':
		return "a string"
	case '[':
		return "a list"
	case '{':
		return "an object"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

func stringValue(what string, raw json.RawMessage) (string, string) {
	if k := kind(raw); k != "a string" {
		return "", fmt.Sprintf("%s: %s, not a string", what, k)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Sprintf("%s: %v", what, err)
	}
	if strings.ContainsRune(s, utf8.RuneError) {
		return "", what + ": holds U+FFFD (invalid UTF-8 or an unpaired surrogate escape)"
	}
	return s, ""
}

func intValue(what string, raw json.RawMessage) (int, string) {
	if k := kind(raw); k != "a number" {
		return 0, fmt.Sprintf("%s: %s, not a whole number", what, k)
	}
	n, err := strconv.Atoi(string(raw))
	if err != nil {
		return 0, fmt.Sprintf("%s: %s is not a whole number in range", what, raw)
	}
	return n, ""
}

// stringList reads a list of strings. An item that is not a sound string
// has its problem at its index in bad (nil when every item is sound); a
// value that is no list is a nil list and its one problem.
func stringList(what string, raw json.RawMessage) (list, bad []string) {
	if k := kind(raw); k != "a list" {
		return nil, []string{fmt.Sprintf("%s: %s, not a list of strings", what, k)}
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, []string{fmt.Sprintf("%s: %v", what, err)}
	}
	list = make([]string, len(items))
	for i, item := range items {
		s, why := stringValue(fmt.Sprintf("%s[%d]", what, i), item)
		if why != "" {
			if bad == nil {
				bad = make([]string, len(items))
			}
			bad[i] = why
		}
		list[i] = s
	}
	return list, bad
}

// badItem is the problem of item i of a list read by stringList, if any.
func badItem(bad []string, i int) string {
	if bad == nil {
		return ""
	}
	return bad[i]
}

// Validate checks every field of w as ParseWorker does and reports every
// problem in a refusal WorkerInvalid wrapping a *WorkerError; a Worker
// ParseWorker returned always validates.
func (w *Worker) Validate() error {
	var p []string
	if w.Name == "" {
		p = append(p, "name: missing")
	} else {
		p = append(p, nameProblems(w.Name)...)
	}
	if w.Harness == "" {
		p = append(p, "harness: missing")
	} else {
		p = append(p, harnessProblems(w.Harness)...)
	}
	p = append(p, argsProblems(w.HarnessArgs, nil)...)
	p = append(p, modelProblems(w.Model)...)
	p = append(p, identityProblems(w.Identity)...)
	if why := deadlineProblem(w.Deadline); why != "" {
		p = append(p, "deadline: "+why)
	}
	if w.Idle != 0 {
		if why := deadlineProblem(w.Idle); why != "" {
			p = append(p, "idle: "+why)
		}
	}
	p = append(p, slotsProblems(w.Slots)...)
	p = append(p, readRootsProblems(w.ReadRoots, nil)...)
	p = append(p, envProblems(w.Env, nil)...)
	if len(p) > 0 {
		werr := &WorkerError{Problems: p}
		return refusal.New(refusal.WorkerInvalid, workerRemedy, "%s", werr).Wrap(werr)
	}
	return nil
}

func nameProblems(s string) []string {
	if !names.Component(s, 64) {
		return []string{fmt.Sprintf("name: %s does not match %s without \"..\"", strconv.Quote(s), NamePattern)}
	}
	return nil
}

func hasControl(s string) bool { return strings.IndexFunc(s, unicode.IsControl) >= 0 }

func harnessProblems(s string) []string {
	q := strconv.Quote(s)
	switch {
	case s == "":
		return []string{"harness: empty"}
	case hasControl(s):
		return []string{fmt.Sprintf("harness: %s holds a control character", q)}
	case strings.HasPrefix(s, "/"):
		if path.Clean(s) != s || s == "/" {
			return []string{fmt.Sprintf("harness: %s is not a clean absolute path to a program (it would be %s)", q, strconv.Quote(path.Clean(s)))}
		}
	case strings.Contains(s, "/"):
		return []string{fmt.Sprintf("harness: %s is neither an absolute path nor a bare name looked up on PATH", q)}
	case s == "." || s == "..":
		return []string{fmt.Sprintf("harness: %s is not a program name", q)}
	}
	return nil
}

func argsProblems(args, bad []string) []string {
	var p []string
	for i, a := range args {
		if why := badItem(bad, i); why != "" {
			p = append(p, why)
			continue
		}
		if strings.IndexByte(a, 0) >= 0 {
			p = append(p, fmt.Sprintf("harness_args[%d]: holds a NUL byte", i))
			continue
		}
		for _, ph := range placeholder.FindAllString(a, -1) {
			if ph == PromptPlaceholder || ph == ModelPlaceholder {
				continue
			}
			msg := fmt.Sprintf("harness_args[%d]: unknown placeholder %s (only %s and %s)", i, ph, PromptPlaceholder, ModelPlaceholder)
			if near := text.Nearest(strings.ToLower(ph), []string{PromptPlaceholder, ModelPlaceholder}); near != "" {
				msg += "; did you mean " + near + "?"
			}
			p = append(p, msg)
		}
	}
	return p
}

func identityProblems(s string) []string {
	if s != "" && !identity.MatchString(s) {
		return []string{fmt.Sprintf("identity: %s is not \"Name <email>\" (no angle brackets, quotes, backslashes or control characters in the name, no space in the email)", strconv.Quote(s))}
	}
	return nil
}

func modelProblems(s string) []string {
	if hasControl(s) {
		return []string{fmt.Sprintf("model: %s holds a control character", strconv.Quote(s))}
	}
	return nil
}

// parseDeadline reads a Go duration, more than zero and at most
// MaxDeadline; it returns why not.
func parseDeadline(s string) (time.Duration, string) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Sprintf("%s is not a duration like 30m or 1h30m", strconv.Quote(s))
	}
	return d, deadlineProblem(d)
}

func deadlineProblem(d time.Duration) string {
	if d <= 0 || d > MaxDeadline {
		return fmt.Sprintf("%s is not more than 0 and at most %s", d, MaxDeadline)
	}
	return ""
}

func slotsProblems(n int) []string {
	if n < 1 || n > MaxSlots {
		return []string{fmt.Sprintf("slots: %d is not between 1 and %d", n, MaxSlots)}
	}
	return nil
}

func readRootsProblems(roots, bad []string) []string {
	var p []string
	first := map[string]int{}
	for i, r := range roots {
		q := strconv.Quote(r)
		switch {
		case badItem(bad, i) != "":
			p = append(p, bad[i])
		case hasControl(r):
			p = append(p, fmt.Sprintf("read_roots[%d]: %s holds a control character", i, q))
		case !strings.HasPrefix(r, "/") || path.Clean(r) != r:
			p = append(p, fmt.Sprintf("read_roots[%d]: %s is not a clean absolute path", i, q))
		case r == "/":
			p = append(p, fmt.Sprintf("read_roots[%d]: \"/\" would open the whole file system", i))
		default:
			if j, dup := first[r]; dup {
				p = append(p, fmt.Sprintf("read_roots[%d]: %s repeats read_roots[%d]", i, q, j))
			} else {
				first[r] = i
			}
		}
	}
	return p
}

func envProblems(names, bad []string) []string {
	var p []string
	first := map[string]int{}
	for i, n := range names {
		q := strconv.Quote(n)
		switch {
		case badItem(bad, i) != "":
			p = append(p, bad[i])
		case !validEnvName(n):
			p = append(p, fmt.Sprintf("env[%d]: %s does not match %s", i, q, EnvPattern))
		case isReserved(n):
			p = append(p, fmt.Sprintf("env[%d]: %s is set by the machinery for every job (%s)", i, n, strings.Join(ReservedEnv(), ", ")))
		case strings.HasPrefix(n, "GIT_CONFIG"):
			p = append(p, fmt.Sprintf("env[%d]: %s would bring the host's git configuration into the job, which sees none", i, n))
		default:
			if j, dup := first[n]; dup {
				p = append(p, fmt.Sprintf("env[%d]: %s repeats env[%d]", i, n, j))
			} else {
				first[n] = i
			}
		}
	}
	return p
}

func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || i > 0 && '0' <= c && c <= '9'
		if !ok {
			return false
		}
	}
	return true
}

func isReserved(name string) bool {
	for _, r := range ReservedEnv() {
		if name == r {
			return true
		}
	}
	return false
}

// Args returns HarnessArgs with every {prompt} replaced by promptPath and
// every {model} by Model. Replaced text is not scanned again, so a path or
// model that holds braces stays as it is.
func (w *Worker) Args(promptPath string) []string {
	args := make([]string, len(w.HarnessArgs))
	for i, a := range w.HarnessArgs {
		args[i] = placeholder.ReplaceAllStringFunc(a, func(ph string) string {
			switch ph {
			case PromptPlaceholder:
				return promptPath
			case ModelPlaceholder:
				return w.Model
			}
			return ph
		})
	}
	return args
}

// workerJSON is a worker description as ParseWorker reads it and as
// `swarm worker check --json` prints it.
type workerJSON struct {
	Name        string   `json:"name"`
	Harness     string   `json:"harness"`
	HarnessArgs []string `json:"harness_args"`
	Model       string   `json:"model"`
	Deadline    string   `json:"deadline"`
	Idle        string   `json:"idle,omitempty"`
	Slots       int      `json:"slots"`
	ReadRoots   []string `json:"read_roots"`
	Env         []string `json:"env"`
	Identity    string   `json:"identity"`
	Budget      string   `json:"budget,omitempty"`
}

func idleString(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

// MarshalJSON renders w as a worker description ParseWorker reads back to
// an equal Worker: every key present (idle only when set), lists never
// null, the deadline as a Go duration string ("1h30m0s").
func (w Worker) MarshalJSON() ([]byte, error) {
	orEmpty := func(s []string) []string {
		if s == nil {
			return []string{}
		}
		return s
	}
	return json.Marshal(workerJSON{
		Name:        w.Name,
		Harness:     w.Harness,
		HarnessArgs: orEmpty(w.HarnessArgs),
		Model:       w.Model,
		Deadline:    w.Deadline.String(),
		Idle:        idleString(w.Idle),
		Slots:       w.Slots,
		ReadRoots:   orEmpty(w.ReadRoots),
		Env:         orEmpty(w.Env),
		Identity:    w.Identity,
		Budget:      w.Budget.String(),
	})
}
