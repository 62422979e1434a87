package gitstore_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsPointOneWay holds the layering each package's doc.go states
// (docs/architecture.md): the packages each may not import, directly or
// through another. A banned path covers the packages below it.
func TestImportsPointOneWay(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	const mod = "github.com/nwdes/nwdes/"
	upper := []string{mod + "examine", mod + "hooks", mod + "report", mod + "internal/cli", mod + "sandbox", mod + "trace"}
	rules := map[string][]string{
		"refusal":            {mod},
		"internal/boundedio": {mod},
		"gitstore/gitrepo":   append([]string{"github.com/go-git", mod + "gitstore"}, upper...),
		"gitstore/odb":       append([]string{mod + "gitstore"}, upper...),
		"gitstore/treemerge": append([]string{mod + "gitstore"}, upper...),
		"gitstore/oid":       append([]string{"github.com/go-git", mod + "gitstore"}, upper...),
		"gitstore":           upper,
		"sandbox":            {mod + "gitstore", mod + "examine", mod + "hooks", mod + "report", mod + "internal/cli"},
		"examine":            {mod + "hooks", mod + "report", mod + "internal/cli", mod + "examine/workspace"},
		"examine/workspace":  {mod + "hooks", mod + "report", mod + "internal/cli"},
		"swarm":              {mod + "hooks", mod + "report", mod + "internal/cli", mod + "examine/workspace"},
		"hooks":              {mod + "internal/cli"},
		"report":             {mod + "internal/cli", mod + "hooks"},
		"trace":              {mod + "examine", mod + "swarm", mod + "sandbox", mod + "hooks", mod + "report", mod + "internal/cli"},
	}
	// Above the store nothing names go-git directly: ids are oid.IDs.
	for _, pkg := range []string{"examine", "examine/workspace", "swarm", "trace", "report", "hooks", "internal/cli", "sandbox", "gitstore/oid"} {
		out, err := exec.Command("go", "list", "-f", "{{join .Imports \" \"}} {{join .TestImports \" \"}} {{join .XTestImports \" \"}}", mod+pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", pkg, err, out)
		}
		for _, imp := range strings.Fields(string(out)) {
			if strings.HasPrefix(imp, "github.com/go-git/") {
				t.Errorf("%s imports %s directly", pkg, imp)
			}
		}
	}
	covers := func(banned, dep string) bool {
		banned = strings.TrimSuffix(banned, "/")
		return dep == banned || strings.HasPrefix(dep, banned+"/")
	}
	for pkg, banned := range rules {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", mod+pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			if dep == mod+pkg || dep == mod+"refusal" && pkg != "refusal" {
				continue // itself; every package may name its refusals
			}
			for _, b := range banned {
				if covers(b, dep) {
					t.Errorf("%s imports %s", pkg, dep)
				}
			}
		}
	}
}
