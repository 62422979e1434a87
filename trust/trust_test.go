package trust_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/nwdes/nwdes/refusal"
	"github.com/nwdes/nwdes/trust"
)

// keygen makes an SSH key pair of the given type with ssh-keygen and
// returns the private key's path.
func keygen(t *testing.T, typ string) string {
	t.Helper()
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("ssh-keygen is not installed")
	}
	key := filepath.Join(t.TempDir(), "id_"+typ)
	args := []string{"-q", "-t", typ, "-N", "", "-C", "tester@example.com", "-f", key}
	if out, err := exec.Command("ssh-keygen", args...).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	return key
}

func signer(t *testing.T, key string) ssh.Signer {
	t.Helper()
	s, err := trust.LoadSigner(key, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// allowedSigners writes git's allowed-signers file naming the key.
func allowedSigners(t *testing.T, key string) string {
	t.Helper()
	pub, err := os.ReadFile(key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "allowed_signers")
	if err := os.WriteFile(p, []byte("tester@example.com "+string(pub)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

var message = trust.Message([]byte(`{"body":{"feature":"f"},"kind":"examine.examination","v":2}`),
	map[string][]byte{"t1": []byte("seen\n"), "t2": {0xff, 0x00}, trust.SignaturePayload: []byte("ignored")})

// TestSignaturesAgreeWithSSHKeygen: what nwdes signs, ssh-keygen -Y verify
// accepts, and what ssh-keygen -Y sign writes, nwdes verifies, for each key
// type git users sign with.
func TestSignaturesAgreeWithSSHKeygen(t *testing.T) {
	for _, typ := range []string{"ed25519", "ecdsa", "rsa"} {
		t.Run(typ, func(t *testing.T) {
			key := keygen(t, typ)
			s := signer(t, key)
			sig, err := trust.Sign(s, message)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			sigFile := filepath.Join(dir, "msg.sig")
			os.WriteFile(sigFile, sig, 0o644)
			verify := exec.Command("ssh-keygen", "-Y", "verify", "-f", allowedSigners(t, key), "-I", "tester@example.com",
				"-n", trust.Namespace, "-s", sigFile)
			verify.Stdin = bytes.NewReader(message)
			if out, err := verify.CombinedOutput(); err != nil {
				t.Fatalf("ssh-keygen -Y verify refused nwdes's signature: %v\n%s", err, out)
			}

			msgFile := filepath.Join(dir, "msg")
			os.WriteFile(msgFile, message, 0o644)
			if out, err := exec.Command("ssh-keygen", "-Y", "sign", "-f", key, "-n", trust.Namespace, msgFile).CombinedOutput(); err != nil {
				t.Fatalf("ssh-keygen -Y sign: %v\n%s", err, out)
			}
			theirs, err := os.ReadFile(msgFile + ".sig")
			if err != nil {
				t.Fatal(err)
			}
			pub, err := trust.Verify(message, theirs)
			if err != nil {
				t.Fatalf("nwdes refused ssh-keygen's signature: %v", err)
			}
			if trust.Fingerprint(pub) != trust.Fingerprint(s.PublicKey()) {
				t.Fatalf("signed by %s, want %s", trust.Fingerprint(pub), trust.Fingerprint(s.PublicKey()))
			}
		})
	}
}

func TestAnythingButTheSignedRecordIsRefused(t *testing.T) {
	key := keygen(t, "ed25519")
	sig, err := trust.Sign(signer(t, key), message)
	if err != nil {
		t.Fatal(err)
	}
	edited := trust.Message([]byte(`{"body":{"feature":"g"},"kind":"examine.examination","v":2}`),
		map[string][]byte{"t1": []byte("seen\n"), "t2": {0xff, 0x00}})
	payload := trust.Message([]byte(`{"body":{"feature":"f"},"kind":"examine.examination","v":2}`),
		map[string][]byte{"t1": []byte("seen!\n"), "t2": {0xff, 0x00}})
	dir := t.TempDir()
	msgFile := filepath.Join(dir, "msg")
	os.WriteFile(msgFile, message, 0o644)
	// A signature made for git commits (namespace "git") by the same key.
	if out, err := exec.Command("ssh-keygen", "-Y", "sign", "-f", key, "-n", "git", msgFile).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	gitSig, _ := os.ReadFile(msgFile + ".sig")
	cases := map[string]struct{ msg, sig []byte }{
		"an edited record":         {edited, sig},
		"an edited payload":        {payload, sig},
		"a commit signature":       {message, gitSig},
		"not a signature":          {message, []byte("-----BEGIN SSH SIGNATURE-----\nAAAA\n-----END SSH SIGNATURE-----\n")},
		"an empty signature":       {message, nil},
		"a truncated signature":    {message, sig[:len(sig)/2]},
		"a signature with garbage": {message, append([]byte("x"), sig...)},
	}
	for name, c := range cases {
		if _, err := trust.Verify(c.msg, c.sig); !refusal.Named(err, refusal.SignatureInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := trust.Verify(message, sig); err != nil {
		t.Fatalf("the signature itself: %v", err)
	}
}

func TestMessageCoversRecordAndPayloadsButNotItsSignature(t *testing.T) {
	a := trust.Message([]byte("{}"), map[string][]byte{"a": []byte("1"), "b": []byte("2")})
	b := trust.Message([]byte("{}"), map[string][]byte{"b": []byte("2"), "a": []byte("1"), trust.SignaturePayload: []byte("x")})
	if !bytes.Equal(a, b) {
		t.Fatal("payload order or the signature payload changed the message")
	}
	for _, other := range [][]byte{
		trust.Message([]byte("{} "), map[string][]byte{"a": []byte("1"), "b": []byte("2")}),
		trust.Message([]byte("{}"), map[string][]byte{"a": []byte("1")}),
		trust.Message([]byte("{}"), map[string][]byte{"a": []byte("1"), "b": []byte("3")}),
		trust.Message([]byte("{}"), map[string][]byte{"a": []byte("1"), "c": []byte("2")}),
	} {
		if bytes.Equal(a, other) {
			t.Fatalf("different records give one message:\n%s", other)
		}
	}
}

func TestLoadSignerFindsKeysAsGitNamesThem(t *testing.T) {
	key := keygen(t, "ed25519")
	pub, _ := os.ReadFile(key + ".pub")
	want := signer(t, key).PublicKey()
	// An encrypted private key, or a public key, needs an agent holding it.
	sock := filepath.Join(t.TempDir(), "agent.sock")
	agent := exec.Command("ssh-agent", "-D", "-a", sock)
	if err := agent.Start(); err != nil {
		t.Skipf("ssh-agent: %v", err)
	}
	defer agent.Process.Kill()
	env := func(k string) string {
		if k == "SSH_AUTH_SOCK" {
			return sock
		}
		return os.Getenv(k)
	}
	for i := 0; i < 50; i++ {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		exec.Command("sleep", "0.05").Run()
	}
	add := exec.Command("ssh-add", key)
	add.Env = append(os.Environ(), "SSH_AUTH_SOCK="+sock)
	if out, err := add.CombinedOutput(); err != nil {
		t.Fatalf("ssh-add: %v\n%s", err, out)
	}
	for _, name := range []string{key + ".pub", "key::" + strings.TrimSpace(string(pub))} {
		s, err := trust.LoadSigner(name, env)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		sig, err := trust.Sign(s, message)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := trust.Verify(message, sig); err != nil || trust.Fingerprint(got) != trust.Fingerprint(want) {
			t.Fatalf("%s signed as %v: %v", name, got, err)
		}
	}
	for name, k := range map[string]string{"unset": "", "missing": filepath.Join(t.TempDir(), "none"), "garbage": "key::not a key"} {
		if _, err := trust.LoadSigner(k, env); !refusal.Named(err, refusal.SigningKeyUnusable) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// A public key no agent holds.
	other := keygen(t, "ed25519")
	if _, err := trust.LoadSigner(other+".pub", env); !refusal.Named(err, refusal.SigningKeyUnusable) {
		t.Errorf("a key the agent does not hold: %v", err)
	}
}
