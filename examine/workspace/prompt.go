package workspace

import (
	"context"
	"path/filepath"
	"time"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/refusal"
)

// Prompter makes workspaces and their bundles.
type Prompter struct {
	Store Store
	// TempDir is where workspaces are made (os.TempDir() when empty); it
	// must lie outside every checkout.
	TempDir string
	// Job, when set, is the directory of the swarm job the workspace is
	// made for, walled so that it sees nothing above it: TempDir may then
	// lie inside it though the job directory is in the repository's git
	// directory (workspaceBase says why that keeps the rule's reason).
	Job string
	Now func() time.Time
}

// Checkout is the resolved top level of the store's work tree: the
// candidate checkout the verbs run from, and where declared commands'
// built files are found. A bare repository has none (MissingFact).
func Checkout(st interface{ Location() gitrepo.Location }) (string, error) {
	wt := st.Location().WorkTree
	if wt == "" {
		return "", refusal.New(refusal.MissingFact, "run from the candidate checkout's top level",
			"a bare repository has no checkout to examine")
	}
	if r, err := filepath.EvalSymlinks(wt); err == nil {
		wt = r
	}
	return wt, nil
}

// Prompt loads the target's candidate, decides what it declares public
// (refusing a malformed or conflicting declaration before anything is
// made), records its projection, makes a workspace showing it and returns
// the examiner's bundle.
func (p *Prompter) Prompt(ctx context.Context, t examine.Target) (*Bundle, error) {
	cand, err := examine.Load(p.Store, t)
	if err != nil {
		return nil, err
	}
	checkout, err := Checkout(p.Store)
	if err != nil {
		return nil, err
	}
	// The projection and its declarations are decided first: a refused
	// declaration leaves no workspace and no record behind.
	proj, err := examine.ProjectionOf(p.Store, cand.Commit)
	if err != nil {
		return nil, err
	}
	cmds, err := Commands(p.Store, proj)
	if err != nil {
		return nil, err
	}
	if p.Job != "" {
		if err := inGitDir(p.Job, p.Store.Location().CommonDir); err != nil {
			return nil, err
		}
	}
	if _, err := workspaceBase(p.TempDir, checkout, p.Job); err != nil {
		return nil, err
	}
	if proj, err = examine.RecordProjection(ctx, p.Store, cand.Commit); err != nil {
		return nil, err
	}
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	w, err := makeIn(ctx, p.Store, proj, cand.Feature, checkout, p.TempDir, p.Job, now())
	if err != nil {
		return nil, err
	}
	return NewBundle(cand, w, proj, cmds.Names()), nil
}

// inGitDir refuses a job directory outside the repository's git
// directory: a swarm job's directory lies there, in none of the work
// tree's files, and only there does the exception workspaceBase makes
// for a walled job hold.
func inGitDir(job, gitDir string) error {
	j, err1 := filepath.EvalSymlinks(job)
	g, err2 := filepath.EvalSymlinks(gitDir)
	if err1 != nil || err2 != nil || !within(j, g) || j == g {
		return refusal.New(refusal.TempDirUnusable, "make an examine job's workspace in its job directory, in the repository's git directory",
			"the job directory %s is not inside the git directory %s", job, gitDir)
	}
	return nil
}
