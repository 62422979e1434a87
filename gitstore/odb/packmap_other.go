//go:build !unix

package odb

import (
	"errors"
	"os"
)

// mapFile does not map files here: packs are read with ReadAt.
func mapFile(*os.File, int64) ([]byte, error) { return nil, errors.ErrUnsupported }

func unmapFile([]byte) error { return nil }
