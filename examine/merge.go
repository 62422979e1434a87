package examine

import (
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/oid"
)

// Register declares this package's kinds of record and the refs it keeps
// them under, with their sync policies (gitstore.Registry):
//
//   - Ref (examinations: published records, the feature index, and drafts
//     an earlier nwdes kept there) and GateRef (gate evidence, verify
//     results) are merged between clones: published records have names of
//     their own and union without conflict; the index and drafts have
//     merge rules.
//   - DraftsRef is local: a clone's drafts never travel; so is the
//     ReplayDrafts family, each ref one replay's private drafts.
//   - The notes ref's fsck check compares each brief with the records.
func Register(r *gitstore.Registry) error {
	kinds := []gitstore.KindSpec{
		{Kind: KindDraft, Version: 3, Check: CheckRecord, Merge: resolveDraft},
		{Kind: KindObservation, Version: 1, Check: CheckRecord},
		{Kind: KindExamination, Version: 6, Check: CheckRecord},
		{Kind: KindLatest, Version: 1, Check: CheckRecord, Merge: resolveLatest},
		{Kind: KindEvidence, Version: 3, Check: CheckRecord},
		{Kind: KindGateLatest, Version: 1, Check: CheckRecord},
		{Kind: KindVerifyResult, Version: 1, Check: CheckRecord},
		{Kind: KindProjection, Version: 1, Check: CheckRecord},
		{Kind: KindWorkspace, Version: 1, Check: CheckRecord},
	}
	for _, k := range kinds {
		if err := r.DeclareKind(k); err != nil {
			return err
		}
	}
	refs := []gitstore.RefSpec{
		{Ref: Ref, Policy: gitstore.PolicyMerge, Layout: []string{"drafts", "features", "projections", "published"}, Immutable: []string{"projections", "published"},
			Kinds: []gitstore.Kind{KindDraft, KindExamination, KindLatest, KindProjection}},
		{Ref: DraftsRef, Policy: gitstore.PolicyLocal, Layout: []string{"draftobs", "drafts", "workspaces"},
			Kinds: []gitstore.Kind{KindDraft, KindObservation, KindWorkspace}},
		{Ref: ReplayDrafts, Policy: gitstore.PolicyLocal, Layout: []string{"draftobs", "drafts"}, Kinds: []gitstore.Kind{KindDraft, KindObservation}},
		{Ref: GateRef, Policy: gitstore.PolicyMerge, Layout: []string{"evidence", "latest", "verify"}, Immutable: []string{"evidence", "verify"},
			Kinds: []gitstore.Kind{KindEvidence, KindGateLatest, KindVerifyResult}},
		{Ref: gitstore.NotesRef, Policy: gitstore.PolicyMerge, CheckNote: func(s *gitstore.Store) func(oid.ID, []byte) error { return CheckNote(s) }},
	}
	for _, spec := range refs {
		if err := r.DeclareRef(spec); err != nil {
			return err
		}
	}
	return nil
}

// resolveLatest is the feature index's merge rule when two clones changed
// it: the later examination wins, by closed_at then record path; a tie or
// an unreadable side falls to gitstore.DefaultResolve.
func resolveLatest(ref gitstore.RefName, path string, ours, theirs *gitstore.Record) (gitstore.Side, error) {
	var a, b latestBody
	if ours.Decode(&a) == nil && theirs.Decode(&b) == nil {
		ka, kb := a.ClosedAt+"\x00"+a.Path, b.ClosedAt+"\x00"+b.Path
		if ka != kb {
			if ka > kb {
				return gitstore.Ours, nil
			}
			return gitstore.Theirs, nil
		}
	}
	return gitstore.DefaultResolve(ref, path, ours, theirs)
}

// resolveDraft keeps the draft that issued more observation IDs; the other
// stays in the merge commit's second parent.
func resolveDraft(ref gitstore.RefName, path string, ours, theirs *gitstore.Record) (gitstore.Side, error) {
	a, errA := draftFrom(path, ours, nil)
	b, errB := draftFrom(path, theirs, nil)
	if errA == nil && errB == nil && a.NextID != b.NextID {
		if a.NextID > b.NextID {
			return gitstore.Ours, nil
		}
		return gitstore.Theirs, nil
	}
	return gitstore.DefaultResolve(ref, path, ours, theirs)
}
