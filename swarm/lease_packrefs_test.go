package swarm_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/swarm"
)

// TestReleaseRacingATakeoverWhileGitPacksRefs: a holder on another host
// releases its lease while this host takes it over as stale, round after
// round, and git pack-refs --all --prune packs the lease's ref, deletes
// its loose file and removes the emptied directories throughout. Each
// round one order wins: the release, and the takeover finds the card
// free; or the takeover, and the release answers ErrLost. Either way the
// takeover holds afterwards, List names it, and no Take or Release fails
// for git's doing.
func TestReleaseRacingATakeoverWhileGitPacksRefs(t *testing.T) {
	dir := gittest.Init(t, false)
	open := func() *swarm.Local {
		st, err := openStore(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return &swarm.Local{Store: st}
	}
	theirs, ours := open(), open()
	me, err := swarm.Self("me")
	if err != nil {
		t.Fatal(err)
	}
	them := me
	them.Host, them.Boot = "elsewhere", "another-boot"
	ctx := context.Background()
	takeFreeOrStale := func(cur *swarm.Lease, _ error, _ time.Time) error {
		// Seen unchanged for an hour, longer than the stale window.
		if !swarm.StateOf(cur, time.Hour, me, time.Now(), time.Minute).Takeable() {
			return swarm.ErrNotTaken
		}
		return nil
	}

	rounds := gittest.Rounds{Min: 100, Runs: 20, Max: 1500}
	if !testing.Short() {
		rounds = gittest.Rounds{Min: 1000, Runs: 200, Max: 15000}
	}
	released := 0
	loop := gittest.Loop(t, dir, "pack-refs", "--all", "--prune")
	loop.Race(rounds, func(round int) {
		held := lease(them, "card", time.Now(), time.Hour)
		held.Nonce = fmt.Sprintf("held-%d", round)
		tip, err := theirs.Take(ctx, "card", held, takeFree)
		if err != nil {
			t.Fatalf("round %d: take the free card: %v (did the last round's release come undone?)", round, err)
		}
		over := lease(me, "card", time.Now(), time.Hour)
		over.Nonce = fmt.Sprintf("over-%d", round)
		var wg sync.WaitGroup
		var relErr, takeErr error
		var overTip oid.ID
		wg.Add(2)
		go func() { defer wg.Done(); relErr = theirs.Release(ctx, "card", tip) }()
		go func() { defer wg.Done(); overTip, takeErr = ours.Take(ctx, "card", over, takeFreeOrStale) }()
		wg.Wait()
		if takeErr != nil {
			t.Fatalf("round %d: the takeover: %v", round, takeErr)
		}
		switch {
		case relErr == nil:
			released++
		case !errors.Is(relErr, swarm.ErrLost):
			t.Fatalf("round %d: the release: %v", round, relErr)
		}
		if now, err := ours.Store.Tip("refs/nwdes-local/swarm/leases/card"); err != nil || now != overTip {
			t.Fatalf("round %d: the lease's ref is at %s (%v) after the release (%v), not at the takeover's %s: the takeover was lost", round, now, err, relErr, overTip)
		}
		entries, err := theirs.List(ctx)
		if err != nil {
			t.Fatalf("round %d: list: %v", round, err)
		}
		if len(entries) != 1 || entries[0].Lease == nil || entries[0].Lease.Nonce != over.Nonce || entries[0].Tip != overTip {
			t.Fatalf("round %d: List gave %+v, want the takeover's lease at %s", round, entries, overTip)
		}
		if err := ours.Release(ctx, "card", overTip); err != nil {
			t.Fatalf("round %d: release the takeover: %v", round, err)
		}
	})
	t.Logf("the release came first in %d rounds", released)
}
