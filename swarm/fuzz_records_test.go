package swarm

import (
	"testing"

	"github.com/nwdes/nwdes/gitstore"
)

// FuzzRecordDecoders feeds every swarm record decoder any body at any
// path: each refuses what it does not understand and never panics; what
// it accepts holds its own invariants.
func FuzzRecordDecoders(f *testing.F) {
	const c = "0123456789abcdef0123456789abcdef01234567"
	seeds := []struct{ kind, path, body string }{
		{string(KindLease), "lease", `{"attempt":1,"attest":"00","boot":"b","heartbeat":"2026-01-01T00:00:00Z","host":"h","label":"a","nonce":"n","owner":"o","pid":1,"start":1,"taken":"2026-01-01T00:00:00Z","until":"2026-01-01T00:00:00Z"}`},
		{string(KindJob), "jobs/a/1-n", `{"attempt":1,"attest":"00","end":"done","exit_code":0,"exit_sha256":"00","holder":{"boot":"","host":"","owner":"","pid":0,"start":0},"job_dir":"/x","label":"a","nonce":"n","result":"ok","started":"","ended":"","survivors":0,"worker":"w"}`},
		{string(KindStop), "stop/all", `{"at":"2026-01-01T00:00:00Z","by":"me","card":"all"}`},
		{string(KindLanding), "landings/a/" + c, `{"at":"2026-01-01T00:00:00Z","branch":"refs/heads/main","by":"me","candidate":"` + c + `","event":"landed","label":"a","remote":"origin"}`},
		{string(KindCard), "cards/a", `{"added":"2026-01-01T00:00:00Z","base":"` + c + `","by":"me","contract":"RESULT: a sha=0123456789ab","label":"a"}`},
	}
	for _, s := range seeds {
		f.Add(s.kind, s.path, []byte(s.body), []byte("RESULT: a sha=0123456789ab\nBASE: "+c+"\n\nhi\n"))
	}
	f.Fuzz(func(t *testing.T, kind, path string, body, payload []byte) {
		rec := &gitstore.Record{Kind: gitstore.Kind(kind), V: 1, Body: body,
			Payloads: map[string][]byte{cardPayload: payload, exitPayload: payload}}
		if l, err := leaseFrom(rec); err == nil && (l.Nonce == "" || l.Attempt < 1) {
			t.Fatalf("accepted a lease without nonce or attempt: %+v", l)
		}
		if j, err := jobFrom(path, rec); err == nil && path != jobPath(j.Label, j.Attempt, j.Nonce) {
			t.Fatalf("accepted a job stored elsewhere: %+v at %s", j, path)
		}
		if s, err := stopFrom(path, rec); err == nil && path != stopPath(s.Card) {
			t.Fatalf("accepted a stop stored elsewhere: %+v at %s", s, path)
		}
		bare := &gitstore.Record{Kind: gitstore.Kind(kind), V: 1, Body: body}
		if l, err := landingFrom(path, bare); err == nil && (path != landingPath(l.Label, l.Candidate) || l.problem() != "") {
			t.Fatalf("accepted a landing that does not hold together: %+v at %s", l, path)
		}
		one := &gitstore.Record{Kind: gitstore.Kind(kind), V: 1, Body: body, Payloads: map[string][]byte{cardPayload: payload}}
		if q, err := cardRecord(path, one); err == nil && path != cardPath(q.Card.Label) {
			t.Fatalf("accepted a card stored elsewhere: %+v at %s", q.Card.Label, path)
		}
	})
}
