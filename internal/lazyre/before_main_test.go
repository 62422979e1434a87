package lazyre_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoPackageCompilesARegexpBeforeMain: a regexp.MustCompile in a
// package-level variable runs in every process that links the package,
// before main, whatever the verb (a bounded repetition such as {0,99}
// compiles to hundreds of instructions); docs/performance.md measured a
// dozen of them as most of git-nwdes's start. Such rules use lazyre.New.
func TestNoPackageCompilesARegexpBeforeMain(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			ast.Inspect(g, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if ok && (sel.Sel.Name == "MustCompile" || sel.Sel.Name == "MustCompilePOSIX") {
					if x, ok := sel.X.(*ast.Ident); ok && x.Name == "regexp" {
						t.Errorf("%s: a package-level regexp.%s compiles before main in every process; use lazyre.New", fset.Position(sel.Pos()), sel.Sel.Name)
					}
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
