package gitstore

import "errors"

// ErrNothingStaged: SwapRemote's function staged no change, so nothing was
// pushed and the remote was not asked. (The errors of refs and objects,
// ErrConflict, ErrLocked, ErrNotFound and ErrObjectMissing, are the git
// layer's: git.go.)
var ErrNothingStaged = errors.New("nothing staged")
