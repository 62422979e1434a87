// Package apicheck holds the test that keeps nwdes's library API: every
// exported identifier of the supported packages (docs/architecture.md,
// "The library API"), with its signature, is listed in api.txt, and the
// test fails when one is removed or changed, or when one is added without
// being listed. A change to the API is then a change to api.txt that a
// reviewer sees, never a side effect. Regenerate the list after a
// deliberate change with
//
//	go test ./internal/apicheck -api.update
//
// It reads the packages' source with go/parser (no type checking, no
// build), the files built on linux, tests excluded.
package apicheck
