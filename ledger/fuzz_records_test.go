package ledger

import (
	"testing"

	"github.com/nwdes/nwdes/gitstore"
)

// FuzzEntryRecords: an entry record is accepted only where its sequence
// number puts it, with a digest its content gives.
func FuzzEntryRecords(f *testing.F) {
	f.Add("entries/000000/0000000001", []byte(`{"digest":"x","event":{"a":1},"prev":"`+Genesis+`","seq":1}`))
	f.Add("seal", []byte(`{"at":"2026-01-01T00:00:00Z","count":0,"final":"`+Genesis+`"}`))
	f.Fuzz(func(t *testing.T, path string, body []byte) {
		rec := &gitstore.Record{Kind: KindEntry, V: 1, Body: body}
		if e, err := entryFrom(path, rec); err == nil {
			d, _ := digestOf(e.Seq, e.Prev, e.Event)
			if path != entryPath(e.Seq) || d != e.Digest {
				t.Fatalf("accepted %+v at %s", e, path)
			}
		}
		_, _ = sealFrom(&gitstore.Record{Kind: KindSeal, V: 1, Body: body})
	})
}
