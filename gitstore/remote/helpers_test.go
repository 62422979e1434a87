package remote_test

import (
	"testing"
	"time"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/gitstore/remote"
)

var fixedClock = func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }

// openStore opens the store at dir with its replicator, closed when the
// test ends.
func openStore(t *testing.T, dir string, opts gitstore.Options) *remote.Replicator {
	t.Helper()
	loc, err := gitrepo.Discover(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if opts.Now == nil {
		opts.Now = fixedClock
	}
	if opts.Registry == nil {
		opts.Registry = gitstore.MustRegistry(gitstore.OpenRegistry(gitstore.KindSpec{Kind: "test.note", Version: 1}))
	}
	s, err := gitstore.Open(loc, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return remote.New(s)
}

type noteBody struct {
	Title string   `json:"title"`
	Tags  []string `json:"tags"`
	N     int      `json:"n"`
}

const testRef = gitstore.RefName("refs/nwdes/test")
