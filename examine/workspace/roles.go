package workspace

import (
	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/sandbox"
)

// Store is what making a workspace from the invoking checkout asks of the
// store: examine's roles, and where the repository's work tree is (the
// checkout whose path the workspace hides). Only the git store has one.
type Store interface {
	examine.Store
	Location() gitrepo.Location
}

// Wall is what a probe asks of the wall: to run one command, and the PATH
// it runs on, where a console script's interpreter is looked up.
type Wall interface {
	sandbox.Runner
	SearchPath() string
}
