package examine_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/gitstore/oid"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/refusal"
)

// tamper rewrites the published examination at path with edit applied to
// its decoded body; with rename the record is also moved to the name its
// new content gives it (and the feature index follows), so that only the
// field check can give it away.
func tamper(t *testing.T, st *gitstore.Store, path string, rename bool, edit func(map[string]any)) string {
	t.Helper()
	newPath := path
	rewriteTip(t, st, func(files map[string][]byte) {
		b := editBody(t, files, path+"/record.json", edit)
		if rename {
			sum := sha256.Sum256(b)
			newPath = path[:strings.LastIndexByte(path, '-')+1] + hex.EncodeToString(sum[:6])
			moveRecord(files, path, newPath)
			idx := "features/f/record.json"
			files[idx] = []byte(strings.Replace(string(files[idx]), path, newPath, 1))
		}
	})
	return newPath
}

func fsckProblems(t *testing.T, st *gitstore.Store) string {
	t.Helper()
	st2, err := gitstore.Open(st.Location(), gitstore.Options{Registry: gitstore.MustRegistry(examine.Register)})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := st2.Fsck()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, p := range rep.Problems {
		b.WriteString(p.What + "\n")
	}
	return b.String()
}

func TestARecordWithFieldsOfTheWrongShapeIsRefusedNotSliced(t *testing.T) {
	t.Parallel()
	cases := map[string]func(map[string]any){
		"a short contract_blob": func(b map[string]any) { b["contract_blob"] = "ab" },
		"an empty candidate":    func(b map[string]any) { b["candidate"] = "" },
		"a malformed time":      func(b map[string]any) { b["closed_at"] = "yesterday" },
		"an unknown outcome":    func(b map[string]any) { b["outcome"] = "approved" },
		"a feature name with a slash": func(b map[string]any) {
			b["feature"] = "../f"
		},
	}
	for name, edit := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, x := setup(t, threeRows)
			ex := closeAccepted(t, x, tg, "E1", "E2", "E3")
			tamper(t, x.Store.(*gitstore.Store), ex.Path, true, edit)
			r, err := examine.NewReader(x.Store)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.Standing(oid.MustParse(ex.Candidate), "f"); !refusal.Named(err, "RecordMalformed") {
				t.Fatalf("standing: %v, want RecordMalformed", err)
			}
			if _, _, err := x.Show("f"); !refusal.Named(err, "RecordMalformed") {
				t.Fatalf("show: %v, want RecordMalformed", err)
			}
			if p := fsckProblems(t, x.Store.(*gitstore.Store)); p == "" {
				t.Fatal("fsck found nothing")
			}
		})
	}
}

func TestAnExaminationRenamedToSortNewestIsRefusedByItsName(t *testing.T) {
	t.Parallel()
	_, x := setup(t, threeRows)
	ex := closeAccepted(t, x, tg, "E1", "E2", "E3")
	rewriteTip(t, x.Store.(*gitstore.Store), func(files map[string][]byte) {
		moveRecord(files, ex.Path, ex.Path[:strings.LastIndexByte(ex.Path, '/')+1]+"zzzz")
	})
	r, _ := examine.NewReader(x.Store)
	if _, err := r.Standing(oid.MustParse(ex.Candidate), "f"); !refusal.Named(err, "RecordMalformed") || !strings.Contains(err.Error(), `name is "zzzz"`) {
		t.Fatalf("standing: %v", err)
	}
	if p := fsckProblems(t, x.Store.(*gitstore.Store)); !strings.Contains(p, `name is "zzzz"`) {
		t.Fatalf("fsck: %q", p)
	}
}

func TestARecordEditedInPlaceIsRefusedByItsName(t *testing.T) {
	t.Parallel()
	_, x := setup(t, threeRows)
	ex := closeAccepted(t, x, tg, "E1", "E2", "E3")
	tamper(t, x.Store.(*gitstore.Store), ex.Path, false, func(b map[string]any) { b["diagnostic"] = "edited later" })
	if p := fsckProblems(t, x.Store.(*gitstore.Store)); !strings.Contains(p, "but its time and content name it") {
		t.Fatalf("fsck: %q", p)
	}
}

func TestADraftWhoseNextIDIsBelowAnIssuedIDIsRefused(t *testing.T) {
	t.Parallel()
	_, x := setup(t, threeRows)
	ctx := context.Background()
	okFor(t)(x.Open(ctx, tg, false))
	okFor(t)(x.AddObservation(ctx, tg, examine.SourceExaminer, []byte("one")))
	okFor(t)(x.AddObservation(ctx, tg, examine.SourceExaminer, []byte("two")))
	_, err := x.Store.Change(ctx, examine.DraftsRef, "tamper", func(tx gitstore.Edit) error {
		rec, err := tx.Get("drafts/f")
		if err != nil {
			return err
		}
		rec.Body = []byte(strings.Replace(string(rec.Body), `"next_id":3`, `"next_id":2`, 1))
		return tx.Put("drafts/f", rec)
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.AddObservation(ctx, tg, examine.SourceExaminer, []byte("three")); !refusal.Named(err, "RecordMalformed") {
		t.Fatalf("add over a draft that would reissue O2: %v", err)
	}
	if p := fsckProblems(t, x.Store.(*gitstore.Store)); !strings.Contains(p, "next_id 2 is not above issued observation O2") {
		t.Fatalf("fsck: %q", p)
	}
}

func TestACloseRefusesToFollowAnExaminationDatedAtTheEndOfTime(t *testing.T) {
	t.Parallel()
	_, x := setup(t, threeRows)
	ex := closeAccepted(t, x, tg, "E1", "E2", "E3")
	p := tamper(t, x.Store.(*gitstore.Store), ex.Path, false, func(b map[string]any) { b["closed_at"] = "9999-12-31T23:59:59.999999999Z" })
	// Named as its content names it: valid in shape, forged in time.
	rewriteTip(t, x.Store.(*gitstore.Store), func(files map[string][]byte) {
		sum := sha256.Sum256(editBody(t, files, p+"/record.json", func(map[string]any) {}))
		moveRecord(files, p, p[:strings.LastIndexByte(p, '/')+1]+"99991231T235959.999999999Z-"+hex.EncodeToString(sum[:6]))
	})
	if _, _, err := x.Close(context.Background(), tg, "accepted", "again"); !refusal.Named(err, "RecordMalformed") || !strings.Contains(err.Error(), "no later close could sort after it") {
		t.Fatalf("close after a far-future examination: %v", err)
	}
}
