package examine

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/refusal"
)

// KindProjection is a candidate's public projection as an examiner was
// shown it (examine.projection v1): the candidate, the blobs of the
// committed declarations that decided it, and the projection itself, a
// tree of the candidate's own blobs the record carries, so that it lives
// in the repository, travels with the examinations, and the brief can
// name it.
const KindProjection gitstore.Kind = "examine.projection"

// Declarations that decide what an examiner sees and may run, read from
// the candidate's committed tree only.
const (
	CommandsPath  = ".nwave/examine.json"
	PyprojectPath = "pyproject.toml"
)

// Projection is the public projection of one candidate.
type Projection struct {
	Candidate oid.ID
	// Config, Commands and Pyproject are the blobs of the committed
	// .nwave/config.json, .nwave/examine.json and pyproject.toml, zero
	// when not committed as regular files.
	Config, Commands, Pyproject oid.ID
	// Tree is the id of the tree of Files: what the workspace shows under
	// public/.
	Tree  oid.ID
	Files []PublicFile
}

type projectionBody struct {
	Candidate string `json:"candidate"`
	Config    string `json:"config,omitempty"`
	Commands  string `json:"commands,omitempty"`
	Pyproject string `json:"pyproject,omitempty"`
	Tree      string `json:"tree"`
	Files     int    `json:"files"`
}

// projectionPath names a projection record by its candidate, its tree and
// the digest of its body: a record pushed under the name ours would take,
// saying something else, cannot squat on it (its name would not match its
// body, which readers check).
func projectionPath(candidate, tree oid.ID, body []byte) string {
	return "projections/" + fanout(candidate.String()) + "/" + tree.String() + "-" + contentID(body)
}

func (p *Projection) record() (*gitstore.Record, error) {
	return gitstore.NewRecord(KindProjection, 1, projectionBody{
		Candidate: p.Candidate.String(), Config: idOrEmpty(p.Config), Commands: idOrEmpty(p.Commands),
		Pyproject: idOrEmpty(p.Pyproject), Tree: p.Tree.String(), Files: len(p.Files),
	})
}

// ProjectionOf computes commit's public projection from its committed
// blobs; nothing is written.
func ProjectionOf(st Store, commit oid.ID) (*Projection, error) {
	files, err := PublicProjection(st, commit)
	if err != nil {
		return nil, err
	}
	p := &Projection{Candidate: commit, Files: files}
	for path, id := range map[string]*oid.ID{ConfigPath: &p.Config, CommandsPath: &p.Commands, PyprojectPath: &p.Pyproject} {
		f, err := st.ReadFile(commit, path)
		switch {
		case errors.Is(err, gitstore.ErrNotFound):
		case err != nil:
			return nil, err
		case f.Mode == gitstore.ModeFile || f.Mode == gitstore.ModeExec:
			*id = f.Blob
		}
	}
	tf := make([]gitstore.TreeFile, len(files))
	for i, f := range files {
		tf[i] = gitstore.TreeFile{Path: f.Path, Mode: f.Mode, Blob: f.Blob}
	}
	if p.Tree, err = gitstore.TreeOf(tf); err != nil {
		return nil, err
	}
	return p, nil
}

