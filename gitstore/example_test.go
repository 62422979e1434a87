package gitstore_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
)

// A record is defined as a Go struct, stored under a ref by a
// compare-and-swap update, updated, and read back.
func Example() {
	dir, _ := os.MkdirTemp("", "nwdes-example")
	defer os.RemoveAll(dir)
	exec.Command("git", "init", "-q", filepath.Join(dir, "repo")).Run()

	type lease struct {
		Holder string `json:"holder"`
		Term   int    `json:"term"`
	}
	loc, _ := gitrepo.Discover(filepath.Join(dir, "repo"), nil)
	st, _ := gitstore.Open(loc, gitstore.Options{Registry: gitstore.MustRegistry(gitstore.OpenRegistry(gitstore.KindSpec{Kind: "example.lease", Version: 1}))})
	ctx := context.Background()
	const ref = gitstore.RefName("refs/nwdes/example")

	put := func(l lease) error {
		_, err := st.Change(ctx, ref, "lease", func(tx gitstore.Edit) error {
			rec, err := gitstore.NewRecord("example.lease", 1, l)
			if err != nil {
				return err
			}
			return tx.Put("leases/job-1", rec)
		})
		return err
	}
	if err := put(lease{Holder: "worker-a", Term: 1}); err != nil {
		fmt.Println(err)
	}
	if err := put(lease{Holder: "worker-b", Term: 2}); err != nil {
		fmt.Println(err)
	}

	tx, _ := st.Records(ref)
	rec, _ := tx.Get("leases/job-1")
	var got lease
	rec.Decode(&got)
	fmt.Println(got.Holder, got.Term, string(rec.Body))

	n := 0
	st.Log(ref, func(gitstore.Entry) bool { n++; return true })
	fmt.Println(n, "commits")
	// Output:
	// worker-b 2 {"holder":"worker-b","term":2}
	// 2 commits
}
