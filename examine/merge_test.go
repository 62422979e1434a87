package examine_test

import (
	"testing"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
)

func record(t *testing.T, kind gitstore.Kind, body any) *gitstore.Record {
	t.Helper()
	r, err := gitstore.NewRecord(kind, 1, body)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestMergeKeepsTheLaterExaminationIndexAndTheDraftThatIssuedMore(t *testing.T) {
	older := record(t, examine.KindLatest, map[string]string{"path": "published/aa/x/f/1", "candidate": "ff", "outcome": "accepted", "closed_at": "2026-01-01T00:00:01.000000000Z"})
	newer := record(t, examine.KindLatest, map[string]string{"path": "published/00/x/f/2", "candidate": "00", "outcome": "rejected", "closed_at": "2026-01-01T00:00:02.000000000Z"})
	small := record(t, examine.KindDraft, map[string]any{"feature": "f", "next_id": 2, "observations": []any{}, "verdicts": []any{}, "rows": []any{}})
	large := record(t, examine.KindDraft, map[string]any{"feature": "f", "next_id": 5, "observations": []any{}, "verdicts": []any{}, "rows": []any{}})
	cases := []struct {
		path          string
		keep, discard *gitstore.Record
	}{
		{"features/f", newer, older},
		{"drafts/f", large, small},
	}
	reg := gitstore.MustRegistry(examine.Register)
	for _, c := range cases {
		spec, ok := reg.Kind(c.keep.Kind)
		if !ok || spec.Merge == nil {
			t.Fatalf("%s: no merge rule declared", c.keep.Kind)
		}
		a, err := spec.Merge(examine.Ref, c.path, c.keep, c.discard)
		if err != nil || a != gitstore.Ours {
			t.Fatalf("%s: kept %v (%v)", c.path, a, err)
		}
		b, err := spec.Merge(examine.Ref, c.path, c.discard, c.keep)
		if err != nil || b != gitstore.Theirs {
			t.Fatalf("%s swapped: kept %v (%v)", c.path, b, err)
		}
	}
}
