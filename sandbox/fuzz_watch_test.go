package sandbox

import (
	"strings"
	"testing"
)

// FuzzDetector feeds the refusal detector any output in any chunks: it
// must not panic, must keep bounded lines, and must never blame the wall
// for a path inside the write set.
func FuzzDetector(f *testing.F) {
	for _, s := range []string{
		"STEP 1\n/bin/sh: 1: cannot create /etc/x: Permission denied\n",
		"touch: cannot touch '/job/a': Permission denied\n",
		"open /etc/x: read-only file system",
		strings.Repeat("a", 10000) + " Permission denied /etc\n",
		"PermissionError: [Errno 13] Permission denied: '/root/x'\n",
	} {
		f.Add([]byte(s), uint8(7))
	}
	f.Fuzz(func(t *testing.T, out []byte, chunk uint8) {
		d := newDetector("/job", []string{"/job"}, []string{"/job", "/usr"})
		w := d.stream()
		n := int(chunk%64) + 1
		for len(out) > 0 {
			k := min(n, len(out))
			w.Write(out[:k])
			out = out[k:]
		}
		w.flush()
		if len(w.line) > maxWatchedLine {
			t.Fatalf("kept a line of %d bytes", len(w.line))
		}
		if r, _ := d.result(); r != nil && within2(r.Path, []string{"/job"}) {
			t.Fatalf("blamed the wall for %q inside the write set", r.Path)
		}
	})
}
