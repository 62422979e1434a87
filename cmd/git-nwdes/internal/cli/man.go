package cli

import _ "embed"

// manPage is the man page `git nwdes man` prints (make install writes it,
// and git opens it for `git nwdes --help`): urfave/cli's rendering of the
// app, kept as a file rather than rendered at run time. Rendering needs
// urfave/cli's docs, whose markdown library (blackfriday) initialises its
// tables in every process that links it, about half a millisecond of every
// start; the Makefile builds with the tag urfave_cli_no_docs, which leaves
// them out. TestManPageIsCurrent renders the page again and fails when this
// file differs; `go test ./internal/cli -run TestManPageIsCurrent -man.update`
// rewrites it.
//
//go:embed git-nwdes.1
var manPage string

// manTitle is what the page's title line says: man looks pages up by file
// name, and urfave/cli would title it with the app's name ("git nwdes").
const manTitle = ".TH GIT-NWDES 1"
