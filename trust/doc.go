// Package trust signs and verifies nwdes evidence with the SSH keys git
// already uses for signing (gpg.format=ssh, user.signingKey), in the SSH
// signature format of `ssh-keygen -Y sign` (PROTOCOL.sshsig), through
// github.com/hiddeco/sshsig over golang.org/x/crypto/ssh.
//
// A signature covers a record, not the commit that holds it: the record's
// canonical record.json and the SHA-256 of each payload by name (Message),
// so it survives the merges push and fetch write and can be checked alone.
// It is made in its own namespace ("nwdes-evidence"), so that a signature
// made for a git commit or a file never passes as evidence, nor the reverse.
// Verify says which key signed; whether that key may accept a feature is a
// policy question for the caller. The policy is an allowed-signers file
// (ParsePolicy); AddLine and RemoveLines edit it line by line, keeping the
// other lines byte for byte.
//
// Layering: imports x/crypto/ssh, sshsig, nwdes/refusal and the standard
// library; examine and the CLI import it.
package trust
