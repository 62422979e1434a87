package workspace

import (
	"reflect"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/refusal"
)

func TestProjectScriptsAreReadFromPyproject(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		toml string
		want map[string]string
	}{
		{"two console scripts", `
[project]
name = "greeter"
[project.scripts]
greet = "greeter.cli:main"
serve = "greeter.server:run"
`, map[string]string{"greet": "greeter.cli:main", "serve": "greeter.server:run"}},
		{"an inline table", `project = { name = "g", scripts = { greet = "g:main" } }`, map[string]string{"greet": "g:main"}},
		{"a project without scripts", "[project]\nname = \"g\"\n", nil},
		{"an empty scripts table", "[project.scripts]\n", nil},
		{"no project at all", "[tool.black]\nline-length = 88\n", nil},
		{"an empty file", "", nil},
		{"gui scripts are not console scripts", "[project.gui-scripts]\ngreet = \"g:main\"\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseProjectScripts([]byte(tc.toml))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestAnUnreadablePyprojectIsRefusedNamingIt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, toml, want string }{
		{"not TOML", "[project\nscripts = 1", "not valid TOML"},
		{"a key given twice", "[project.scripts]\ngreet = \"a:b\"\ngreet = \"c:d\"\n", "not valid TOML"},
		{"project a string", `project = "greeter"`, "project is not a table"},
		{"scripts a list", "[project]\nscripts = [\"greet\"]\n", "project.scripts is not a table"},
		{"an entry point that is a number", "[project.scripts]\ngreet = 1\n", `project.scripts "greet" is not a string`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseProjectScripts([]byte(tc.toml))
			r, ok := refusal.As(err)
			if !ok || r.Name != refusal.InputUnreadable || r.Class != refusal.Unreadable {
				t.Fatalf("want InputUnreadable, got %v", err)
			}
			if !strings.HasPrefix(r.Detail, PyprojectPath+": ") || !strings.Contains(r.Detail, tc.want) || strings.Contains(r.Detail, "\n") {
				t.Fatalf("detail %q, want one line naming %s and %q", r.Detail, PyprojectPath, tc.want)
			}
		})
	}
}

func TestImportRootsFollowTheCommittedWheelPackages(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		toml string
		want []string
	}{
		{"nothing declared", "[project]\nname = \"g\"\n", []string{"."}},
		{"not TOML", "[[[", []string{"."}},
		{"hatch packages under src", "[tool.hatch.build.targets.wheel]\npackages = [\"src/greeter\", \"src/other\"]\n", []string{".", "src"}},
		{"a hatch package at the top", "[tool.hatch.build.targets.wheel]\npackages = [\"greeter\"]\n", []string{"."}},
		{"a nested hatch package", "[tool.hatch.build.targets.wheel]\npackages = [\"lib/py/greeter/\"]\n", []string{".", "lib/py"}},
		{"setuptools root package dir", "[tool.setuptools]\npackage-dir = {\"\" = \"src\"}\n", []string{".", "src"}},
		{"setuptools named package dir", "[tool.setuptools.package-dir]\ngreeter = \"lib/greeter\"\n", []string{".", "lib"}},
		{"setuptools find where", "[tool.setuptools.packages.find]\nwhere = [\"src\", \"./src\", \"more\"]\n", []string{".", "src", "more"}},
		{"escapes and absolute roots dropped", "[tool.setuptools.packages.find]\nwhere = [\"..\", \"/usr/lib\", \"../x\", \"a/../../b\"]\n", []string{"."}},
		{"several declarations at once", `
[tool.hatch.build.targets.wheel]
packages = ["src/greeter"]
[tool.setuptools]
package-dir = {"" = "src"}
[tool.setuptools.packages.find]
where = ["lib"]
`, []string{".", "src", "lib"}},
		{"wrong shapes ignored", "[tool.hatch.build.targets.wheel]\npackages = \"src/greeter\"\n[tool.setuptools]\npackage-dir = [\"src\"]\n", []string{"."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ImportRoots([]byte(tc.toml)); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestTheDeclarationAndProjectScriptsDecideTogether(t *testing.T) {
	t.Parallel()
	decl := &Declaration{Commands: []Command{{"greet", "bin/greet"}, {"serve", "bin/serve"}}}
	scripts := func(names ...string) map[string]string {
		m := map[string]string{}
		for _, n := range names {
			m[n] = "pkg.cli:" + n
		}
		return m
	}
	for _, tc := range []struct {
		name    string
		decl    *Declaration
		scripts map[string]string
		want    Mode
	}{
		{"a declaration alone decides", decl, nil, Declared},
		{"a pyproject without scripts leaves the commands to the declaration", decl, map[string]string{}, Declared},
		{"the same names run the declaration's executables", decl, scripts("serve", "greet"), Declared},
		{"scripts without a declaration run through Python", nil, scripts("greet"), Python},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Admitted(tc.decl, tc.scripts)
			if err != nil || got != tc.want {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		name    string
		decl    *Declaration
		scripts map[string]string
		want    []string
	}{
		{"different names are refused naming both files and the names", decl, scripts("greet", "hello"),
			[]string{DeclarationPath, PyprojectPath, `only in .nwave/examine.json: "serve"`, `only in [project.scripts] of pyproject.toml: "hello"`}},
		{"a script the declaration lacks is refused", decl, scripts("greet", "serve", "admin"),
			[]string{`only in .nwave/examine.json: none`, `pyproject.toml: "admin"`}},
		{"an empty declaration against scripts is refused", &Declaration{Commands: []Command{}}, scripts("greet"),
			[]string{`only in [project.scripts] of pyproject.toml: "greet"`}},
		{"neither declaration is refused naming the declaration file", nil, nil,
			[]string{DeclarationPath + ": no readable declaration"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Admitted(tc.decl, tc.scripts)
			r, ok := refusal.As(err)
			if !ok || r.Name != refusal.InputUnreadable || r.Class != refusal.Unreadable {
				t.Fatalf("want InputUnreadable, got %v", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.Detail, w) {
					t.Errorf("detail %q lacks %q", r.Detail, w)
				}
			}
			if !strings.Contains(r.Remedy, DeclarationPath) {
				t.Errorf("remedy %q does not name %s", r.Remedy, DeclarationPath)
			}
		})
	}
}

func TestModesPrintTheirNames(t *testing.T) {
	t.Parallel()
	if Declared.String() != "declared" || Python.String() != "python" || Mode(0).String() != "Mode(0)" {
		t.Fatal("Mode.String")
	}
}
