package gitstore_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/internal/gittest"
)

const headsRef = gitstore.RefName("refs/nwdes/heads/")

var roomy = gitstore.AdoptLimits{Objects: 1000, Bytes: 1 << 20, Object: 1 << 20}

// adoptFixture is a repository and a job's clone of it that borrows its
// objects (as a staged job's does) and commits on top.
func adoptFixture(t *testing.T) (store *gitstore.Store, dir, job string, base oid.ID) {
	t.Helper()
	dir = gittest.Init(t, false)
	reg := gitstore.MustRegistry(gitstore.OpenRegistry(gitstore.KindSpec{Kind: "test.note", Version: 1}), func(r *gitstore.Registry) error {
		return r.DeclareRef(gitstore.RefSpec{Ref: headsRef, Policy: gitstore.PolicyFastForward, Commit: true})
	})
	store = openStore(t, dir, gitstore.Options{Registry: reg})
	t.Cleanup(func() { store.Close() })
	job = filepath.Join(t.TempDir(), "job")
	gittest.Git(t, dir, "clone", "-q", "--shared", dir, job)
	return store, dir, job, oid.MustParse(gittest.Git(t, dir, "rev-parse", "HEAD"))
}

func commitIn(t *testing.T, repo, name, content string) oid.ID {
	t.Helper()
	gittest.WriteFile(t, repo, name, content)
	gittest.Git(t, repo, "add", name)
	gittest.Git(t, repo, "commit", "-q", "-m", "change "+name)
	return oid.MustParse(gittest.Git(t, repo, "rev-parse", "HEAD"))
}

func TestAdoptCopiesTheCommitsAnotherRepositoryMadeLooseAndPacked(t *testing.T) {
	t.Parallel()
	st, dir, job, base := adoptFixture(t)
	commitIn(t, job, "a/one.txt", "one\n")
	gittest.Git(t, job, "repack", "-q", "-d", "-l")
	commitIn(t, job, "two.txt", "two\n")
	head := commitIn(t, job, "a/one.txt", "one again\n")
	ref := headsRef + "job/1"
	got, err := st.Adopt(context.Background(), ref, filepath.Join(job, ".git", "objects"), head, roomy)
	if err != nil {
		t.Fatal(err)
	}
	if got.Commits != 3 || got.Objects < 3*3 {
		t.Fatalf("adopted %+v, want 3 commits and their trees and blobs", got)
	}
	if v := gittest.Git(t, dir, "rev-parse", string(ref)); v != head.String() {
		t.Fatalf("%s = %s, want %s", ref, v, head)
	}
	gittest.Git(t, dir, "fsck", "--strict", "--no-dangling")
	if rep, err := st.Fsck(); err != nil || !rep.OK() {
		t.Fatalf("fsck: %v %+v", err, rep)
	}
	paths, n, err := st.ChangedPaths(base, head, 10)
	want := strings.Fields(gittest.Git(t, dir, "diff", "--name-only", base.String(), head.String()))
	if err != nil || n != len(want) || !slices.Equal(paths, want) {
		t.Fatalf("ChangedPaths = %q, %d, %v; git diff --name-only says %q", paths, n, err, want)
	}
	if again, err := st.Adopt(context.Background(), ref, filepath.Join(job, ".git", "objects"), head, roomy); err != nil || again.Objects != 0 {
		t.Fatalf("adopting the same head again = %+v, %v; want nothing done", again, err)
	}
	other := commitIn(t, job, "three.txt", "3\n")
	if _, err := st.Adopt(context.Background(), ref, filepath.Join(job, ".git", "objects"), other, roomy); !errors.Is(err, gitstore.ErrConflict) {
		t.Fatalf("moving an adopted head = %v, want ErrConflict", err)
	}
}

