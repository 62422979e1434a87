package trust_test

import (
	"crypto/ed25519"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/nwdes/nwdes/trust"
)

// FuzzParsePolicy feeds the allowed-signers reader any bytes (a policy is
// committed by whoever can push to the branch): it must not panic, and a
// policy it accepts must answer Allows and Entries without panicking, with
// every entry naming at least one feature pattern.
func FuzzParsePolicy(f *testing.F) {
	key, _ := ssh.NewPublicKey(ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)).Public())
	line := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(key)))
	for _, s := range []string{
		"greeting " + line,
		"*,!billing " + line + " comment",
		`* namespaces="git,nwdes-*",valid-after="20260101",valid-before="20270101Z" ` + line,
		"# comment\n\n\"quoted,*\" " + line,
		"greeting cert-authority " + line,
		"x",
	} {
		f.Add([]byte(s), "greeting")
	}
	f.Fuzz(func(t *testing.T, b []byte, feature string) {
		p, err := trust.ParsePolicy("fuzz", b)
		if err != nil {
			return
		}
		p.Allows(feature, key, time.Now())
		for _, e := range p.Entries() {
			if len(e.Features) == 0 || e.Key == "" {
				t.Fatalf("entry %+v", e)
			}
		}
	})
}
