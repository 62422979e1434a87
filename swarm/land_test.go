package swarm_test

import (
	"context"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/swarm"
)

func TestAMalformedLandingRecordIsLeftOutOnReadAndNamedByFsck(t *testing.T) {
	t.Parallel()
	dir := gittest.Init(t, false)
	st, err := openStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	const cand = "0123456789abcdef0123456789abcdef01234567"
	good := swarm.Landing{Label: "fix", Candidate: cand, Event: swarm.LandLanded, Branch: "refs/heads/main", Remote: "origin",
		At: "2026-01-01T00:00:00Z", By: "me"}
	bad := good
	bad.Label, bad.Event = "other", "forced"
	put := func(path string, l swarm.Landing) {
		t.Helper()
		rec, err := gitstore.NewRecord(swarm.KindLanding, 1, l)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Change(context.Background(), swarm.LandingsRef, "test", func(tx gitstore.Edit) error { return tx.Put(path, rec) }); err != nil {
			t.Fatal(err)
		}
	}
	put("landings/fix/"+cand, good)
	put("landings/other/"+cand, bad)

	got, err := swarm.Landings(st, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[cand] != good {
		t.Fatalf("Landings = %+v, want only the good one", got)
	}
	rep, err := st.Fsck()
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) != 1 || rep.Problems[0].Ref != swarm.LandingsRef || !strings.Contains(rep.Problems[0].What, `event "forced" is not landed or rebased`) {
		t.Fatalf("fsck: %+v", rep.Problems)
	}
}
