package hooks_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/hooks"
)

// FuzzParseReceive feeds the pre-receive reader any input: it must not
// panic, and every update it accepts names a ref under refs/ and two
// object ids of one length.
func FuzzParseReceive(f *testing.F) {
	z, a := strings.Repeat("0", 40), strings.Repeat("a", 40)
	for _, s := range []string{
		z + " " + a + " refs/heads/main\n",
		a + " " + z + " refs/nwdes/examine\r\n" + a + " " + a + " refs/tags/v1\n",
		strings.Repeat("0", 64) + " " + strings.Repeat("b", 64) + " refs/heads/x\n",
		"not a line\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		us, err := hooks.ParseReceive(bytes.NewReader(in))
		if err != nil {
			return
		}
		for _, u := range us {
			if !strings.HasPrefix(u.RemoteRef, "refs/") || len(u.LocalOID) != len(u.RemoteOID) || (len(u.LocalOID) != 40 && len(u.LocalOID) != 64) {
				t.Fatalf("accepted %+v", u)
			}
		}
	})
}
