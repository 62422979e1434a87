package workspace

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/refusal"
)

func TestTheReferenceExamplesAreDeclarations(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		doc  string
		want Declaration
	}{
		{"the minimal greeting", `{"commands": [{"name": "greet", "path": "bin/greet"}], "build": "run the build that writes bin/greet"}`,
			Declaration{Commands: []Command{{"greet", "bin/greet"}}, Build: "run the build that writes bin/greet"}},
		{"a Rust release binary", `{"commands": [{"name": "greet", "path": "target/release/greet"}], "build": "cargo build --release"}`,
			Declaration{Commands: []Command{{"greet", "target/release/greet"}}, Build: "cargo build --release"}},
		{"a Go binary", `{"commands": [{"name": "serve", "path": "bin/serve"}], "build": "go build -o bin/serve ."}`,
			Declaration{Commands: []Command{{"serve", "bin/serve"}}, Build: "go build -o bin/serve ."}},
		{"a shell launcher with two commands and no build", `{"commands": [{"name": "greet", "path": "bin/greet"}, {"name": "serve", "path": "bin/serve"}]}`,
			Declaration{Commands: []Command{{"greet", "bin/greet"}, {"serve", "bin/serve"}}}},
		{"keys in any order", `{"build": "make", "commands": [{"path": "x", "name": "X_1-y"}]}`,
			Declaration{Commands: []Command{{"X_1-y", "x"}}, Build: "make"}},
		{"no commands at all", `{"commands": []}`, Declaration{Commands: []Command{}}},
		{"escaped text", `{"commands": [{"name": "\u0067reet", "path": "bin/\u00e9t\u00e9 \ud83d\ude00"}]}`,
			Declaration{Commands: []Command{{"greet", "bin/été 😀"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseDeclaration([]byte(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, tc.want) {
				t.Fatalf("got %+v, want %+v", *got, tc.want)
			}
		})
	}
}

func TestAMalformedDeclarationIsRefusedNamingItsFirstViolation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		doc  string
		want string
	}{
		{"empty input", ``, "not a JSON object"},
		{"a list", `[{"name": "greet", "path": "bin/greet"}]`, "not a JSON object"},
		{"null", `null`, "not a JSON object"},
		{"a string", `"commands"`, "not a JSON object"},
		{"invalid JSON", `{"commands": [}`, "not valid JSON"},
		{"an unterminated object", `{"commands": []`, "ends early"},
		{"a second object", `{"commands": []} {}`, "data follows the object"},
		{"trailing garbage", `{"commands": []} x`, "data follows the object"},
		{"an unknown top-level key", `{"commands": [], "bulid": "make"}`, `the key "bulid" is neither commands nor build`},
		{"the unknown key before a later fault", `{"x": 1, "commands": 2}`, `the key "x"`},
		{"a duplicate top-level key", `{"commands": [], "commands": []}`, `the key "commands" is given twice`},
		{"a duplicate build", `{"build": "a", "commands": [], "build": "b"}`, `the key "build" is given twice`},
		{"commands missing", `{"build": "make"}`, "the commands list is missing"},
		{"commands an object", `{"commands": {"greet": "bin/greet"}}`, "commands is not a list"},
		{"commands null", `{"commands": null}`, "commands is not a list"},
		{"an entry that is a string", `{"commands": ["bin/greet"]}`, "command 1 is not an object"},
		{"a second entry that is a list", `{"commands": [{"name": "a", "path": "a"}, []]}`, "command 2 is not an object"},
		{"an entry without path", `{"commands": [{"name": "greet"}]}`, "command 1 has no path"},
		{"an entry without name", `{"commands": [{"path": "bin/greet"}]}`, "command 1 has no name"},
		{"an entry with a third key", `{"commands": [{"name": "greet", "path": "bin/greet", "args": []}]}`, `command 1 holds the key "args", which is neither name nor path`},
		{"a duplicate key in an entry", `{"commands": [{"name": "greet", "name": "hello", "path": "bin/greet"}]}`, `command 1 gives the key "name" twice`},
		{"a name that is not a string", `{"commands": [{"name": 7, "path": "bin/greet"}]}`, "the name of command 1 is not a string"},
		{"an empty name", `{"commands": [{"name": "", "path": "bin/greet"}]}`, `the name "" does not match`},
		{"a name starting with a dash", `{"commands": [{"name": "-greet", "path": "bin/greet"}]}`, `the name "-greet" does not match [A-Za-z0-9][A-Za-z0-9_-]*`},
		{"a name starting with an underscore", `{"commands": [{"name": "_greet", "path": "bin/greet"}]}`, `the name "_greet" does not match`},
		{"a name with a dot", `{"commands": [{"name": "greet.py", "path": "bin/greet"}]}`, `the name "greet.py" does not match`},
		{"a name with a space", `{"commands": [{"name": "gr eet", "path": "bin/greet"}]}`, `the name "gr eet" does not match`},
		{"a name that is not ASCII", `{"commands": [{"name": "grüß", "path": "bin/greet"}]}`, `does not match`},
		{"a duplicate name", `{"commands": [{"name": "greet", "path": "a"}, {"name": "greet", "path": "b"}]}`, `command 2 repeats the name "greet" of command 1`},
		{"a path that is not a string", `{"commands": [{"name": "greet", "path": ["bin", "greet"]}]}`, "the path of command 1 is not a string"},
		{"an empty path", `{"commands": [{"name": "greet", "path": ""}]}`, `the path "" is empty`},
		{"an absolute path", `{"commands": [{"name": "greet", "path": "/usr/bin/greet"}]}`, `the path "/usr/bin/greet" is absolute`},
		{"a path with a NUL", `{"commands": [{"name": "greet", "path": "bin/gr\u0000eet"}]}`, `holds a control character`},
		{"a path with a newline", `{"commands": [{"name": "greet", "path": "bin/greet\n"}]}`, `holds a control character`},
		{"a path with a tab", "{\"commands\": [{\"name\": \"greet\", \"path\": \"bin/gr\\teet\"}]}", `holds a control character`},
		{"a path with DEL", `{"commands": [{"name": "greet", "path": "bin/gr\u007feet"}]}`, `holds a control character`},
		{"a path with a C1 control", `{"commands": [{"name": "greet", "path": "bin/gr\u0085eet"}]}`, `holds a control character`},
		{"a path with an unpaired high surrogate", `{"commands": [{"name": "greet", "path": "bin/\ud800"}]}`, `is not valid UTF-8 text`},
		{"a path with an unpaired low surrogate", `{"commands": [{"name": "greet", "path": "bin/\udc00x"}]}`, `is not valid UTF-8 text`},
		{"a path with a reversed surrogate pair", `{"commands": [{"name": "greet", "path": "\ude00\ud83d"}]}`, `is not valid UTF-8 text`},
		{"a path with raw invalid UTF-8", "{\"commands\": [{\"name\": \"greet\", \"path\": \"bin/\xff\"}]}", `is not valid UTF-8 text`},
		{"a path ending in a slash", `{"commands": [{"name": "greet", "path": "bin/"}]}`, `has an empty, "." or ".." segment`},
		{"a path with a double slash", `{"commands": [{"name": "greet", "path": "bin//greet"}]}`, `segment`},
		{"a path with a dot segment", `{"commands": [{"name": "greet", "path": "./bin/greet"}]}`, `segment`},
		{"a path with a dot-dot segment", `{"commands": [{"name": "greet", "path": "bin/../../greet"}]}`, `segment`},
		{"a path that is dot", `{"commands": [{"name": "greet", "path": "."}]}`, `segment`},
		{"a build that is not a string", `{"commands": [], "build": ["make"]}`, "build is not a string"},
		{"a build that is null", `{"commands": [], "build": null}`, "build is not a string"},
		{"the path fault before the name fault", `{"commands": [{"path": "/x", "name": "-x"}]}`, `the path "/x" is absolute`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := ParseDeclaration([]byte(tc.doc))
			if err == nil {
				t.Fatalf("admitted %+v", d)
			}
			r, ok := refusal.As(err)
			if !ok || r.Name != refusal.InputUnreadable || r.Class != refusal.Unreadable {
				t.Fatalf("want an InputUnreadable refusal, got %#v", err)
			}
			if !strings.HasPrefix(r.Detail, DeclarationPath+": ") || !strings.Contains(r.Detail, tc.want) {
				t.Fatalf("detail %q, want it to name %s and %q", r.Detail, DeclarationPath, tc.want)
			}
			if !strings.Contains(r.Remedy, DeclarationPath) {
				t.Fatalf("remedy %q does not name the declaration", r.Remedy)
			}
		})
	}
}

