package swarm

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

var testStaged = stagedGit{
	HEAD:       []byte("ref: refs/heads/worker/x\n"),
	Config:     []byte("[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n"),
	Alternates: []byte("/store/objects\n"),
}

func TestSealingReplacesWhatTheJobPutInPlaceOfTheRepositoryWithoutTouchingWhatItNames(t *testing.T) {
	host := t.TempDir()
	os.WriteFile(filepath.Join(host, "keep"), []byte("host\n"), 0o644)
	for _, c := range []struct {
		name  string
		setup func(job string)
		want  string
	}{
		{"repo is a link to a host directory", func(job string) { os.Symlink(host, filepath.Join(job, "repo")) }, "repo (a symbolic link)"},
		{".git is a gitfile naming another repository", func(job string) {
			os.Mkdir(filepath.Join(job, "repo"), 0o755)
			os.WriteFile(filepath.Join(job, "repo", ".git"), []byte("gitdir: "+host+"\n"), 0o644)
		}, "repo/.git (a regular file)"},
		{".git is a link to a host directory", func(job string) {
			os.Mkdir(filepath.Join(job, "repo"), 0o755)
			os.Symlink(host, filepath.Join(job, "repo", ".git"))
		}, "repo/.git (a symbolic link)"},
		{"objects, refs and HEAD hold a FIFO, a link and garbage", func(job string) {
			g := filepath.Join(job, "repo", ".git")
			os.MkdirAll(filepath.Join(g, "refs", "heads"), 0o755)
			os.MkdirAll(filepath.Join(g, "objects", "info"), 0o755)
			syscall.Mkfifo(filepath.Join(g, "refs", "heads", "hang"), 0o644)
			os.Symlink(filepath.Join(host, "keep"), filepath.Join(g, "objects", "info", "alternates"))
			os.WriteFile(filepath.Join(g, "HEAD"), []byte("not a head\n"), 0o644)
			os.Symlink(filepath.Join(host, "keep"), filepath.Join(g, "config"))
		}, "repo/.git/refs/heads/hang (a FIFO)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			job := t.TempDir()
			c.setup(job)
			changed, err := sealJob(job, testStaged, machine{})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(strings.Join(changed, ", "), c.want) {
				t.Errorf("sealed %v, want %s named", changed, c.want)
			}
			if b, err := os.ReadFile(filepath.Join(host, "keep")); err != nil || string(b) != "host\n" {
				t.Errorf("the host file is %q, %v", b, err)
			}
			if names, _ := os.ReadDir(host); len(names) != 1 {
				t.Errorf("the host directory holds %v", names)
			}
			g := filepath.Join(job, "repo", ".git")
			for name, want := range map[string]string{"HEAD": string(testStaged.HEAD), "objects/info/alternates": string(testStaged.Alternates), "config": string(sealedConfig(testStaged.Config))} {
				fi, err := os.Lstat(filepath.Join(g, name))
				b, _ := os.ReadFile(filepath.Join(g, name))
				if err != nil || !fi.Mode().IsRegular() || string(b) != want {
					t.Errorf("%s: %q (%v), want %q", name, b, err, want)
				}
			}
			if !strings.Contains(string(sealedConfig(testStaged.Config)), "\tbare = true\n") {
				t.Error("the sealed config is not bare")
			}
		})
	}
}

