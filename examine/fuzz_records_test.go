package examine

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/gitstore/oid"

	"github.com/nwdes/nwdes/gitstore"
)

// FuzzRecordDecoders feeds every record decoder any body at any path: each
// must refuse what it does not understand, never panic, and never return a
// value whose ids a later slice would trip on.
func FuzzRecordDecoders(f *testing.F) {
	const c = "0123456789abcdef0123456789abcdef01234567"
	seeds := []struct {
		kind       string
		path, body string
	}{
		{string(KindExamination), "published/01/23456789abcdef0123456789abcdef01234567/f/20260101T000000.000000000Z-000000000000",
			`{"candidate":"` + c + `","closed_at":"2026-01-01T00:00:00.000000000Z","contract_blob":"ab","contract_path":"x","diagnostic":"d","feature":"f","outcome":"accepted","rows":[{"cites":[0],"criterion":"c","expectation":"E1","verdict":"met"}],"texts":[{"source":"examiner"}]}`},
		{string(KindExamination), "published/01/23456789abcdef0123456789abcdef01234567/f/20260101T000000.000000000Z-000000000001",
			`{"candidate":"` + c + `","closed_at":"2026-01-01T00:00:00.000000000Z","contract_blob":"ab","contract_path":"x","diagnostic":"d","feature":"f","outcome":"accepted","rows":[{"cites":[0],"criterion":"c","expectation":"E1","proof":"vacuous","proof_base":"` + c[1:] + `0","verdict":"met"}],"texts":[{"source":"examiner"}]}`},
		{string(KindEvidence), "evidence/01/23456789abcdef0123456789abcdef01234567/f/E1/20260101T000000.000000000Z-000000000000",
			`{"base":{"commit":"` + c[1:] + `0","end":"exit","exit_status":1,"marker_found":false,"started_at":"2026-01-01T00:00:00Z","duration_ms":1,"timeout_ms":1,"state":"NOT-MET","stdout":{"bytes":0,"sha256":"","tail_bytes":0},"stderr":{"bytes":0,"sha256":"","tail_bytes":0}},"candidate":"` + c + `","check":"true","contract_path":"x","end":"exit","exit_status":0,"expect":"","expectation":"E1","feature":"f","marker_found":true,"started_at":"2026-01-01T00:00:00Z","duration_ms":1,"timeout_ms":1,"state":"MET","stdout":{"bytes":0,"sha256":"","tail_bytes":0},"stderr":{"bytes":0,"sha256":"","tail_bytes":0}}`},
		{string(KindExamination), "published/01/2/f/zzzz", `{"candidate":"","closed_at":"x","contract_blob":"","contract_path":"","diagnostic":"","feature":"../f","outcome":"accepted","rows":[],"texts":[]}`},
		{string(KindLatest), "features/f", `{"candidate":"` + c + `","closed_at":"2026-01-01T00:00:00.000000000Z","outcome":"accepted","path":"published/x"}`},
		{string(KindDraft), "drafts/f", `{"feature":"f","next_id":1,"observations":[{"id":"O1","source":"examiner"}],"rows":["E1"],"verdicts":[]}`},
		{string(KindDraft), "drafts/f", `{"candidate":"` + c + `","feature":"f","next_id":2,"rows":["E1"],"verdicts":[{"expectation":"E1","observations":["O1"],"verdict":"met"}]}`},
		{string(KindObservation), "draftobs/f/0/O1", `{"commit":"` + c + `","id":"O1","source":"examiner"}`},
		{string(KindEvidence), "evidence/01/23/f/E1/x-y", `{"candidate":"` + c + `","end":"wall","state":"MET","feature":"f","expectation":"E1"}`},
		{string(KindGateLatest), "latest/f", `{"criteria":{"E1":{"candidate":"ab","path":"p","ran_at":"t","state":"MET"}},"feature":"f"}`},
		{string(KindVerifyResult), "verify/01/23/f/x-y", `{"feature":"f","head":"` + c + `","verdict":"ERROR"}`},
		{string(KindProjection), "projections/01/23456789abcdef0123456789abcdef01234567/4b825dc642cb6eb9a060e54bf8d69288fbee4904-000000000000",
			`{"candidate":"` + c + `","files":0,"tree":"4b825dc642cb6eb9a060e54bf8d69288fbee4904"}`},
		{string(KindWorkspace), "workspaces/nwdes-examine-f-1",
			`{"candidate":"` + c + `","checkout":"/r","created":"2026-01-01T00:00:00Z","feature":"f","path":"/tmp/nwdes-examine-f-1","projection":"` + c + `"}`},
	}
	for _, s := range seeds {
		f.Add(s.kind, s.path, []byte(s.body), 1)
		f.Add(s.kind, s.path, []byte(s.body), 2)
		f.Add(s.kind, s.path, []byte(s.body), 3)
		f.Add(s.kind, s.path, []byte(s.body), 5)
	}
	f.Fuzz(func(t *testing.T, kind, path string, body []byte, v int) {
		rec := &gitstore.Record{Kind: gitstore.Kind(kind), V: v, Body: body, Payloads: map[string][]byte{"t1": []byte("x"), "O1": []byte("y")}}
		if ex, err := examinationFrom(path, rec); err == nil {
			_ = RenderBrief(ex)
			for _, r := range ex.Rows {
				if r.Proof != "" && (v < 5 || r.Verdict != Met || !isFullID(r.ProofBase)) {
					t.Fatalf("accepted a v%d examination whose row %s has proof %q at %q", v, r.Expectation, r.Proof, r.ProofBase)
				}
			}
			if !isFullID(ex.Candidate) || !isFullID(ex.ContractBlob) {
				t.Fatalf("accepted an examination with ids %q %q", ex.Candidate, ex.ContractBlob)
			}
		}
		_, _ = latestFrom(path, rec)
		if d, err := draftFrom(path, rec, nil); err == nil {
			for _, o := range d.Observations {
				if n, ok := observationNumber(o.ID); !ok || n >= d.NextID {
					t.Fatalf("accepted a draft that would reissue %s (next_id %d)", o.ID, d.NextID)
				}
			}
		}
		obs := &gitstore.Record{Kind: rec.Kind, V: v, Body: body, Payloads: map[string][]byte{textPayload: []byte("x")}}
		if o, err := observationFrom(path, obs); err == nil {
			if f, ok := observationFeature(path); !ok || observationPath(f, o.ID) != path || o.problem() != "" {
				t.Fatalf("accepted observation %s at %s", o.ID, path)
			}
		}
		if e, err := evidenceFrom(path, rec); err == nil {
			_ = e.Summary()
			_ = e.ObservationText()
			_ = e.ProofNote()
			if (e.Base != nil) != (v == 3) {
				t.Fatalf("accepted gate evidence v%d with base %v", v, e.Base != nil)
			}
		}
		_, _ = gateLatestFrom(path, rec)
		if b, err := projectionFrom(path, rec); err == nil {
			if _, err := oid.Parse(b.Candidate); err != nil || projectionPath(oid.MustParse(b.Candidate), oid.MustParse(b.Tree), rec.Body) != path {
				t.Fatalf("accepted a projection stored elsewhere than its name: %+v at %s", b, path)
			}
		}
		if w, err := workspaceFrom(path, rec); err == nil && (!filepath.IsAbs(w.Path) || workspacePath(w.Path) != path) {
			t.Fatalf("accepted a workspace record %+v at %s", w, path)
		}
		if r, err := verifyFrom(path, rec); err == nil {
			_ = r.Render()
			_ = r.Token()
		}
	})
}

// FuzzObservationNumber holds observationNumber, which reads IDs by hand,
// to the rule obsID states, for every ID whose number fits an int.
func FuzzObservationNumber(f *testing.F) {
	for _, s := range []string{"O1", "O0", "O01", "O123", "o1", "O", "O1a", "O999999999999999999", "O-1", "O١"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := observationNumber(ObservationID(s))
		want, err := strconv.Atoi(strings.TrimPrefix(s, "O"))
		wantOK := obsID.MatchString(s) && err == nil && len(s) <= 19
		if ok != wantOK || (ok && n != want) {
			t.Fatalf("observationNumber(%q) = %d, %v; want %d, %v", s, n, ok, want, wantOK)
		}
	})
}
