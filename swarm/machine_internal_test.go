package swarm

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// What the job left at a machine file's name is replaced, never written
// through, whether the file comes from a spare's premade one or is made.
func TestMachineFilesReplaceWhatTheJobLeftAndNeverWriteThroughIt(t *testing.T) {
	plants := []struct {
		name  string
		plant func(t *testing.T, path, outside string)
	}{
		{"nothing", func(t *testing.T, path, outside string) {}},
		{"a regular file", func(t *testing.T, path, outside string) { mustWrite(t, path, "forged\n") }},
		{"a symbolic link out of the job directory", func(t *testing.T, path, outside string) {
			if err := os.Symlink(outside, path); err != nil {
				t.Fatal(err)
			}
		}},
		{"a directory", func(t *testing.T, path, outside string) {
			if err := os.MkdirAll(filepath.Join(path, "inner"), 0o755); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, premade := range []bool{true, false} {
		for _, p := range plants {
			name := p.name
			if premade {
				name += ", premade"
			}
			t.Run(name, func(t *testing.T) {
				dir, outside := t.TempDir(), filepath.Join(t.TempDir(), "victim")
				mustWrite(t, outside, "untouched\n")
				var m machine
				if premade {
					m.prefix = filepath.Join(t.TempDir(), "spare")
					for _, f := range machineFiles {
						mustWrite(t, m.premade(f), "")
					}
				}
				body := []byte("written by the machinery\n")

				p.plant(t, filepath.Join(dir, "usage.tsv"), outside)
				if err := m.write(dir, "usage.tsv", body); err != nil {
					t.Fatal(err)
				}
				checkMachineFile(t, filepath.Join(dir, "usage.tsv"), body, 0o444)

				if err := os.MkdirAll(filepath.Join(dir, "repo/.git/objects/info"), 0o755); err != nil {
					t.Fatal(err)
				}
				p.plant(t, filepath.Join(dir, "repo/.git/objects/info/alternates"), outside)
				root, err := os.OpenRoot(filepath.Join(dir, "repo/.git"))
				if err != nil {
					t.Fatal(err)
				}
				defer root.Close()
				if err := m.replaceIn(root, "objects/info/alternates", body); err != nil {
					t.Fatal(err)
				}
				checkMachineFile(t, filepath.Join(dir, "repo/.git/objects/info/alternates"), body, 0o644)

				// config sits at the root itself, as sealing writes it.
				p.plant(t, filepath.Join(dir, "repo/.git/config"), outside)
				if err := m.replaceIn(root, "config", body); err != nil {
					t.Fatal(err)
				}
				checkMachineFile(t, filepath.Join(dir, "repo/.git/config"), body, 0o644)

				if b, err := os.ReadFile(outside); err != nil || string(b) != "untouched\n" {
					t.Errorf("the file a planted link leads to was written through: %q, %v", b, err)
				}
				if premade {
					for _, f := range []string{"usage.tsv", "config"} {
						if _, err := os.Lstat(m.premade(f)); !os.IsNotExist(err) {
							t.Errorf("the premade %s was not the one used: %v", f, err)
						}
					}
				}
				m.drop()
			})
		}
	}
}

func mustWrite(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func checkMachineFile(t *testing.T, path string, body []byte, mode os.FileMode) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&^mode != 0 {
		t.Fatalf("%s is not a regular file of mode %v at most: %v, %v", path, mode, fi, err)
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, body) {
		t.Errorf("%s holds %q, want %q", path, b, body)
	}
}
