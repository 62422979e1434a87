package apicheck

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("api.update", false, "rewrite api.txt from the packages' source")

const module = "github.com/nwdes/nwdes/"

// supported are the packages whose exported identifiers are the library
// API: every package of the module but cmd/ and internal/, which
// docs/architecture.md states as such. internalOrCmd decides it from the
// path, so a new public package is in the API from its first commit.
func internalOrCmd(rel string) bool {
	return rel == "cmd" || strings.HasPrefix(rel, "cmd/") || rel == "internal" || strings.HasPrefix(rel, "internal/") ||
		strings.Contains(rel, "/testdata") || strings.HasPrefix(rel, "testdata") || strings.HasPrefix(rel, "demo") || strings.HasPrefix(rel, "docs") || strings.HasPrefix(rel, "scripts")
}

func TestTheLibraryAPIIsTheOneListed(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	got, err := listAPI(root)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("api.txt", []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile("api.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	have := map[string]bool{}
	for _, l := range got {
		have[l] = true
	}
	listed := map[string]bool{}
	var gone, added []string
	for _, l := range want {
		listed[l] = true
		if !have[l] {
			gone = append(gone, l)
		}
	}
	for _, l := range got {
		if !listed[l] {
			added = append(added, l)
		}
	}
	if len(gone)+len(added) > 0 {
		t.Errorf("the library API changed: %d listed in api.txt are gone or changed, %d are new.\n"+
			"If the change is meant, run `go test ./internal/apicheck -api.update` and commit api.txt "+
			"(a removal or change breaks the library's users: say so in the commit).\ngone:\n  %s\nnew:\n  %s",
			len(gone), len(added), strings.Join(gone, "\n  "), strings.Join(added, "\n  "))
	}
}

// TestTheListerSeesEveryKindOfDeclaration keeps the lister honest: a
// package written for it yields the lines expected, so an API that
// changes in a way the lister missed cannot pass as unchanged.
func TestTheListerSeesEveryKindOfDeclaration(t *testing.T) {
	dir := t.TempDir()
	src := `package p

const A, b = 1, 2
const C string = "c"
var V, w int
type T struct {
	Exported int
	hidden   int
	Embedded
}
type Embedded interface{ M(x int) error; m() }
type alias = T
func F(a, b string) (int, error) { return 0, nil }
func (t *T) Method() {}
func (t T) hidden() {}
func g() {}
`
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := packageAPI("x/p", dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"pkg x/p, const A = 1",
		"pkg x/p, const C string = \"c\"",
		"pkg x/p, func F(a, b string) (int, error)",
		"pkg x/p, method (*T) Method()",
		"pkg x/p, type Embedded interface",
		"pkg x/p, type Embedded interface, M(x int) error",
		"pkg x/p, type Embedded interface, unexported methods",
		"pkg x/p, type T struct",
		"pkg x/p, type T struct, Embedded",
		"pkg x/p, type T struct, Exported int",
		"pkg x/p, var V int",
	}
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func listAPI(root string) ([]string, error) {
	var all []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if rel != "." && (strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_") || internalOrCmd(rel)) {
			return filepath.SkipDir
		}
		if rel == "." {
			return nil
		}
		lines, err := packageAPI(module+rel, path)
		if err != nil {
			return err
		}
		all = append(all, lines...)
		return nil
	})
	sort.Strings(all)
	return all, err
}

// packageAPI lists the exported declarations of the package in dir, as
// built for linux/amd64, one line each, sorted.
func packageAPI(importPath, dir string) ([]string, error) {
	ctx := build.Default
	ctx.GOOS, ctx.GOARCH, ctx.CgoEnabled = "linux", "amd64", false
	bp, err := ctx.ImportDir(dir, 0)
	if _, none := err.(*build.NoGoError); none {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if bp.Name == "main" {
		return nil, nil
	}
	fset := token.NewFileSet()
	var lines []string
	add := func(format string, a ...any) {
		lines = append(lines, "pkg "+importPath+", "+fmt.Sprintf(format, a...))
	}
	show := func(n ast.Node) string {
		var b bytes.Buffer
		printer.Fprint(&b, fset, n)
		return strings.Join(strings.Fields(b.String()), " ")
	}
	for _, name := range bp.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				sig := strings.TrimPrefix(show(d.Type), "func")
				if d.Recv == nil {
					add("func %s%s", d.Name.Name, sig)
					continue
				}
				recv := show(d.Recv.List[0].Type)
				if !ast.IsExported(strings.TrimLeft(strings.SplitN(recv, "[", 2)[0], "*")) {
					continue
				}
				add("method (%s) %s%s", recv, d.Name.Name, sig)
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.ValueSpec:
						kind := "var"
						if d.Tok == token.CONST {
							kind = "const"
						}
						for i, n := range s.Names {
							if !n.IsExported() {
								continue
							}
							line := kind + " " + n.Name
							if s.Type != nil {
								line += " " + show(s.Type)
							}
							// A constant's value is API (an exit code, a
							// limit); a variable's initial value is not.
							if kind == "const" && len(s.Values) == len(s.Names) {
								line += " = " + show(s.Values[i])
							}
							add("%s", line)
						}
					case *ast.TypeSpec:
						if !s.Name.IsExported() {
							continue
						}
						typeLines(s, show, add)
					}
				}
			}
		}
	}
	sort.Strings(lines)
	return lines, nil
}

// typeLines lists a type: its kind, and for a struct or an interface each
// exported field or method, so a change to one shows as that line.
func typeLines(s *ast.TypeSpec, show func(ast.Node) string, add func(string, ...any)) {
	name := s.Name.Name
	if s.TypeParams != nil {
		name += show(s.TypeParams)
	}
	if s.Assign.IsValid() {
		add("type %s = %s", name, show(s.Type))
		return
	}
	switch t := s.Type.(type) {
	case *ast.StructType:
		add("type %s struct", name)
		for _, f := range t.Fields.List {
			if len(f.Names) == 0 {
				emb := strings.TrimLeft(show(f.Type), "*")
				if i := strings.LastIndex(emb, "."); i >= 0 {
					emb = emb[i+1:]
				}
				if ast.IsExported(emb) {
					add("type %s struct, %s", name, show(f.Type))
				}
				continue
			}
			for _, n := range f.Names {
				if n.IsExported() {
					add("type %s struct, %s %s", name, n.Name, show(f.Type))
				}
			}
		}
	case *ast.InterfaceType:
		add("type %s interface", name)
		hidden := false
		for _, m := range t.Methods.List {
			if len(m.Names) == 0 {
				add("type %s interface, %s", name, show(m.Type))
				continue
			}
			for _, n := range m.Names {
				if !n.IsExported() {
					hidden = true
					continue
				}
				add("type %s interface, %s%s", name, n.Name, strings.TrimPrefix(show(m.Type), "func"))
			}
		}
		if hidden {
			add("type %s interface, unexported methods", name)
		}
	default:
		add("type %s %s", name, show(s.Type))
	}
}
