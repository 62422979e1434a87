package examine

import (
	"context"
	"errors"
	"path/filepath"
	"regexp"
	"sort"
	"time"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/refusal"
)

// KindWorkspace is one examination workspace a prompt made in this clone
// (examine.workspace v1): where it is, for which feature and candidate,
// the projection it shows, and the checkout the prompt ran in. It is kept
// in DraftsRef: a workspace is a directory on this machine, never shared.
const KindWorkspace gitstore.Kind = "examine.workspace"

// Workspace is a recorded examination workspace.
type Workspace struct {
	// Path is the workspace's absolute path, symbolic links resolved.
	Path       string `json:"path"`
	Feature    string `json:"feature"`
	Candidate  string `json:"candidate"`
	Projection string `json:"projection"`
	// Checkout is the top level of the work tree the prompt ran in: only
	// a close from that checkout removes the workspace.
	Checkout string `json:"checkout"`
	Created  string `json:"created"`
	// Removed is when a close removed the workspace ("" while it is in
	// use): the record stays, so that every later close of the feature at
	// the candidate still names the projection its examiner saw.
	Removed string `json:"removed,omitempty"`
}

// workspaceName is the last element of a workspace's path, which names its
// record.
var workspaceName = regexp.MustCompile(`^nwdes-examine-[A-Za-z0-9._-]{1,160}$`)

func workspacePath(dir string) string { return "workspaces/" + filepath.Base(dir) }

// RecordWorkspace records w in this clone.
func RecordWorkspace(ctx context.Context, st gitstore.RecordWriter, w Workspace) error {
	if err := w.validate(workspacePath(w.Path)); err != nil {
		return err
	}
	_, err := st.Change(ctx, DraftsRef, "workspace "+w.Feature, func(tx gitstore.Edit) error {
		rec, err := gitstore.NewRecord(KindWorkspace, 1, w)
		if err != nil {
			return err
		}
		return tx.Put(workspacePath(w.Path), rec)
	})
	return err
}

// Workspaces lists the workspaces recorded in this clone, by path.
func Workspaces(st gitstore.RecordReader) ([]Workspace, error) {
	tx, err := st.Records(DraftsRef)
	if err != nil {
		return nil, err
	}
	names, err := tx.List("workspaces")
	if err != nil {
		return nil, err
	}
	var out []Workspace
	for _, n := range names {
		path := "workspaces/" + n
		rec, err := tx.Get(path)
		if err != nil {
			return nil, err
		}
		w, err := workspaceFrom(path, rec)
		if err != nil {
			return nil, err
		}
		out = append(out, *w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// FindWorkspace returns the workspace recorded at dir (an absolute,
// resolved path), or a MissingFact refusal.
func FindWorkspace(st gitstore.RecordReader, dir string) (*Workspace, error) {
	ws, err := Workspaces(st)
	if err != nil {
		return nil, err
	}
	for _, w := range ws {
		if w.Path == dir && w.Removed == "" {
			return &w, nil
		}
	}
	return nil, refusal.New(refusal.MissingFact, "use the workspace a prompt of this clone printed (WORKSPACE: line), or make one with git nwdes examine prompt",
		"%s is not an examination workspace recorded in this clone", dir)
}

// MarkRemoved records that the workspaces at dirs were removed at now.
func MarkRemoved(ctx context.Context, st gitstore.RecordWriter, dirs []string, now time.Time) error {
	if len(dirs) == 0 {
		return nil
	}
	_, err := st.Change(ctx, DraftsRef, "workspaces removed", func(tx gitstore.Edit) error {
		for _, d := range dirs {
			path := workspacePath(d)
			rec, err := tx.Get(path)
			if err != nil {
				return err
			}
			w, err := workspaceFrom(path, rec)
			if err != nil {
				return err
			}
			w.Removed = now.UTC().Format(time.RFC3339Nano)
			if rec, err = gitstore.NewRecord(KindWorkspace, 1, w); err != nil {
				return err
			}
			if err := tx.Put(path, rec); err != nil {
				return err
			}
		}
		return nil
	})
	return err
}

func workspaceFrom(path string, rec *gitstore.Record) (*Workspace, error) {
	if rec.Kind != KindWorkspace || rec.V != 1 {
		return nil, malformed(path, "a %s v%d record, not a workspace", rec.Kind, rec.V)
	}
	var w Workspace
	if err := rec.Decode(&w); err != nil {
		return nil, err
	}
	if len(rec.Payloads) != 0 {
		return nil, malformed(path, "a workspace record holds no payloads")
	}
	if err := w.validate(path); err != nil {
		return nil, err
	}
	return &w, nil
}

func (w *Workspace) validate(path string) error {
	switch {
	case !filepath.IsAbs(w.Path) || filepath.Clean(w.Path) != w.Path || !workspaceName.MatchString(filepath.Base(w.Path)):
		return malformed(path, "workspace path %q is not an absolute nwdes-examine-… directory", w.Path)
	case workspacePath(w.Path) != path:
		return malformed(path, "it is stored under another name than its workspace")
	case !filepath.IsAbs(w.Checkout) || filepath.Clean(w.Checkout) != w.Checkout:
		return malformed(path, "checkout %q is not an absolute path", w.Checkout)
	}
	if err := ValidFeature(w.Feature); err != nil {
		return malformed(path, "feature: %v", err)
	}
	for _, s := range []string{w.Candidate, w.Projection} {
		if _, err := oid.Parse(s); err != nil {
			return malformed(path, "%q is not an object id", s)
		}
	}
	if _, err := time.Parse(time.RFC3339Nano, w.Created); err != nil {
		return malformed(path, "created %q is not a time", w.Created)
	}
	if _, err := time.Parse(time.RFC3339Nano, w.Removed); w.Removed != "" && err != nil {
		return malformed(path, "removed %q is not a time", w.Removed)
	}
	return nil
}

// projectionSeen is the projection the workspaces recorded for feature at
// candidate showed, "" when none was made.
func projectionSeen(st gitstore.RecordReader, feature, candidate string) (string, error) {
	ws, err := Workspaces(st)
	if errors.Is(err, gitstore.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	for _, w := range ws {
		if w.Feature == feature && w.Candidate == candidate {
			return w.Projection, nil
		}
	}
	return "", nil
}
