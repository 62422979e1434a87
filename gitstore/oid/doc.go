// Package oid is nwdes's own object id: a git object name with its format
// (SHA-1, 20 bytes, or SHA-256, 32 bytes), so that the packages above the
// store (examine, report, hooks) never carry a dependency's hash type, and a
// repository's object format is chosen at run time, by its
// extensions.objectFormat, rather than when the binary is built (go-git
// v5's plumbing.Hash fixes it per binary). ParseOf and FromBytesOf read an
// id of one format and refuse the other's length: never cut, never padded.
//
// The zero ID names nothing (an absent ref, "must not exist" in a
// compare-and-swap). IDs compare with ==, sort with Compare, and print as
// lowercase hex.
//
// Layering: imports the standard library only.
package oid
