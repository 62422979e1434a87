// Package workspace is the examiner's side of an examination: a directory
// outside every checkout that shows only what the candidate makes public,
// and the two verbs that gather evidence in it.
//
// A workspace W holds exactly two directories: public/, the candidate's
// public projection (examine.ProjectionOf: its committed prose),
// materialised read-only from the projection tree recorded in the store,
// and scratch/, the examiner's own. Prompt makes one and renders the
// examiner's bundle; Read lists or prints what public/ holds; Probe runs a
// command the candidate declares in its committed .nwave/examine.json (or
// the console scripts of its pyproject.toml), inside the wall, with
// scratch/ as its world. Before every read and probe, Check compares the
// workspace with the recorded projection and refuses a contaminated one
// (WorkspaceContaminated). After a close, Sweep removes the feature's
// workspaces this checkout made.
//
// It takes examine's roles (examine.Store; Store adds the repository's
// location, whose work tree is the checkout) and a Wall (sandbox.Runner
// and its search path) for probes.
//
// docs/workspace.md states the rules, each refusal and its remedy, and the
// accepted limits.
package workspace
