package trust

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/nwdes/nwdes/internal/boundedio"
	"github.com/nwdes/nwdes/refusal"
)

// Namespace is the SSH signature namespace of nwdes evidence.
const Namespace = "nwdes-evidence"

// SignaturePayload is the payload name a signed record keeps its signature
// under; Message leaves it out, since a signature cannot cover itself.
const SignaturePayload = "signature"

// Message is what a record's signature covers: a fixed first line, the
// record's canonical record.json, then one line per payload in name order
// with its name and SHA-256 (the signature payload left out).
func Message(recordJSON []byte, payloads map[string][]byte) []byte {
	var b bytes.Buffer
	b.WriteString("nwdes signed record v1\n")
	fmt.Fprintf(&b, "%d\n", len(recordJSON))
	b.Write(recordJSON)
	b.WriteByte('\n')
	names := make([]string, 0, len(payloads))
	for n := range payloads {
		if n != SignaturePayload {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		sum := sha256.Sum256(payloads[n])
		fmt.Fprintf(&b, "payload %s %s\n", n, hex.EncodeToString(sum[:]))
	}
	return b.Bytes()
}

// Sign signs message: an armored SSH signature (sha512), what
// `ssh-keygen -Y sign -n nwdes-evidence` writes for the same key.
func Sign(signer ssh.Signer, message []byte) ([]byte, error) {
	sig, err := sshsig.Sign(bytes.NewReader(message), signer, sshsig.HashSHA512, Namespace)
	if err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	return sshsig.Armor(sig), nil
}

// Verify checks an armored signature over message in Namespace and returns
// the key that made it. A malformed signature, another namespace, or one
// that does not match the message is refused (SignatureInvalid).
func Verify(message, armored []byte) (ssh.PublicKey, error) {
	invalid := func(format string, args ...any) error {
		return refusal.NewUnreadable(refusal.SignatureInvalid,
			"sign the record again (git nwdes examine close --sign), or find who changed it",
			format, args...)
	}
	sig, err := sshsig.Unarmor(armored)
	if err != nil {
		return nil, invalid("the signature does not parse: %v", err)
	}
	if sig.Namespace != Namespace {
		return nil, invalid("the signature is made for %q, not for nwdes evidence (%q)", sig.Namespace, Namespace)
	}
	if err := sshsig.Verify(bytes.NewReader(message), sig, sig.PublicKey, sig.HashAlgorithm, Namespace); err != nil {
		return nil, invalid("the signature by %s does not match the record: %v", ssh.FingerprintSHA256(sig.PublicKey), err)
	}
	return sig.PublicKey, nil
}

// Fingerprint is a key's SHA256 fingerprint as ssh-keygen -l prints it.
func Fingerprint(pub ssh.PublicKey) string { return ssh.FingerprintSHA256(pub) }

// LoadSigner finds the signer git would use for user.signingKey with
// gpg.format=ssh: a private key file (unencrypted), or a public key — a
// file, or "key::<type> <base64>" — whose private half ssh-agent holds
// (SSH_AUTH_SOCK from getenv). A leading "~/" is the home directory.
func LoadSigner(signingKey string, getenv func(string) string) (ssh.Signer, error) {
	unusable := func(format string, args ...any) error {
		return refusal.New(refusal.SigningKeyUnusable,
			"set git config user.signingKey to an SSH private key file, or to a public key whose private key ssh-agent holds",
			format, args...)
	}
	if signingKey == "" {
		return nil, unusable("no signing key: git config user.signingKey is not set")
	}
	var pubText []byte
	if k, ok := strings.CutPrefix(signingKey, "key::"); ok {
		pubText = []byte(k)
	} else {
		path := signingKey
		if rest, ok := strings.CutPrefix(path, "~/"); ok {
			path = getenv("HOME") + "/" + rest
		}
		b, err := boundedio.ReadFile(path, boundedio.Limit{Bytes: MaxKeyFileBytes, Of: "an SSH key file", Remedy: "name your SSH key file in git config user.signingKey"})
		if err != nil {
			return nil, unusable("user.signingKey %s cannot be read: %v", signingKey, err)
		}
		if s, err := ssh.ParsePrivateKey(b); err == nil {
			return s, nil
		} else {
			var missing *ssh.PassphraseMissingError
			if errors.As(err, &missing) {
				pubText = nil
				if missing.PublicKey != nil {
					pubText = ssh.MarshalAuthorizedKey(missing.PublicKey)
				}
			} else {
				pubText = b
			}
		}
	}
	pub, _, _, _, err := ssh.ParseAuthorizedKey(pubText)
	if err != nil {
		return nil, unusable("user.signingKey %s is neither an unencrypted private key nor a public key: %v", signingKey, err)
	}
	sock := getenv("SSH_AUTH_SOCK")
	if sock == "" {
		return nil, unusable("the private key of %s is in no file nwdes can read, and no ssh-agent is running (SSH_AUTH_SOCK)", ssh.FingerprintSHA256(pub))
	}
	conn, err := net.Dial("unix", sock)
	if err != nil {
		return nil, unusable("ssh-agent at SSH_AUTH_SOCK cannot be reached: %v", err)
	}
	signers, err := agent.NewClient(conn).Signers()
	if err != nil {
		return nil, unusable("ssh-agent lists no keys: %v", err)
	}
	for _, s := range signers {
		if bytes.Equal(s.PublicKey().Marshal(), pub.Marshal()) {
			return s, nil
		}
	}
	return nil, unusable("ssh-agent does not hold the private key of %s", ssh.FingerprintSHA256(pub))
}

// CommitNamespace is the namespace git signs commits in (gpg.format=ssh).
const CommitNamespace = "git"

// CommitSigner returns the key that made a commit's SSH signature over
// payload (the commit without its gpgsig header), verified in git's
// namespace. Nil and no error when armored is not an SSH signature (an
// OpenPGP or X.509 one, which nwdes does not read); an SSH signature that
// does not hold is refused (SignatureInvalid), so a forged signature never
// names a key.
func CommitSigner(payload, armored []byte) (ssh.PublicKey, error) {
	if !bytes.HasPrefix(bytes.TrimSpace(armored), []byte("-----BEGIN SSH SIGNATURE-----")) {
		return nil, nil
	}
	sig, err := sshsig.Unarmor(armored)
	if err == nil && sig.Namespace != CommitNamespace {
		err = fmt.Errorf("made for %q, not for a commit", sig.Namespace)
	}
	if err == nil {
		err = sshsig.Verify(bytes.NewReader(payload), sig, sig.PublicKey, sig.HashAlgorithm, CommitNamespace)
	}
	if err != nil {
		return nil, refusal.NewUnreadable(refusal.SignatureInvalid, "sign the commit again, or find who changed it",
			"the commit's SSH signature does not hold: %v", err)
	}
	return sig.PublicKey, nil
}
