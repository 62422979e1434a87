package workspace_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/examine/workspace"
	"github.com/nwdes/nwdes/gitstore"
)

// REVIEW 5: a projection record anyone could push, at the path of the
// candidate's real projection, well formed (fsck and projectionFrom accept
// it) but naming another config blob, is never replaced by a prompt (the
// prompt keeps whatever is there), so every read and probe of every later
// workspace for that candidate is refused RecordMalformed, and the
// refusal's remedy ("make a new workspace") cannot help.
func TestReviewAHostileProjectionRecordDoesNotBlockEveryWorkspace(t *testing.T) {
	_, st := candidate(t, nil)
	cand, err := examine.Load(st, examine.Target{Feature: "greeting"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := examine.ProjectionOf(st, cand.Commit)
	if err != nil {
		t.Fatal(err)
	}
	c := cand.Commit.String()
	path := "projections/" + c[:2] + "/" + c[2:] + "/" + p.Tree.String()
	_, err = st.Change(context.Background(), examine.Ref, "hostile", func(tx gitstore.Edit) error {
		rec, err := gitstore.NewRecord(examine.KindProjection, 1, map[string]any{
			"candidate": c, "config": p.Commands.String(), // the wrong blob
			"commands": p.Commands.String(), "tree": p.Tree.String(), "files": len(p.Files),
		})
		if err != nil {
			return err
		}
		for _, f := range p.Files {
			rec.Tree = append(rec.Tree, gitstore.TreeFile{Path: f.Path, Mode: f.Mode, Blob: f.Blob})
		}
		return tx.Put(path, rec)
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := st.Fsck(); err == nil {
		t.Logf("fsck problems: %v", rep.Problems)
	}
	b := prompt(t, st)
	if _, _, err := workspace.Open(st, b.Workspace); err != nil {
		t.Fatalf("a fresh workspace cannot be opened: %v", err)
	}
}

// REVIEW 6: a prompt refused for its TMPDIR (TempDirUnusable) leaves the
// projection record behind in the shared examine ref.
func TestReviewARefusedPromptRecordsNothing(t *testing.T) {
	checkout, st := candidate(t, nil)
	var before any
	p := &workspace.Prompter{Store: st, TempDir: filepath.Join(checkout, "docs"), Now: time.Now}
	if _, err := p.Prompt(context.Background(), examine.Target{Feature: "greeting"}); refusalName(err) != "TempDirUnusable" {
		t.Fatalf("%v", err)
	}
	tx, err := st.Records(examine.Ref)
	if err == nil {
		names, _ := tx.List("projections")
		if len(names) > 0 {
			t.Fatalf("a refused prompt recorded projections %v in %s (refs before: %v)", names, examine.Ref, before)
		}
	}
}
