// Package treemerge is the three-way merge of git trees that two clones of
// a ref changed apart: the policy, with no knowledge of records, refs or
// transport. Per entry: the same on both sides is kept; changed on one side
// only takes that side (a deletion included); changed on both, directories
// merge recursively, except a unit directory (a record: what Rules.Unit
// says) which is decided whole by Rules.Decide; two versions of one file in
// a notes tree are concatenated without loss; anything else keeps the
// larger object id. Every rule is symmetric, so two clones merging the
// same pair build the same tree.
//
// Layering: imports gitstore/oid (object ids) and the standard library
// only; gitstore/remote supplies the objects and the record rules.
package treemerge
