package examine_test

import (
	"testing"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/internal/gittest"
)

func plumbingHash(s string) oid.ID { return oid.MustParse(s) }

// rewriteTip replaces Ref's tip by a commit of the same parents whose tree
// is edit's rewrite of it, and forgets this clone's checkpoint: the records
// as a fresh clone receives them from a writer who forged them. (Changing
// a record along a history this clone verified is refused HistoryRewritten
// before any record is read; these tests are about what a reader makes of
// the record itself.)
func rewriteTip(t *testing.T, st *gitstore.Store, edit func(files map[string][]byte)) {
	t.Helper()
	gittest.RewriteTip(t, st.Location().CommonDir, string(examine.Ref), string(gitstore.CheckpointRef(examine.Ref)), edit)
}

func moveRecord(files map[string][]byte, from, to string) { gittest.MoveRecord(files, from, to) }

func editBody(t *testing.T, files map[string][]byte, path string, edit func(body map[string]any)) []byte {
	t.Helper()
	return gittest.EditBody(t, files, path, edit)
}
