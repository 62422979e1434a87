package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/git"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/gitstore/treemerge"
	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/refusal"
)

// This file moves a product branch, not records: what swarm land needs to
// put an accepted commit on a remote's branch. The branch is pushed by a
// plain git push, with the user's hooks (nwdes's pre-push hook sends the
// records the branch depends on and judges it; the server's pre-receive
// judges it again): nothing here skips a hook or forces a ref.

// BranchTip reads where remote's branch (refs/heads/…) stands now, by git
// ls-remote, and brings that commit into this clone when it lacks it
// (git fetch into refs/remotes/<remote>/<branch>, as git fetch REMOTE
// BRANCH would): the zero id when the remote has no such branch.
func (s *Replicator) BranchTip(ctx context.Context, remote string, branch gitstore.RefName, o gitstore.SyncOptions) (oid.ID, error) {
	o.Fill()
	if err := s.checkRemote(ctx, remote, o); err != nil {
		return oid.Zero, err
	}
	if err := checkBranch(branch); err != nil {
		return oid.Zero, err
	}
	out, err := s.run(ctx, o, "ls-remote", "--refs", remote, string(branch))
	if err != nil {
		return oid.Zero, git.TransportRefusal("ls-remote", remote, err)
	}
	tip := oid.Zero
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		id, name, ok := strings.Cut(line, "\t")
		if !ok || name != string(branch) {
			continue
		}
		if tip, err = oid.Parse(id); err != nil {
			return oid.Zero, refusal.NewUnreadable(refusal.InputUnreadable, "check the remote with git ls-remote "+remote,
				"git ls-remote %s named %s by %q, which is no object id", remote, branch, text.Truncate(id, 80))
		}
	}
	if tip.IsZero() {
		return tip, nil
	}
	if _, err := s.Git().ReadCommit(tip); err == nil {
		return tip, nil
	}
	short := strings.TrimPrefix(string(branch), "refs/heads/")
	if _, err := s.fetchGit(ctx, remote, o, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules",
		remote, "+"+string(branch)+":refs/remotes/"+remote+"/"+short); err != nil {
		return oid.Zero, err
	}
	if _, err := s.Git().ReadCommit(tip); err != nil {
		// The branch moved between ls-remote and fetch: the caller reads
		// it again rather than judge against a tip it does not hold.
		return oid.Zero, refusal.New(refusal.Conflict, "run the command again",
			"%s's %s moved while it was fetched (it named %s): %v", remote, branch, tip.Short(), err)
	}
	return tip, nil
}

// PushOutcome is what a branch push did.
type PushOutcome string

const (
	// PushMoved: the remote's branch now names the commit.
	PushMoved PushOutcome = "moved"
	// PushUpToDate: it already did.
	PushUpToDate PushOutcome = "up-to-date"
)

// PushBranch runs git push REMOTE <commit>:<branch>: never --force, never
// --no-verify, so git refuses anything but a fast-forward and every hook
// runs (nwdes's pre-push sends the records first; the server's pre-receive
// judges). What git and its hooks write on stderr also goes to stderr when
// it is set. A push the remote refused because its branch moved is
// Conflict; one a hook refused is PolicyRefused naming what the hook said;
// any other failure is the transport's (RemoteFailed).
func (s *Replicator) PushBranch(ctx context.Context, remote string, commit oid.ID, branch gitstore.RefName, stderr io.Writer, o gitstore.SyncOptions) (PushOutcome, error) {
	o.Fill()
	if err := s.checkRemote(ctx, remote, o); err != nil {
		return "", err
	}
	if err := checkBranch(branch); err != nil {
		return "", err
	}
	run := o.Run()
	run.Stderr = stderr
	out, err := s.Git().Run(ctx, run, "push", "--porcelain", "--no-recurse-submodules", remote, commit.String()+":"+string(branch))
	status := pushStatus(out, branch)
	if err == nil {
		if status == "=" {
			return PushUpToDate, nil
		}
		return PushMoved, nil
	}
	var ge *git.GitError
	said := ""
	if errors.As(err, &ge) {
		said = hookLines(ge.Stderr)
	}
	switch {
	case pushRaced(out):
		return "", refusal.New(refusal.Conflict, "run the command again: it reads where the branch stands now",
			"%s's %s moved since it was read: git refused a push that is not a fast-forward", remote, branch).Wrap(err)
	case said != "" || strings.Contains(string(out), "hook declined"):
		// nwdes's pre-push hook (which declines with no porcelain line)
		// or the server's (which git reports "pre-receive hook
		// declined") said why.
		return "", refusal.New(refusal.PolicyRefused, "read what the hook said (git nwdes status --commit "+commit.Short()+" shows where the commit stands), do what it names, then run the command again",
			"a hook refused the push of %s to %s's %s: %s", commit.Short(), remote, branch, orSaid(said)).Wrap(err)
	}
	return "", git.TransportRefusal("push", remote, err)
}

