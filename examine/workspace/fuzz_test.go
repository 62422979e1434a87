package workspace

import (
	"encoding/json"
	"path"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/nwdes/nwdes/refusal"
)

// FuzzParseDeclaration feeds the declaration reader any document (it is
// committed by the candidate): it must not panic; a refusal is
// InputUnreadable naming .nwave/examine.json; an accepted declaration
// holds names that match the pattern and are unique and paths that pass
// every path rule, encoding/json reads the same commands and build from it,
// and what Windows admits POSIX admits too.
func FuzzParseDeclaration(f *testing.F) {
	for _, s := range []string{
		`{"commands": [{"name": "greet", "path": "bin/greet"}], "build": "run the build that writes bin/greet"}`,
		`{"commands": [{"name": "greet", "path": "target/release/greet"}], "build": "cargo build --release"}`,
		`{"commands": [{"name": "greet", "path": "bin/greet"}, {"name": "serve", "path": "bin/serve"}]}`,
		`{"commands": [{"name": "a", "path": "bin/a\\b"}, {"name": "b", "path": "C:tool"}, {"name": "c", "path": "\\tool"}]}`,
		`{"commands": [{"name": "greet", "path": "bin/\ud800"}]}`,
		`{"commands": [{"name": "greet", "path": "bin/\ud83d\ude00"}]}`,
		`{"commands": [{"name": "greet", "name": "x", "path": "bin/greet"}]}`,
		`{"commands": [], "commands": []}`,
		`{"commands": [{"name": "greet", "path": "../greet"}]}`,
		`{"commands": []} {}`,
		`[]`,
		``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, goos := range []string{runtime.GOOS, "windows"} {
			d, err := parseDeclaration(b, goos)
			if err != nil {
				if r, ok := refusal.As(err); !ok || r.Name != refusal.InputUnreadable || !strings.HasPrefix(r.Detail, DeclarationPath+": ") {
					t.Fatalf("refused with %#v", err)
				}
				continue
			}
			seen := map[string]bool{}
			for _, c := range d.Commands {
				if !ValidName(c.Name) || seen[c.Name] {
					t.Fatalf("accepted the name %q", c.Name)
				}
				seen[c.Name] = true
				if why := pathProblem(c.Path, goos); why != "" || !utf8.ValidString(c.Path) {
					t.Fatalf("accepted the path %q on %s: %s", c.Path, goos, why)
				}
				written := strings.Contains(string(b), "\uFFFD") || strings.Contains(strings.ToLower(string(b)), `\ufffd`)
				if strings.ContainsRune(c.Path, utf8.RuneError) && !written {
					t.Fatalf("accepted the path %q, whose U+FFFD stands for text that was not UTF-8", c.Path)
				}
				if path.IsAbs(c.Path) || path.Clean(c.Path) != c.Path || strings.HasPrefix(c.Path, "../") {
					t.Fatalf("accepted the path %q, which is not clean and relative", c.Path)
				}
			}
			var plain struct {
				Commands []Command `json:"commands"`
				Build    string    `json:"build"`
			}
			if err := json.Unmarshal(b, &plain); err != nil {
				t.Fatalf("accepted what encoding/json refuses: %v", err)
			}
			if len(plain.Commands) != len(d.Commands) || plain.Build != d.Build {
				t.Fatalf("encoding/json reads %+v, the parser %+v", plain, d)
			}
			for i := range plain.Commands {
				if plain.Commands[i] != d.Commands[i] {
					t.Fatalf("encoding/json reads %+v, the parser %+v", plain, d)
				}
			}
			if goos == "windows" {
				if _, err := parseDeclaration(b, "linux"); err != nil {
					t.Fatalf("Windows admits what POSIX refuses: %v", err)
				}
			}
		}
	})
}

// FuzzParseProjectScripts feeds the [project.scripts] reader any file (it
// is committed by the candidate): it must not panic, a refusal is
// InputUnreadable naming pyproject.toml on one line, and the import roots
// of any file start with "." and are distinct, relative and inside the
// candidate.
func FuzzParseProjectScripts(f *testing.F) {
	for _, s := range []string{
		"[project]\nname = \"greeter\"\n[project.scripts]\ngreet = \"greeter.cli:main\"\n",
		"project = { scripts = { greet = \"g:main\" } }\n",
		"[project.scripts]\ngreet = 1\n",
		"[tool.hatch.build.targets.wheel]\npackages = [\"src/greeter\"]\n",
		"[tool.setuptools]\npackage-dir = {\"\" = \"src\"}\n[tool.setuptools.packages.find]\nwhere = [\"..\", \"lib\"]\n",
		"[project\n",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		scripts, err := ParseProjectScripts(b)
		if err != nil {
			if r, ok := refusal.As(err); !ok || r.Name != refusal.InputUnreadable || !strings.HasPrefix(r.Detail, PyprojectPath+": ") || strings.Contains(r.Detail, "\n") {
				t.Fatalf("refused with %#v", err)
			}
		} else if scripts != nil && len(scripts) == 0 {
			t.Fatal("an empty map where none is declared")
		}
		roots := ImportRoots(b)
		if len(roots) == 0 || roots[0] != "." {
			t.Fatalf("roots %q do not start with .", roots)
		}
		seen := map[string]bool{}
		for _, r := range roots {
			if seen[r] || path.IsAbs(r) || r == ".." || strings.HasPrefix(r, "../") || path.Clean(r) != r {
				t.Fatalf("root %q of %q", r, roots)
			}
			seen[r] = true
		}
	})
}
