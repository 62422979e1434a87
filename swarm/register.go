package swarm

import "github.com/nwdes/nwdes/gitstore"

// Refs of the swarm.
const (
	// QueueRef holds the queued cards (cards/<label>): merged between
	// clones, each card immutable once queued.
	QueueRef gitstore.RefName = "refs/nwdes/swarm/queue"
	// JobsRef holds one record per finished job (jobs/<label>/<attempt>-<nonce>).
	JobsRef gitstore.RefName = "refs/nwdes/swarm/jobs"
	// ControlRef holds stop records (stop/all, stop/<label>).
	ControlRef gitstore.RefName = "refs/nwdes/swarm/control"
	// LocalLeases is the family of this repository's leases, one ref per
	// card: never pushed, moved by compare-and-swap of the local ref.
	LocalLeases gitstore.RefName = "refs/nwdes-local/swarm/leases/"
	// RemoteLeases is the family of leases kept on a remote, one ref per
	// card: moved only by an atomic push with the expected old value.
	RemoteLeases gitstore.RefName = "refs/nwdes/swarm/leases/"
	// Heads is the family of harvested heads, one ref per job attempt
	// that committed (heads/<label>/<attempt>-<nonce>, HeadRef): a plain
	// commit the worker made, not a records tree. Written once (Adopt),
	// pushed and fetched with the job records, never moved. Beside them,
	// heads/<label>/rebased-<commit> (RebasedRef): a candidate swarm land
	// made by rebasing one onto its branch's new tip.
	Heads gitstore.RefName = "refs/nwdes/swarm/heads/"
	// LandingsRef holds what swarm land did with each candidate of a card
	// (landings/<label>/<candidate>): landed, or rebased into the next
	// candidate. Merged between clones, each record immutable.
	LandingsRef gitstore.RefName = "refs/nwdes/swarm/landings"
)

// Record kinds.
//
// swarm.card v1: a queued card: label, base, contract line, deadline,
// when and by whom; payload "card" is the card's text.
// swarm.lease v1: who holds a card (Lease).
// swarm.job v1: how one attempt at a card ended (Job).
// swarm.job v2: v1 and what became of the job's commits: harvest, head,
// head_ref, commits, changed, changed_count, harvest_note (Job).
// swarm.stop v1: a stop record (Stop).
// swarm.requeue v1: a finished card runs again (Requeue).
// swarm.drop v1: a card never runs (Drop).
// swarm.landing v1: what swarm land did with a candidate (Landing).
const (
	KindCard    gitstore.Kind = "swarm.card"
	KindLease   gitstore.Kind = "swarm.lease"
	KindJob     gitstore.Kind = "swarm.job"
	KindStop    gitstore.Kind = "swarm.stop"
	KindRequeue gitstore.Kind = "swarm.requeue"
	KindDrop    gitstore.Kind = "swarm.drop"
	KindLanding gitstore.Kind = "swarm.landing"
)

// Register declares the swarm's kinds and refs.
func Register(r *gitstore.Registry) error {
	for _, k := range []gitstore.KindSpec{
		{Kind: KindCard, Version: 1, Check: checkRecord},
		{Kind: KindLease, Version: 1, Check: checkRecord},
		{Kind: KindJob, Version: jobVersion, Check: checkRecord},
		{Kind: KindStop, Version: 1, Check: checkRecord},
		{Kind: KindRequeue, Version: 1, Check: checkRecord},
		{Kind: KindDrop, Version: 1, Check: checkRecord},
		{Kind: KindLanding, Version: landingVersion, Check: checkRecord},
	} {
		if err := r.DeclareKind(k); err != nil {
			return err
		}
	}
	for _, spec := range []gitstore.RefSpec{
		{Ref: QueueRef, Policy: gitstore.PolicyMerge, Layout: []string{"cards"}, Immutable: []string{"cards"}, Kinds: []gitstore.Kind{KindCard}},
		{Ref: JobsRef, Policy: gitstore.PolicyMerge, Layout: []string{"jobs"}, Immutable: []string{"jobs"}, Kinds: []gitstore.Kind{KindJob}},
		{Ref: ControlRef, Policy: gitstore.PolicyMerge, Layout: []string{"stop", "requeue", "drop"}, Kinds: []gitstore.Kind{KindStop, KindRequeue, KindDrop}},
		{Ref: LocalLeases, Policy: gitstore.PolicyLocal, History: gitstore.HistoryLatest, Layout: []string{"lease"}, Kinds: []gitstore.Kind{KindLease}},
		{Ref: RemoteLeases, Policy: gitstore.PolicySwap, Layout: []string{"lease"}, Kinds: []gitstore.Kind{KindLease}},
		{Ref: LandingsRef, Policy: gitstore.PolicyMerge, Layout: []string{"landings"}, Immutable: []string{"landings"}, Kinds: []gitstore.Kind{KindLanding}},
		{Ref: Heads, Policy: gitstore.PolicyFastForward, Commit: true},
	} {
		if err := r.DeclareRef(spec); err != nil {
			return err
		}
	}
	return nil
}
