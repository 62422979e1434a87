package workspace

import (
	"bytes"
	"io"
	"sync"
)

// replacer writes what it is given to w with every occurrence of old
// replaced by new, also an occurrence split across writes: it holds back
// the last len(old)-1 bytes until more arrive or Flush.
type replacer struct {
	mu       sync.Mutex
	w        io.Writer
	old, new []byte
	held     []byte
}

func newReplacer(w io.Writer, old, new string) *replacer {
	return &replacer{w: w, old: []byte(old), new: []byte(new)}
}

func (r *replacer) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.old) == 0 {
		_, err := r.w.Write(p)
		return len(p), err
	}
	buf := append(r.held, p...)
	var out bytes.Buffer
	for {
		i := bytes.Index(buf, r.old)
		if i < 0 {
			break
		}
		out.Write(buf[:i])
		out.Write(r.new)
		buf = buf[i+len(r.old):]
	}
	keep := len(r.old) - 1
	if keep > len(buf) {
		keep = len(buf)
	}
	out.Write(buf[:len(buf)-keep])
	r.held = append([]byte{}, buf[len(buf)-keep:]...)
	if out.Len() > 0 {
		if _, err := r.w.Write(out.Bytes()); err != nil {
			return len(p), err
		}
	}
	return len(p), nil
}

// Flush writes what is held back.
func (r *replacer) Flush() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.held) == 0 {
		return nil
	}
	_, err := r.w.Write(r.held)
	r.held = nil
	return err
}
