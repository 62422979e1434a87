// Package remote moves a store's refs and notes between clones: it is the
// git store's gitstore.Replicator. Transport goes through the git binary
// (git.Repo.Run), so that users' SSH configuration, credential helpers,
// proxies and URL rewrites apply: git fetch into a tracking namespace
// (refs/nwdes-remotes/<remote>/), then each ref is brought in by its
// declared policy: merged (the three-way tree merge of gitstore/treemerge,
// records decided whole by their kinds' rules), fast-forwarded, mirrored
// (swap refs), or left alone. Push runs fetch-merge-push rounds with
// --force-with-lease, and SwapRemote is the swap policy's compare-and-swap
// on the remote itself. A ref moves locally only through the store
// (gitstore.Store.Integrate, which checks an append-only ref's history) or
// the git layer's compare-and-swap (mirrors): nothing here trusts git with
// a local ref.
//
// Layering: imports gitstore, gitstore/git, gitstore/oid,
// gitstore/treemerge, nwdes/refusal and nwdes/internal/text; gitstore and
// the git layer do not import it.
package remote
