package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

func TestResolveAnswersAsEvalSymlinksAndNamesTheLinksItFollowed(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"a/bin", "b/deep/bin"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	os.WriteFile(filepath.Join(dir, "file"), nil, 0o644)
	for link, target := range map[string]string{
		"rel": "a", "abs": filepath.Join(dir, "b"), "chain": "rel", "up": "b/deep/../deep",
		"dangling": "nowhere", "loop1": "loop2", "loop2": "loop1", "b/deep/parent": "..", "fileup": "file/../a",
	} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		path  string
		links int // links named in seen, and one more for a name not read
	}{
		{"a/bin", 0}, {"rel/bin", 1}, {"abs/deep/bin", 1}, {"chain/bin", 2}, {"up/bin", 1},
		{"b/deep/parent/deep/bin", 1}, {"dangling/bin", 2}, {"loop1", maxLinks}, {"file/bin", 1}, {"missing/bin", 1}, {"fileup/bin", 2},
	} {
		t.Run(c.path, func(t *testing.T) {
			p := filepath.Join(dir, c.path)
			want, wantErr := filepath.EvalSymlinks(p)
			var seen []pathName
			got, err := resolve(p, &seen)
			if got != want || (err == nil) != (wantErr == nil) {
				t.Fatalf("resolve: %q %v, EvalSymlinks: %q %v", got, err, want, wantErr)
			}
			if len(seen) != c.links {
				t.Fatalf("%d names seen, want %d", len(seen), c.links)
			}
			for _, n := range seen {
				if !n.unchanged() {
					t.Fatalf("%v changed, though nothing did", n)
				}
			}
		})
	}
}
