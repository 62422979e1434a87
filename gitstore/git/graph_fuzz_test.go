package git

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nwdes/nwdes/internal/gittest"

	"github.com/nwdes/nwdes/gitstore/oid"
)

// FuzzParseGraph feeds the commit-graph reader any file: it must not
// panic. A file it accepts answers every position — its id, found again
// at that position, and its parents, which lie in the graph — or says why
// not, never reading past what it checked.
func FuzzParseGraph(f *testing.F) {
	f.Add([]byte("CGPH\x01\x01\x03\x00"), false)
	f.Add([]byte("CGPH\x01\x02\x03\x00"), true)
	// Real files, as git writes them, with merges (an EDGE chunk).
	for _, format := range []string{"sha1", "sha256"} {
		dir := filepath.Join(f.TempDir(), format)
		gittest.Git(f, filepath.Dir(dir), "init", "-q", "-b", "main", "--object-format="+format, dir)
		gittest.Git(f, dir, "commit", "-q", "--allow-empty", "-m", "a")
		for _, b := range []string{"x", "y", "z"} {
			gittest.Git(f, dir, "checkout", "-q", "-b", b, "main")
			gittest.Git(f, dir, "commit", "-q", "--allow-empty", "-m", b)
		}
		gittest.Git(f, dir, "checkout", "-q", "main")
		gittest.Git(f, dir, "merge", "-q", "--no-ff", "-m", "octopus", "x", "y", "z")
		gittest.Git(f, dir, "commit-graph", "write", "--reachable")
		data, err := os.ReadFile(filepath.Join(dir, ".git", "objects", "info", "commit-graph"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, format == "sha256")
	}
	f.Fuzz(func(t *testing.T, data []byte, sha256 bool) {
		format := oid.SHA1
		if sha256 {
			format = oid.SHA256
		}
		l, err := parseGraph(&mappedFile{data: data}, format, nil, 0)
		if err != nil {
			return
		}
		g := &commitGraph{f: format, layers: []*graphLayer{l}}
		for pos := uint32(0); pos < l.n && pos < 4096; pos++ {
			id, err := g.oidAt(pos)
			if err != nil {
				continue
			}
			g.find(id) // an unsorted OIDL may hide it: a wrong answer, never a crash
			c, err := g.commit(pos)
			if err != nil {
				continue
			}
			for _, p := range c.parents {
				if p >= l.n {
					t.Fatalf("position %d has parent %d past the graph of %d", pos, p, l.n)
				}
			}
		}
	})
}
