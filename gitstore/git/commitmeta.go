package git

import (
	"bytes"
	"fmt"
	"net/mail"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/nwdes/nwdes/gitstore/oid"
)

// CommitMeta is who a commit says made it, and the signature it carries:
// what a judgment needs to tell the producer of a candidate from its
// examiner. Nothing in it is verified here.
type CommitMeta struct {
	// Author and Committer are the identity lines without their time
	// ("Name <email>").
	Author, Committer string
	// Signature is the gpgsig header's value (an armored SSH, OpenPGP or
	// X.509 signature), nil when the commit is unsigned.
	Signature []byte
	// Payload is the commit object without its gpgsig header: what the
	// signature covers, as git verifies it.
	Payload []byte
}

// Emails are the author's and the committer's addresses, lower-cased,
// without duplicates; an identity without a readable address gives none.
func (m CommitMeta) Emails() []string {
	var out []string
	for _, id := range []string{m.Author, m.Committer} {
		e := IdentityEmail(id)
		if e != "" && (len(out) == 0 || out[0] != e) {
			out = append(out, e)
		}
	}
	return out
}

// IdentityEmail is the lower-cased address of "Name <email>" (or of a bare
// address), "" when it holds none.
func IdentityEmail(id string) string {
	if i, j := strings.LastIndexByte(id, '<'), strings.LastIndexByte(id, '>'); i >= 0 && j > i {
		return strings.ToLower(strings.TrimSpace(id[i+1 : j]))
	}
	if a, err := mail.ParseAddress(id); err == nil {
		return strings.ToLower(a.Address)
	}
	return ""
}

// CommitMeta reads commit's identities and signature.
func (s *Repo) CommitMeta(commit oid.ID) (CommitMeta, error) {
	if err := s.check(commit); err != nil {
		return CommitMeta{}, err
	}
	h := commit
	t, b, err := s.obj.read(h)
	if err != nil {
		return CommitMeta{}, err
	}
	if t != plumbing.CommitObject {
		return CommitMeta{}, fmt.Errorf("object %s is a %s, expected a commit", h, t)
	}
	return decodeCommitMeta(b), nil
}

// decodeCommitMeta reads the header of a commit object; the message is
// never parsed. A header continues on lines that begin with a space.
func decodeCommitMeta(b []byte) CommitMeta {
	var m CommitMeta
	head, _, _ := bytes.Cut(b, []byte("\n\n"))
	var payload bytes.Buffer
	inSig := false
	rest := b
	for off := 0; off < len(head); {
		end := bytes.IndexByte(head[off:], '\n')
		if end < 0 {
			end = len(head) - off
		}
		line := head[off : off+end]
		next := off + end + 1
		switch {
		case inSig && len(line) > 0 && line[0] == ' ':
			m.Signature = append(append(m.Signature, line[1:]...), '\n')
		default:
			inSig = false
			k, v, _ := bytes.Cut(line, []byte(" "))
			switch string(k) {
			case "gpgsig":
				inSig = true
				m.Signature = append(append([]byte(nil), v...), '\n')
			case "author":
				m.Author = stripTime(string(v))
			case "committer":
				m.Committer = stripTime(string(v))
			}
			if !inSig {
				payload.Write(line)
				payload.WriteByte('\n')
			}
		}
		off = next
	}
	if len(head) < len(rest) {
		payload.Write(rest[len(head)+1:])
	}
	m.Payload = payload.Bytes()
	return m
}

// stripTime drops "<seconds> <zone>" after an identity's closing '>'.
func stripTime(v string) string {
	if i := strings.LastIndexByte(v, '>'); i >= 0 {
		return v[:i+1]
	}
	return v
}