func TestPOSIXAdmitsBackslashesColonsAndDriveLikeNames(t *testing.T) {
	t.Parallel()
	for _, p := range []string{`bin/a\b`, `\tool`, `bin/a\..\b`, `bin/a:b`, `C:tool`, `c:\x`, `bin/it's`, `-rf`, `bin/$(id)`, "a b/ c"} {
		doc := `{"commands": [{"name": "x", "path": ` + jsonString(p) + `}]}`
		d, err := parseDeclaration([]byte(doc), "linux")
		if err != nil {
			t.Errorf("%q refused on POSIX: %v", p, err)
			continue
		}
		if d.Commands[0].Path != p {
			t.Errorf("read %q as %q", p, d.Commands[0].Path)
		}
	}
}

func TestWindowsAlsoRefusesDevicePathsDrivesAndBackslashSegments(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ path, want string }{
		{`\tool`, `starts with "\"`},
		{`\\server\share\x`, `starts with "\"`},
		{`C:tool`, "starts with a drive"},
		{`c:\x`, "starts with a drive"},
		{`bin\..\b`, "segment between backslashes"},
		{`bin\.\b`, "segment between backslashes"},
		{`bin\\b`, "segment between backslashes"},
		{`bin\`, "segment between backslashes"},
		{`bin/.\b`, "segment between backslashes"},
	} {
		doc := `{"commands": [{"name": "x", "path": ` + jsonString(tc.path) + `}]}`
		if _, err := parseDeclaration([]byte(doc), "linux"); err != nil {
			t.Errorf("%q refused on POSIX: %v", tc.path, err)
		}
		_, err := parseDeclaration([]byte(doc), "windows")
		if r, ok := refusal.As(err); !ok || !strings.Contains(r.Detail, tc.want) {
			t.Errorf("%q on Windows: got %v, want %q", tc.path, err, tc.want)
		}
	}
	for _, p := range []string{`bin\greet.exe`, `bin/a:b`, `1:x`, `bin/greet`} {
		doc := `{"commands": [{"name": "x", "path": ` + jsonString(p) + `}]}`
		if _, err := parseDeclaration([]byte(doc), "windows"); err != nil {
			t.Errorf("%q refused on Windows: %v", p, err)
		}
	}
}

func TestValidPathAndValidNameStateTheRules(t *testing.T) {
	t.Parallel()
	if ValidPath("bin/greet") != nil || ValidPath("bin/../x") == nil || ValidPath("") == nil {
		t.Fatal("ValidPath does not follow the path rules")
	}
	for name, want := range map[string]bool{"greet": true, "G": true, "9-a_b": true, "": false, "-a": false, "a.b": false, "a/b": false} {
		if ValidName(name) != want {
			t.Errorf("ValidName(%q) = %v", name, !want)
		}
	}
}

func TestChmodCommandRunsExactlyAsPrintedForAwkwardNames(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	t.Parallel()
	names := []string{
		"plain", "a b", "it's", `"q"`, "'", "''", "-rf", "--", "$(touch pwned)", "`touch pwned`",
		"$HOME", "*", "?", "[a]", "~root", "!bang", `a\b`, `\tool`, "a:b", "C:tool", "a;b", "a&b", "a|b",
		"a>b", "a<b", "#hash", "été", "a{b,c}", "%", "=x",
	}
	dir := t.TempDir()
	for _, n := range names {
		rel := "bin/" + n
		if ValidPath(rel) != nil {
			t.Fatalf("test name %q is not an admitted path", rel)
		}
		if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
			t.Fatal(err)
		}
		full := filepath.Join(dir, "bin", n)
		if err := os.WriteFile(full, []byte("#!/bin/sh\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{rel, n} {
			if err := os.Chmod(full, 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("/bin/sh", "-c", ChmodCommand(p))
			cmd.Dir = dir
			if p == n {
				cmd.Dir = filepath.Join(dir, "bin")
			}
			cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir}
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", ChmodCommand(p), err, out)
			}
			fi, err := os.Stat(full)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm()&0o111 != 0o111 {
				t.Errorf("%s left mode %v", ChmodCommand(p), fi.Mode())
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
		t.Fatal("a quoted name ran a command")
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "bin"))
	if len(entries) != len(names) {
		t.Fatalf("the commands created or removed files: %d entries for %d names", len(entries), len(names))
	}
}

func TestTheChmodCommandQuotesOnlyWithSingleQuotes(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"bin/greet": `chmod +x -- 'bin/greet'`,
		"it's":      `chmod +x -- 'it'\''s'`,
		"-x":        `chmod +x -- '-x'`,
	} {
		if got := ChmodCommand(in); got != want {
			t.Errorf("ChmodCommand(%q) = %s, want %s", in, got, want)
		}
	}
}

// jsonString writes s as a JSON string literal with every character but
// the quote and the backslash as it is.
func jsonString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
