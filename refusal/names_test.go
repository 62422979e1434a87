package refusal_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// Every declared refusal name is in docs/cli.md's table of refusals, so a
// user who meets one can look it up.
func TestEveryRefusalNameIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	f, err := parser.ParseFile(token.NewFileSet(), "names.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	ast.Inspect(f, func(node ast.Node) bool {
		if vs, ok := node.(*ast.ValueSpec); ok {
			for _, name := range vs.Names {
				n++
				if !strings.Contains(string(doc), "`"+name.Name+"`") {
					t.Errorf("refusal %s is not in docs/cli.md", name.Name)
				}
			}
		}
		return true
	})
	if n < 30 {
		t.Fatalf("read only %d names from names.go", n)
	}
}
