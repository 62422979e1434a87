package workspace

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/nwdes/nwdes/refusal"
)

// PyprojectPath is the committed Python project file whose
// [project.scripts] may declare console commands.
const PyprojectPath = "pyproject.toml"

const pyprojectRemedy = "make " + PyprojectPath + ` valid TOML whose [project.scripts] maps each command name to an entry point text such as "pkg.mod:func"`

// ParseProjectScripts reads [project.scripts] from a committed
// pyproject.toml: command name to entry point ("pkg.mod:func"). A file
// without that table declares none (a nil map). A file that is not TOML,
// a project or project.scripts that is not a table, and an entry point
// that is not a string are refused with InputUnreadable naming
// pyproject.toml.
func ParseProjectScripts(b []byte) (map[string]string, error) {
	bad := func(format string, args ...any) error {
		return refusal.NewUnreadable(refusal.InputUnreadable, pyprojectRemedy,
			"%s: %s", PyprojectPath, fmt.Sprintf(format, args...))
	}
	var doc map[string]any
	if err := toml.Unmarshal(b, &doc); err != nil {
		return nil, bad("not valid TOML: %s", strings.ReplaceAll(err.Error(), "\n", " "))
	}
	project, ok := doc["project"]
	if !ok {
		return nil, nil
	}
	pt, ok := project.(map[string]any)
	if !ok {
		return nil, bad("project is not a table")
	}
	scripts, ok := pt["scripts"]
	if !ok {
		return nil, nil
	}
	st, ok := scripts.(map[string]any)
	if !ok {
		return nil, bad("project.scripts is not a table")
	}
	if len(st) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(st))
	for _, name := range sortedKeys(st) {
		ep, ok := st[name].(string)
		if !ok {
			return nil, bad("the entry point of project.scripts %q is not a string", name)
		}
		out[name] = ep
	}
	return out, nil
}

// ImportRoots lists the directories, relative to the candidate, that an
// admitted Python command imports from, derived from what the committed
// pyproject.toml declares of its wheel's packages:
//
//   - "." always, first;
//   - [tool.hatch.build.targets.wheel] packages: the parent directory of
//     each package ("src/foo" gives "src", "foo" gives ".");
//   - [tool.setuptools] package-dir: the root package's directory
//     ("" = "src" gives "src") and the parent of every other package's
//     directory;
//   - [tool.setuptools.packages.find] where: each directory as written.
//
// Roots are cleaned, kept in the order found and listed once; a root that
// is absolute or climbs out of the candidate ("..") is dropped. A file
// that is not TOML, or declares none of these, gives ["."]; refusing such
// a file is ParseProjectScripts' work.
func ImportRoots(b []byte) []string {
	roots := []string{"."}
	add := func(dir string) {
		dir = path.Clean(dir)
		if path.IsAbs(dir) || dir == ".." || strings.HasPrefix(dir, "../") || strings.ContainsRune(dir, '\\') {
			return
		}
		for _, r := range roots {
			if r == dir {
				return
			}
		}
		roots = append(roots, dir)
	}
	var doc map[string]any
	if toml.Unmarshal(b, &doc) != nil {
		return roots
	}
	for _, pkg := range stringItems(table(doc, "tool", "hatch", "build", "targets", "wheel")["packages"]) {
		add(path.Dir(path.Clean(pkg)))
	}
	setuptools := table(doc, "tool", "setuptools")
	if dirs, ok := setuptools["package-dir"].(map[string]any); ok {
		for _, pkg := range sortedKeys(dirs) {
			dir, ok := dirs[pkg].(string)
			if !ok {
				continue
			}
			if pkg == "" {
				add(dir)
			} else {
				add(path.Dir(path.Clean(dir)))
			}
		}
	}
	for _, dir := range stringItems(table(setuptools, "packages", "find")["where"]) {
		add(dir)
	}
	return roots
}

// table follows keys through nested tables, giving nil where one is
// missing or is not a table.
func table(t map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		next, ok := t[k].(map[string]any)
		if !ok {
			return nil
		}
		t = next
	}
	return t
}

// stringItems returns the string items of an array value, skipping others.
func stringItems(v any) []string {
	items, _ := v.([]any)
	var out []string
	for _, it := range items {
		if s, ok := it.(string); ok && s != "" {
			out = append(out, s)
		}
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Mode says how a candidate's admitted commands run.
type Mode int

const (
	// Declared commands run the built executables .nwave/examine.json
	// names, directly, with no interpreter and no toolchain.
	Declared Mode = iota + 1
	// Python commands are pyproject.toml's [project.scripts] entry points,
	// run through the current Python interpreter with -I -B.
	Python
)

func (m Mode) String() string {
	switch m {
	case Declared:
		return "declared"
	case Python:
		return "python"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Admitted decides which declaration admits a candidate's commands. decl
// is the parsed .nwave/examine.json, nil when none is committed; scripts
// is [project.scripts] of the committed pyproject.toml, empty when there
// is none.
//
// A committed declaration decides (Declared), unless [project.scripts]
// names other commands: then both files are refused with InputUnreadable
// naming the names only one of them has. Without a declaration, scripts
// decide (Python). Without either, the candidate is refused with
// InputUnreadable naming .nwave/examine.json.
func Admitted(decl *Declaration, scripts map[string]string) (Mode, error) {
	switch {
	case decl == nil && len(scripts) == 0:
		return 0, refusal.NewUnreadable(refusal.InputUnreadable,
			"commit "+DeclarationPath+` declaring the public commands, as {"commands": [{"name": "greet", "path": "bin/greet"}]}, or [project.scripts] in `+PyprojectPath,
			"%s: no readable declaration of public commands is committed", DeclarationPath)
	case decl == nil:
		return Python, nil
	case len(scripts) == 0:
		return Declared, nil
	}
	declared := map[string]bool{}
	var onlyDecl, onlyScripts []string
	for _, c := range decl.Commands {
		declared[c.Name] = true
		if _, ok := scripts[c.Name]; !ok {
			onlyDecl = append(onlyDecl, c.Name)
		}
	}
	for name := range scripts {
		if !declared[name] {
			onlyScripts = append(onlyScripts, name)
		}
	}
	if len(onlyDecl) == 0 && len(onlyScripts) == 0 {
		return Declared, nil
	}
	sort.Strings(onlyDecl)
	sort.Strings(onlyScripts)
	return 0, refusal.NewUnreadable(refusal.InputUnreadable,
		"declare the same command names in "+DeclarationPath+" and in [project.scripts] of "+PyprojectPath+", or remove [project.scripts]",
		"%s and %s name different commands: only in %s: %s; only in [project.scripts] of %s: %s",
		DeclarationPath, PyprojectPath, DeclarationPath, quotedList(onlyDecl), PyprojectPath, quotedList(onlyScripts))
}

func quotedList(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
