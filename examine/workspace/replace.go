package workspace

import (
	"bytes"
	"io"
	"sync"
)

// replacer writes what it is given to w with every occurrence of the path
// old replaced by new: an occurrence split across writes too, and only a
// whole path (/x/repo in "/x/repo/bin" or "/x/repo:", never in
// "/x/repo2"). It holds back what could still become an occurrence until
// more arrives or Flush.
type replacer struct {
	mu       sync.Mutex
	w        io.Writer
	old, new []byte
	held     []byte
}

func newReplacer(w io.Writer, old, new string) *replacer {
	return &replacer{w: w, old: []byte(old), new: []byte(new)}
}

// nameByte reports a byte that would continue a path name.
func nameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' || c >= 0x80
}

// rewrite replaces the occurrences in buf it can decide and returns the
// output and what must wait; at the end (final) nothing waits.
func (r *replacer) rewrite(buf []byte, final bool) (out, wait []byte) {
	var b bytes.Buffer
	for {
		i := bytes.Index(buf, r.old)
		if i < 0 {
			break
		}
		end := i + len(r.old)
		b.Write(buf[:i])
		switch {
		case end == len(buf) && !final:
			return b.Bytes(), append([]byte{}, buf[i:]...)
		case end < len(buf) && nameByte(buf[end]):
			b.WriteByte(buf[i])
			buf = buf[i+1:]
		default:
			b.Write(r.new)
			buf = buf[end:]
		}
	}
	keep := 0
	if !final {
		keep = min(len(r.old)-1, len(buf))
	}
	b.Write(buf[:len(buf)-keep])
	return b.Bytes(), append([]byte{}, buf[len(buf)-keep:]...)
}

func (r *replacer) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.old) == 0 {
		_, err := r.w.Write(p)
		return len(p), err
	}
	out, wait := r.rewrite(append(r.held, p...), false)
	r.held = wait
	if len(out) > 0 {
		if _, err := r.w.Write(out); err != nil {
			return len(p), err
		}
	}
	return len(p), nil
}

// Flush writes what is held back, an occurrence at the very end replaced.
func (r *replacer) Flush() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.held) == 0 {
		return nil
	}
	out, _ := r.rewrite(r.held, true)
	r.held = nil
	_, err := r.w.Write(out)
	return err
}
