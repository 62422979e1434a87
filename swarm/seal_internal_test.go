package swarm

import (
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
// for them); the same bytes in a file with a second link or that others
// may write, or other bytes, are written again as staged.
func TestSealingLeavesAlternatesTheJobLeftAsStagedAndRewritesAnyOther(t *testing.T) {
	for _, c := range []struct {
		name  string
		setup func(alt string)
		kept  bool
	}{
		{"untouched", func(string) {}, true},
		{"other bytes", func(alt string) { os.WriteFile(alt, []byte("/elsewhere/objects\n"), 0o644) }, false},
		{"a second link", func(alt string) { os.Link(alt, filepath.Join(filepath.Dir(alt), "twin")) }, false},
		{"writable by others", func(alt string) { os.Chmod(alt, 0o666) }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			job := t.TempDir()
			g := filepath.Join(job, "repo", ".git")
			os.MkdirAll(filepath.Join(g, "objects", "info"), 0o755)
			os.MkdirAll(filepath.Join(g, "refs"), 0o755)
			os.WriteFile(filepath.Join(g, "HEAD"), testStaged.HEAD, 0o644)
			os.WriteFile(filepath.Join(g, "config"), testStaged.Config, 0o644)
			alt := filepath.Join(g, "objects", "info", "alternates")
			os.WriteFile(alt, testStaged.Alternates, 0o644)
			var before syscall.Stat_t
			syscall.Stat(alt, &before)
			c.setup(alt)
			changed, err := sealJob(job, testStaged, machine{})
			if err != nil {
				t.Fatal(err)
			}
			var after syscall.Stat_t
			if err := syscall.Stat(alt, &after); err != nil {
				t.Fatal(err)
			}
			named := strings.Contains(strings.Join(changed, ", "), "alternates (rewritten)")
			if kept := after.Ino == before.Ino && !named; kept != c.kept {
				t.Fatalf("alternates kept: %v (inode %d, was %d; sealed %v), want %v", kept, after.Ino, before.Ino, changed, c.kept)
			}
			fi, _ := os.Lstat(alt)
			if b, _ := os.ReadFile(alt); string(b) != string(testStaged.Alternates) || fi.Mode().Perm()&0o022 != 0 || after.Nlink != 1 {
				t.Fatalf("sealed alternates: %q, mode %v, %d links", b, fi.Mode(), after.Nlink)
			}
		})
	}
}
