//go:build !unix

package gitstore

import (
	"os"

	"github.com/go-git/go-git/v5/plumbing/format/index"
)

func fillStat(e *index.Entry, fi os.FileInfo) {}
