// Package layering holds no code: its test states the module's import
// arrows (which package may import which) and holds every package of the
// module to them, so that the layers of docs/architecture.md stay true.
//
// Layering: imports nothing.
package layering
