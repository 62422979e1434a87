//go:build !unix

package stage

import (
	"os"

	"github.com/go-git/go-git/v5/plumbing/format/index"
)

func fillStat(e *index.Entry, fi os.FileInfo) {}