func TestAdoptFollowsNoAlternateTheOtherRepositoryNames(t *testing.T) {
	t.Parallel()
	st, dir, job, _ := adoptFixture(t)
	host := gittest.Init(t, false)
	secret := commitIn(t, host, "secret.txt", "the host's\n")
	alt := filepath.Join(job, ".git", "objects", "info", "alternates")
	b, err := os.ReadFile(alt)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(alt, append(b, filepath.Join(host, ".git", "objects")+"\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	tree := gittest.Git(t, job, "rev-parse", "HEAD^{tree}")
	head := oid.MustParse(gittest.Git(t, job, "commit-tree", tree, "-p", "HEAD", "-p", secret.String(), "-m", "merge a host secret"))
	_, err = st.Adopt(context.Background(), headsRef+"job/1", filepath.Join(job, ".git", "objects"), head, roomy)
	var ae *gitstore.AdoptError
	if !errors.As(err, &ae) || ae.Object != secret || !strings.Contains(ae.Why, "neither in") {
		t.Fatalf("Adopt = %v, want the host's commit %s refused as missing", err, secret)
	}
	if _, err := gittest.Run(dir, "cat-file", "-e", secret.String()); err == nil {
		t.Fatal("the host's commit was copied")
	}
	if out := gittest.Git(t, dir, "for-each-ref", string(headsRef)); out != "" {
		t.Fatalf("a refused adoption wrote %s", out)
	}
}

func TestAdoptRefusesWhatPassesItsLimits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		packed bool
		lim    gitstore.AdoptLimits
		want   string
	}{
		{"too many objects", false, gitstore.AdoptLimits{Objects: 2, Bytes: 1 << 20, Object: 1 << 20}, "more than 2 objects"},
		{"too many bytes", false, gitstore.AdoptLimits{Objects: 100, Bytes: 4000, Object: 1 << 20}, "pass 4000 bytes"},
		{"a loose object too large", false, gitstore.AdoptLimits{Objects: 100, Bytes: 1 << 20, Object: 4000}, "larger than 4000 bytes"},
		{"a packed object too large", true, gitstore.AdoptLimits{Objects: 100, Bytes: 1 << 20, Object: 4000}, "larger than 4000 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st, dir, job, _ := adoptFixture(t)
			head := commitIn(t, job, "big.txt", strings.Repeat("0", 5000))
			if tc.packed {
				gittest.Git(t, job, "repack", "-q", "-a", "-d", "-l")
			}
			_, err := st.Adopt(context.Background(), headsRef+"job/1", filepath.Join(job, ".git", "objects"), head, tc.lim)
			var ae *gitstore.AdoptError
			if !errors.As(err, &ae) || !strings.Contains(ae.Why, tc.want) {
				t.Fatalf("Adopt = %v, want a refusal saying %q", err, tc.want)
			}
			if out := gittest.Git(t, dir, "for-each-ref", string(headsRef)); out != "" {
				t.Fatalf("a refused adoption wrote %s", out)
			}
		})
	}
}

func TestAdoptWritesOnlyARefDeclaredToNameACommit(t *testing.T) {
	t.Parallel()
	st, _, job, _ := adoptFixture(t)
	head := commitIn(t, job, "x", "x\n")
	if _, err := st.Adopt(context.Background(), "refs/nwdes/records", filepath.Join(job, ".git", "objects"), head, roomy); err == nil ||
		!strings.Contains(err.Error(), "not declared to name a commit") {
		t.Fatalf("Adopt into a records ref = %v", err)
	}
}

func TestACommitRefIsFastForwardOrLocalAndHoldsNoRecords(t *testing.T) {
	t.Parallel()
	for _, spec := range []gitstore.RefSpec{
		{Ref: "refs/nwdes/h/", Policy: gitstore.PolicyMerge, Commit: true},
		{Ref: "refs/nwdes/h/", Policy: gitstore.PolicyFastForward, Commit: true, Layout: []string{"x"}},
		{Ref: "refs/nwdes/h/", Policy: gitstore.PolicyFastForward, Commit: true, Kinds: []gitstore.Kind{"k"}},
	} {
		if _, err := gitstore.NewRegistry(func(r *gitstore.Registry) error { return r.DeclareRef(spec) }); err == nil {
			t.Errorf("declared %+v", spec)
		}
	}
}
