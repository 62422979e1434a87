package sandbox

import (
	"bytes"
	"path/filepath"
	"strings"
	"sync"
)

// The kernel's refusals as the C library spells them. Landlock denies with
// EACCES ("Permission denied"); seccomp and a few file operations with
// EPERM ("Operation not permitted"). Either counts only on a line that also
// names a path outside the write set: a test's own output is full of
// sentences, and a refusal inside the write set is not the wall's.
var refusalMarks = [][]byte{[]byte("Permission denied"), []byte("Operation not permitted")}

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
	refused *Refusal
	step    string
}

func newDetector(dir string, write []string) *detector { return &detector{dir: dir, write: write} }

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
	mark := -1
	for _, m := range refusalMarks {
		if i := bytes.Index(l, m); i >= 0 {
			mark = i
			break
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
	if p, ok := refusedPath(string(l), d.dir, mark); ok && !d.inWriteSet(p) {
		d.refused = &Refusal{Path: p, Line: string(l), Step: d.step}
	}
}

// refusedPath picks the path a refusal is about: the word just before the
// refusal mark when it holds a slash ("/bin/sh: 1: cannot create /etc/x:
// Permission denied", "touch: cannot touch 'a/b': Permission denied"),
// else the first absolute path after it ("Permission denied: '/etc/x'").
// A relative path is taken from the program's directory. A bare name with
// no slash is a name in that directory, which is never the wall's.
func refusedPath(line, dir string, mark int) (string, bool) {
	if before := words(line[:mark]); len(before) > 0 {
		if w := before[len(before)-1]; strings.Contains(w, "/") {
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

func (d *detector) inWriteSet(p string) bool {
	p = filepath.Clean(p)
	for _, w := range d.write {
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
