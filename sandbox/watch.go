package sandbox

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// The kernel's refusals as the C library spells them. Landlock denies with
// EACCES ("Permission denied"); seccomp and a few file operations with
// EPERM ("Operation not permitted"). Either counts only on a line that also
// names a path outside the write set: a test's own output is full of
// sentences, and a refusal inside the write set is not the wall's.
var refusalMarks = [][]byte{[]byte("permission denied"), []byte("operation not permitted"), []byte("read-only file system")}

// absenceMarks are how a program says a path is not there. In the job's
// view everything outside its read and write sets is absent, so such a
// line is the wall's doing when the path it names exists on the host (or,
// for a file it tried to create, its directory does) and lies outside
// what the view shows.
var absenceMarks = [][]byte{[]byte("no such file or directory"), []byte("directory nonexistent")}

// stepMark is how a program numbers its steps; the last one seen before a
// refusal is where the wall stopped it.
const stepMark = "STEP "

// maxWatchedLine bounds the part of a line the watch keeps: a refusal line
// longer than this is judged on its first maxWatchedLine bytes.
const maxWatchedLine = 4096

// detector reads the parent's own copy of both output streams as they
// arrive (never a file the program could rewrite) and remembers the first
// refusal of a path outside the write set and the last STEP line.
type detector struct {
	mu      sync.Mutex
	dir     string   // the program's directory, for relative paths
	write   []string // absolute, cleaned
	visible []string // everything the view shows: write and read sets, roots
	refused *Refusal
	step    string
}

func newDetector(dir string, write, visible []string) *detector {
	return &detector{dir: dir, write: write, visible: visible}
}

func (d *detector) stream() *lineWatch { return &lineWatch{d: d} }

func (d *detector) result() (*Refusal, string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.refused, d.step
}

// lineWatch splits one stream into lines for the detector.
type lineWatch struct {
	d       *detector
	line    []byte
	overlon bool
}

func (w *lineWatch) Write(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if room := maxWatchedLine - len(w.line); room > 0 {
			if len(chunk) > room {
				chunk, w.overlon = chunk[:room], true
			}
			w.line = append(w.line, chunk...)
		}
		if i < 0 {
			return
		}
		w.d.line(w.line)
		w.line, w.overlon = w.line[:0], false
		p = p[i+1:]
	}
}

// flush judges a last line that had no newline.
func (w *lineWatch) flush() {
	if len(w.line) > 0 {
		w.d.line(w.line)
		w.line = w.line[:0]
	}
}

func (d *detector) line(l []byte) {
	if n, ok := stepNumber(l); ok {
		d.mu.Lock()
		d.step = n
		d.mu.Unlock()
		return
	}
	// The C library capitalizes its messages, Go and Node do not ("open
	// /etc/x: read-only file system"): marks are matched in lower case.
	lower := asciiLower(l)
	mark, absent := -1, false
	for _, m := range refusalMarks {
		if i := bytes.Index(lower, m); i >= 0 {
			mark = i
			break
		}
	}
	if mark < 0 {
		for _, m := range absenceMarks {
			if i := bytes.Index(lower, m); i >= 0 {
				mark, absent = i, true
				break
			}
		}
	}
	if mark < 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.refused != nil {
		return
	}
	p, ok := refusedPath(string(l), d.dir, mark)
	switch {
	case !ok:
	case !absent && !within2(p, d.write):
		d.refused = &Refusal{Path: p, Line: string(l), Step: d.step}
	case absent && !within2(p, d.visible) && onHost(p):
		d.refused = &Refusal{Path: p, Line: string(l), Step: d.step}
	}
}

// asciiLower lower-cases ASCII letters and leaves every other byte as it
// is, so that an index into the result is an index into b: bytes.ToLower
// rewrites invalid UTF-8 as three-byte replacement runes, which once sent
// a refusal mark's index past the end of the line (found by FuzzDetector).
func asciiLower(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}

// onHost reports whether p, or the directory it would be created in,
// exists outside the wall.
func onHost(p string) bool {
	if _, err := os.Lstat(p); err == nil {
		return true
	}
	_, err := os.Stat(filepath.Dir(p))
	return err == nil && filepath.Dir(p) != "/"
}

// refusedPath picks the path a refusal is about: the last word holding a
// slash before the refusal mark, leaving out a leading "prog:" ("/bin/sh:
// 1: cannot create /etc/x: Permission denied", "head: cannot open
// '/root/x' for reading: Permission denied"); else the first absolute path
// after the mark ("Permission denied: '/etc/x'"). A relative path is taken
// from the program's directory; a bare name ("sh: 1: cannot create f:
// Permission denied") is a name in that directory, never the wall's.
func refusedPath(line, dir string, mark int) (string, bool) {
	before := words(line[:mark])
	// A leading "prog:" is the program's name, not the path it was denied,
	// unless no other path is named ("/etc/x: Permission denied").
	if len(before) > 1 && strings.HasPrefix(strings.TrimLeft(line, " \t"), before[0]+":") && slashWord(before[1:]) {
		before = before[1:]
	}
	for i := len(before) - 1; i >= 0; i-- {
		if w := before[i]; strings.Contains(w, "/") {
			if !filepath.IsAbs(w) {
				w = filepath.Join(dir, w)
			}
			return w, true
		}
	}
	for _, w := range words(line[mark:]) {
		if filepath.IsAbs(w) && len(w) > 1 {
			return w, true
		}
	}
	return "", false
}

func slashWord(ws []string) bool {
	for _, w := range ws {
		if strings.Contains(w, "/") {
			return true
		}
	}
	return false
}

// words splits a line into words, without the quotes and punctuation
// tools put around paths ('/x', "/x", ‘/x’, `/x', /x:).
func words(line string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(line, func(r rune) bool {
		return strings.ContainsRune(" \t'\"`()[],‘’“”", r)
	}) {
		if f = strings.TrimRight(f, ":;."); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// stepNumber reads "STEP <n>" at the start of a line.
func stepNumber(l []byte) (string, bool) {
	s := strings.TrimSpace(string(l))
	if !strings.HasPrefix(s, stepMark) {
		return "", false
	}
	rest := s[len(stepMark):]
	end := 0
	for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
		end++
	}
	if end == 0 {
		return "", false
	}
	return rest[:end], true
}

// within2 reports whether p (cleaned) is one of dirs or beneath one.
func within2(p string, dirs []string) bool {
	p = filepath.Clean(p)
	for _, w := range dirs {
		if within(p, w) {
			return true
		}
	}
	return false
}

// within reports whether p is dir or beneath it (both clean and absolute).
func within(p, dir string) bool {
	if dir == "/" {
		return true
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}
