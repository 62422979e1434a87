package examine

import (
	"strings"

	"github.com/nwdes/nwdes/gitstore"
)

// Resolve is the merge rule for examine's records when two clones changed
// the same one (gitstore.Resolver). Published examinations never meet here:
// their paths are new per close. The feature index (features/<f>) keeps the
// later examination, by closed_at then record path; a draft keeps the one
// that issued more observation IDs. Anything else, or a tie, falls to
// gitstore.DefaultResolve. The draft not kept stays in the merge commit's
// other parent.
func Resolve(ref gitstore.RefName, path string, ours, theirs *gitstore.Record) (gitstore.Side, error) {
	if ref == Ref {
		switch {
		case strings.HasPrefix(path, "features/") && ours.Kind == KindLatest && theirs.Kind == KindLatest:
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
		case strings.HasPrefix(path, "drafts/") && ours.Kind == KindDraft && theirs.Kind == KindDraft:
			var a, b Draft
			if ours.Decode(&a) == nil && theirs.Decode(&b) == nil && a.NextID != b.NextID {
				if a.NextID > b.NextID {
					return gitstore.Ours, nil
				}
				return gitstore.Theirs, nil
			}
		}
	}
	return gitstore.DefaultResolve(ref, path, ours, theirs)
}