// pushStatus is the flag git's porcelain output gives branch ("" when
// it names none).
func pushStatus(porcelain []byte, branch gitstore.RefName) string {
	for _, line := range strings.Split(string(porcelain), "\n") {
		f := strings.SplitN(line, "\t", 3)
		if len(f) >= 2 && strings.HasSuffix(f[1], ":"+string(branch)) {
			return f[0]
		}
	}
	return ""
}

// hookLines keeps what a hook said of its refusal: the lines from the
// first that says "refused" (nwdes's hooks begin so, on the client and
// through the server's "remote:"), on one line, bounded; "" when no hook
// refused.
func hookLines(stderr string) string {
	var keep []string
	for _, line := range strings.Split(stderr, "\n") {
		l := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "remote:"))
		if len(keep) == 0 && !strings.Contains(l, "refused") || strings.HasPrefix(l, "error:") || l == "" {
			continue
		}
		keep = append(keep, l)
	}
	return text.Truncate(text.OneLine(strings.Join(keep, " ")), 600)
}

func orSaid(s string) string {
	if s == "" {
		return "it gave no reason nwdes could read"
	}
	return s
}

func checkBranch(branch gitstore.RefName) error {
	if !strings.HasPrefix(string(branch), "refs/heads/") || branch.Validate() != nil {
		return refusal.New(refusal.RefNameInvalid, "name a branch (refs/heads/…)", "%q is not a branch", string(branch))
	}
	return nil
}

// ThreeWay is the tree of a commit that makes, on top of onto, the change
// from base to head: per path, the side that changed it (git's trivial
// merge, treemerge's policy). It merges no text: a path both sides changed
// differently is a conflict, listed (sorted), and then no tree is made.
// Conflicts past limit paths changed on a side are refused as a whole
// (one list would not say what a person must look at).
func (s *Replicator) ThreeWay(base, onto, head oid.ID, limit int) (oid.ID, []string, error) {
	ours, nOurs, err := s.ChangedPaths(base, onto, limit)
	if err != nil {
		return oid.Zero, nil, err
	}
	theirs, nTheirs, err := s.ChangedPaths(base, head, limit)
	if err != nil {
		return oid.Zero, nil, err
	}
	if nOurs > len(ours) || nTheirs > len(theirs) {
		return oid.Zero, nil, refusal.New(refusal.WalkLimit, "rebase it by hand, or land it in smaller changes",
			"more than %d paths changed on a side (%d and %d): too many to merge in-product", limit, nOurs, nTheirs)
	}
	ot, err := s.Files(onto)
	if err != nil {
		return oid.Zero, nil, err
	}
	ht, err := s.Files(head)
	if err != nil {
		return oid.Zero, nil, err
	}
	changed := map[string]bool{}
	for _, p := range ours {
		changed[p] = true
	}
	var conflicts []string
	for _, p := range theirs {
		if !changed[p] {
			continue
		}
		oe, of, err := ot.Lookup(p)
		if err != nil {
			return oid.Zero, nil, err
		}
		he, hf, err := ht.Lookup(p)
		if err != nil {
			return oid.Zero, nil, err
		}
		if of != hf || oe.Mode != he.Mode || oe.Hash != he.Hash {
			conflicts = append(conflicts, p)
		}
	}
	if len(conflicts) > 0 {
		return oid.Zero, conflicts, nil
	}
	trees := make([]oid.ID, 3)
	for i, c := range []oid.ID{base, onto, head} {
		cm, err := s.Git().ReadCommit(c)
		if err != nil {
			return oid.Zero, nil, err
		}
		trees[i] = cm.Tree
	}
	tree, resolved, err := treemergeProduct(s.Store, trees[0], trees[1], trees[2])
	if err != nil {
		return oid.Zero, nil, err
	}
	if len(resolved) > 0 {
		// A file against a directory, say: a rule chose, and a person
		// must.
		return oid.Zero, resolved, nil
	}
	if tree.IsZero() {
		if tree, err = s.Git().Write(git.TreeObject, nil); err != nil {
			return oid.Zero, nil, err
		}
	}
	return tree, nil, nil
}

// WriteCommit writes a commit of tree on parents, by nwdes's identity
// (gitstore.Identity) at the store's clock, and returns its id.
func (s *Replicator) WriteCommit(tree oid.ID, parents []oid.ID, message string) (oid.ID, error) {
	c, err := git.EncodeCommit(tree, parents, gitstore.Identity, s.Options().Now(), message)
	if err != nil {
		return oid.Zero, err
	}
	id, err := s.Git().Write(git.CommitObject, c)
	if err != nil {
		return oid.Zero, fmt.Errorf("write commit: %w", err)
	}
	return id, nil
}

// treemergeProduct merges three product trees by treemerge's policy, with
// no record rule: every mode git stores is kept as it is (an executable,
// a link, a submodule), which the records' reader would refuse.
func treemergeProduct(st *gitstore.Store, base, ours, theirs oid.ID) (oid.ID, []string, error) {
	return treemerge.Merge(mergeObjects{s: st, product: true}, base, ours, theirs, treemerge.Rules{})
}