// TestSealingLeavesAlternatesTheJobLeftAsStagedAndRewritesAnyOther: the
// alternates stage wrote, untouched, stay the same file (no file is made
// for them); the same bytes in a file with a second link or that its
// owner alone may read, or other bytes, are written again as staged; one
// that others may write, or set-id, is made 0644 in place (as every file
// of the repository) and then is as staged. The file stage wrote is held open
// across the seal, so "the same file" is its identity, not an inode
// number a file system may give again.
func TestSealingLeavesAlternatesTheJobLeftAsStagedAndRewritesAnyOther(t *testing.T) {
	for _, c := range []struct {
		name  string
		setup func(alt string) error
		kept  bool
	}{
		{"untouched", func(string) error { return nil }, true},
		{"other bytes", func(alt string) error { return os.WriteFile(alt, []byte("/elsewhere/objects\n"), 0o644) }, false},
		{"a second link", func(alt string) error { return os.Link(alt, filepath.Join(filepath.Dir(alt), "twin")) }, false},
		// Made 0644 in place, as every file of the repository others
		// could write or that is set-id, and then as staged.
		{"writable by others", func(alt string) error { return os.Chmod(alt, 0o666) }, true},
		{"readable by its owner alone", func(alt string) error { return os.Chmod(alt, 0o600) }, false},
		{"set-user-id", func(alt string) error { return os.Chmod(alt, 0o644|fs.ModeSetuid) }, true},
		{"a link to a file that holds the same bytes", func(alt string) error {
			twin := filepath.Join(filepath.Dir(alt), "twin")
			return errors.Join(os.Rename(alt, twin), os.Symlink("twin", alt))
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			job := t.TempDir()
			g := filepath.Join(job, "repo", ".git")
			for _, d := range []string{filepath.Join(g, "objects", "info"), filepath.Join(g, "refs")} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			alt := filepath.Join(g, "objects", "info", "alternates")
			for _, f := range []struct {
				path string
				body []byte
			}{{filepath.Join(g, "HEAD"), testStaged.HEAD}, {filepath.Join(g, "config"), testStaged.Config}, {alt, testStaged.Alternates}} {
				if err := os.WriteFile(f.path, f.body, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Chmod(alt, 0o644); err != nil { // as staging makes it, whatever the umask
				t.Fatal(err)
			}
			staged, err := os.Open(alt)
			if err != nil {
				t.Fatal(err)
			}
			defer staged.Close()
			before, err := staged.Stat()
			if err != nil {
				t.Fatal(err)
			}
			if err := c.setup(alt); err != nil {
				t.Fatal(err)
			}
			changed, err := sealJob(job, testStaged, machine{})
			if err != nil {
				t.Fatal(err)
			}
			after, err := os.Lstat(alt)
			if err != nil {
				t.Fatal(err)
			}
			named := strings.Contains(strings.Join(changed, ", "), "alternates (rewritten)")
			if kept := os.SameFile(before, after) && !named; kept != c.kept {
				t.Fatalf("alternates kept: %v (sealed %v), want %v", kept, changed, c.kept)
			}
			st, _ := after.Sys().(*syscall.Stat_t)
			if b, _ := os.ReadFile(alt); string(b) != string(testStaged.Alternates) || after.Mode() != 0o644 || st == nil || st.Nlink != 1 {
				t.Fatalf("sealed alternates: %q, mode %v, %v", b, after.Mode(), st)
			}
		})
	}
}

// TestSealingGivesTheDirectoriesAboveTheObjectsTheirStagedMode: a job
// that opened its directory, repo/ and repo/.git to every user of the
// host (who could then rename objects/ away or plant a config git would
// trust) finds them 0755 again after the seal.
func TestSealingGivesTheDirectoriesAboveTheObjectsTheirStagedMode(t *testing.T) {
	job := t.TempDir()
	g := filepath.Join(job, "repo", ".git")
	if err := os.MkdirAll(filepath.Join(g, "objects", "info"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(g, "HEAD"), testStaged.HEAD, 0o644); err != nil {
		t.Fatal(err)
	}
	dirs := []string{job, filepath.Join(job, "repo"), g}
	for _, d := range dirs {
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	// A ref every user may write, and a set-id log: kept, with neither.
	ref, log := filepath.Join(g, "refs", "heads", "worker", "x"), filepath.Join(g, "logs", "HEAD")
	for _, f := range []string{ref, log} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(ref, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(log, 0o644|fs.ModeSetuid|fs.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	if _, err := sealJob(job, testStaged, machine{}); err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		fi, err := os.Lstat(d)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o755 {
			t.Errorf("%s is %v after the seal, want 0755", d, fi.Mode().Perm())
		}
	}
	for _, f := range []string{ref, log} {
		fi, err := os.Lstat(f)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != 0o644 {
			t.Errorf("%s is %v after the seal, want 0644", f, fi.Mode())
		}
	}
}

// TestSealingRewritesAlternatesAnotherUserOwns: the staged bytes in a file
// of another user's (who could reach the directory while the job had
// opened it, and could write the file after the seal) are written again.
func TestSealingRewritesAlternatesAnotherUserOwns(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving a file to another user takes root")
	}
	job := t.TempDir()
	g := filepath.Join(job, "repo", ".git")
	if err := os.MkdirAll(filepath.Join(g, "objects", "info"), 0o755); err != nil {
		t.Fatal(err)
	}
	alt := filepath.Join(g, "objects", "info", "alternates")
	if err := os.WriteFile(alt, testStaged.Alternates, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(alt, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(alt, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	changed, err := sealJob(job, testStaged, machine{})
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(alt)
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != 0 || !strings.Contains(strings.Join(changed, ", "), "alternates (rewritten)") {
		t.Fatalf("alternates of uid %d kept (sealed %v)", st.Uid, changed)
	}
}
