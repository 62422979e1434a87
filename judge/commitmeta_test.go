package judge_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/trust"
)

// TestTheCandidatesSigningKeyIsReadAsGitAndOpenSSHReadIt: the payload the
// duty rule verifies a commit's SSH signature over is the one git signed —
// ssh-keygen verifies the signature over it in git's namespace — and the
// key trust.CommitSigner returns is the signer's. A commit whose signature
// was altered names no key.
func TestTheCandidatesSigningKeyIsReadAsGitAndOpenSSHReadIt(t *testing.T) {
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("ssh-keygen is not installed")
	}
	dir := gittest.Init(t, false)
	key := filepath.Join(t.TempDir(), "k")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "k", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	gittest.Git(t, dir, "config", "gpg.format", "ssh")
	gittest.Git(t, dir, "config", "user.signingKey", key)
	gittest.WriteFile(t, dir, "a", "a\n")
	gittest.Git(t, dir, "add", "-A")
	gittest.Git(t, dir, "commit", "-q", "-S", "-m", "signed\n\nwith a body\n")
	loc, err := gitrepo.Discover(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := gitstore.Open(loc, gitstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	head, err := st.Resolve("HEAD")
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.CommitMeta(head)
	if err != nil {
		t.Fatal(err)
	}
	if m.Signature == nil || !bytes.HasPrefix(m.Signature, []byte("-----BEGIN SSH SIGNATURE-----")) {
		t.Fatalf("signature %q", m.Signature)
	}
	if got := m.Emails(); len(got) != 1 || got[0] != "tester@example.com" {
		t.Fatalf("emails %v (author %q committer %q)", got, m.Author, m.Committer)
	}
	// OpenSSH, the second client: the signature holds over our payload.
	tmp := t.TempDir()
	pubBytes, err := os.ReadFile(key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(tmp, "signers"), []byte("k "+string(pubBytes)), 0o644)
	os.WriteFile(filepath.Join(tmp, "sig"), m.Signature, 0o644)
	cmd := exec.Command("ssh-keygen", "-Y", "verify", "-f", filepath.Join(tmp, "signers"), "-I", "k", "-n", "git", "-s", filepath.Join(tmp, "sig"))
	cmd.Stdin = bytes.NewReader(m.Payload)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen does not verify the signature over the payload: %v: %s\npayload:\n%s", err, out, m.Payload)
	}
	got, err := trust.CommitSigner(m.Payload, m.Signature)
	if err != nil {
		t.Fatal(err)
	}
	want, _, _, _, err := ssh.ParseAuthorizedKey(pubBytes)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Marshal(), want.Marshal()) {
		t.Fatalf("signer %s, want %s", trust.Fingerprint(got), trust.Fingerprint(want))
	}
	// Another payload (the commit changed under its signature) names no one.
	if k, err := trust.CommitSigner(bytes.Replace(m.Payload, []byte("with a body"), []byte("with a lie"), 1), m.Signature); err == nil || k != nil {
		t.Fatalf("an altered commit still names %v (%v)", k, err)
	}
	// An OpenPGP signature is not read: no key, no error.
	if k, err := trust.CommitSigner(m.Payload, []byte("-----BEGIN PGP SIGNATURE-----\nx\n-----END PGP SIGNATURE-----\n")); err != nil || k != nil {
		t.Fatalf("pgp: %v %v", k, err)
	}
	if !strings.Contains(string(m.Payload), "\n\nsigned\n\nwith a body\n") {
		t.Fatalf("payload lost the message: %q", m.Payload)
	}
}
