package trust_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nwdes/nwdes/refusal"
	"github.com/nwdes/nwdes/trust"
)

func pubLine(t *testing.T, key string) string {
	t.Helper()
	b, err := os.ReadFile(key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// TestPolicyAgreesWithSSHKeygen: for policies of feature patterns (with
// wildcards, negations, namespaces and validity windows), Allows answers as
// `ssh-keygen -Y verify -I <feature>` does for the same file, key and time.
func TestPolicyAgreesWithSSHKeygen(t *testing.T) {
	alice, bob := keygen(t, "ed25519"), keygen(t, "ecdsa")
	a, b := pubLine(t, alice), pubLine(t, bob)
	policies := []string{
		"greeting " + a,
		"greeting,auth-* " + a + "\n* " + b,
		"*,!secret* " + a + " comment here",
		"auth-?? " + a + "\n# a comment\n\nbilling " + b,
		`* namespaces="git,file" ` + a + "\ngreeting " + b,
		`* namespaces="nwdes-*" ` + a,
		`greeting valid-after="20260101",valid-before="20270101" ` + a + "\nother " + b,
		`greeting valid-before="20250101Z" ` + a,
		`*,"!billing" ` + a,
		`"billing" ` + b,
		`"greeting,auth-*" ` + a,
	}
	features := []string{"greeting", "auth-login", "auth-ab", "auth-abc", "secret-sauce", "billing", "Greeting", "other"}
	at := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	msgFile := filepath.Join(dir, "msg")
	os.WriteFile(msgFile, message, 0o644)
	sigs := map[string]string{}
	for name, key := range map[string]string{"alice": alice, "bob": bob} {
		sig, err := trust.Sign(signer(t, key), message)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name+".sig")
		os.WriteFile(p, sig, 0o644)
		sigs[name] = p
	}
	for i, text := range policies {
		policyFile := filepath.Join(dir, fmt.Sprintf("policy%d", i))
		os.WriteFile(policyFile, []byte(text+"\n"), 0o644)
		pol, err := trust.ParsePolicy(policyFile, []byte(text))
		if err != nil {
			t.Fatalf("policy %d: %v", i, err)
		}
		for who, key := range map[string]string{"alice": alice, "bob": bob} {
			pub := signer(t, key).PublicKey()
			for _, f := range features {
				_, ours := pol.Allows(f, pub, at)
				cmd := exec.Command("ssh-keygen", "-Y", "verify", "-f", policyFile, "-I", f, "-n", trust.Namespace,
					"-s", sigs[who], "-Overify-time="+at.Format("20060102150405")+"Z")
				cmd.Stdin = bytes.NewReader(message)
				out, err := cmd.CombinedOutput()
				theirs := err == nil
				if ours != theirs {
					t.Errorf("policy %d (%q), %s signing %s: nwdes %v, ssh-keygen %v (%s)", i, text, who, f, ours, theirs, strings.TrimSpace(string(out)))
				}
			}
		}
	}
}

func TestPolicyRefusesWhatItCannotRead(t *testing.T) {
	a := pubLine(t, keygen(t, "ed25519"))
	for _, bad := range []string{
		"greeting",
		"greeting ssh-ed25519 notbase64!",
		"greeting cert-authority " + a,
		`greeting unknown-option="x" ` + a,
		`greeting valid-after="tomorrow" ` + a,
	} {
		if _, err := trust.ParsePolicy("p", []byte(bad)); !refusal.Named(err, refusal.ConfigurationMalformed) || !strings.Contains(err.Error(), "p:1:") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestCheckNamesEachRefusal(t *testing.T) {
	alice, mallory := keygen(t, "ed25519"), keygen(t, "ed25519")
	pol, err := trust.ParsePolicy(".nwave/trust/allowed_signers at main", []byte("greeting "+pubLine(t, alice)))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	a, m := signer(t, alice).PublicKey(), signer(t, mallory).PublicKey()
	if err := pol.Check("greeting", a, nil, now); err != nil {
		t.Fatalf("an allowed signer: %v", err)
	}
	if err := pol.Check("greeting", nil, nil, now); !refusal.Named(err, refusal.UnsignedEvidence) {
		t.Errorf("unsigned: %v", err)
	}
	err = pol.Check("greeting", m, nil, now)
	if !refusal.Named(err, refusal.SignerNotAllowed) || !strings.Contains(err.Error(), trust.Fingerprint(m)) || !strings.Contains(err.Error(), "allowed_signers at main") {
		t.Errorf("a signer the policy does not name: %v", err)
	}
	if err := pol.Check("billing", a, nil, now); !refusal.Named(err, refusal.SignerNotAllowed) {
		t.Errorf("an allowed key for another feature: %v", err)
	}
	_, bad := trust.Verify(message, []byte("x"))
	if err := pol.Check("greeting", nil, bad, now); !refusal.Named(err, refusal.SignatureInvalid) {
		t.Errorf("an invalid signature: %v", err)
	}
}