// RecordProjection computes commit's projection and records it in Ref
// (once: the same projection recorded again changes nothing).
func RecordProjection(ctx context.Context, st Store, commit oid.ID) (*Projection, error) {
	p, err := ProjectionOf(st, commit)
	if err != nil {
		return nil, err
	}
	rec, err := p.record()
	if err != nil {
		return nil, err
	}
	path := projectionPath(commit, p.Tree, rec.Body)
	_, err = st.Change(ctx, Ref, "projection "+commit.Short(), func(tx gitstore.Edit) error {
		if old, err := tx.Get(path); err == nil {
			// Already recorded; a record there that is not ours (its body
			// would not match its name) is refused, never built upon.
			_, err := projectionFrom(path, old)
			return err
		} else if !errors.Is(err, gitstore.ErrNotFound) {
			return err
		}
		if len(p.Files) > 0 {
			rec.Tree = make([]gitstore.TreeFile, len(p.Files))
			for i, f := range p.Files {
				rec.Tree[i] = gitstore.TreeFile{Path: f.Path, Mode: f.Mode, Blob: f.Blob}
			}
		}
		return tx.Put(path, rec)
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// RecordedProjection reads the projection recorded for commit with the
// given tree and checks it against the candidate: the record must exist
// (MissingFact), be well formed, and name exactly the projection the
// candidate's committed blobs make now (RecordMalformed otherwise: a
// record anyone could have pushed is never trusted over the commit).
func RecordedProjection(st Store, commit, tree oid.ID) (*Projection, error) {
	p, err := ProjectionOf(st, commit)
	if err != nil {
		return nil, err
	}
	if p.Tree != tree {
		return nil, refusal.New(refusal.MissingFact, "make a new workspace with git nwdes examine prompt",
			"candidate %s makes projection %s now, not %s", commit.Short(), p.Tree.Short(), tree.Short())
	}
	want, err := p.record()
	if err != nil {
		return nil, err
	}
	tx, err := st.Records(Ref)
	if err != nil {
		return nil, err
	}
	path := projectionPath(commit, tree, want.Body)
	rec, err := tx.Get(path)
	if errors.Is(err, gitstore.ErrNotFound) {
		return nil, refusal.New(refusal.MissingFact, "make a new workspace with git nwdes examine prompt",
			"no projection %s of %s is recorded", tree.Short(), commit.Short())
	}
	if err != nil {
		return nil, err
	}
	if _, err := projectionFrom(path, rec); err != nil {
		return nil, err
	}
	if !bytes.Equal(rec.Body, want.Body) {
		return nil, malformed(path, "it does not name the projection candidate %s makes (tree %s)", commit.Short(), p.Tree.Short())
	}
	return p, nil
}

// projectionFrom decodes and validates a projection record read at path.
func projectionFrom(path string, rec *gitstore.Record) (*projectionBody, error) {
	if rec.Kind != KindProjection || rec.V != 1 {
		return nil, malformed(path, "a %s v%d record, not a projection", rec.Kind, rec.V)
	}
	var b projectionBody
	if err := rec.Decode(&b); err != nil {
		return nil, err
	}
	if len(rec.Payloads) != 0 {
		return nil, malformed(path, "a projection holds no payloads")
	}
	cand, err := oid.Parse(b.Candidate)
	if err != nil {
		return nil, malformed(path, "candidate %q is not an object id", b.Candidate)
	}
	tree, err := oid.Parse(b.Tree)
	if err != nil {
		return nil, malformed(path, "tree %q is not an object id", b.Tree)
	}
	for _, s := range []string{b.Config, b.Commands, b.Pyproject} {
		if _, err := oid.Parse(s); s != "" && err != nil {
			return nil, malformed(path, "declaration blob %q is not an object id", s)
		}
	}
	if path != projectionPath(cand, tree, rec.Body) {
		return nil, malformed(path, "it is stored under another name than its candidate and tree")
	}
	switch {
	case b.Files < 0:
		return nil, malformed(path, "a negative file count")
	case b.Files == 0 && !rec.TreeID.IsZero(), b.Files > 0 && rec.TreeID != tree:
		return nil, malformed(path, "it carries tree %s, but names %s", rec.TreeID.Short(), tree.Short())
	}
	return &b, nil
}

func idOrEmpty(id oid.ID) string {
	if id.IsZero() {
		return ""
	}
	return id.String()
}

// String names the projection for a person.
func (p *Projection) String() string {
	return fmt.Sprintf("projection %s of %s (%d files)", p.Tree.Short(), p.Candidate.Short(), len(p.Files))
}
