package layering_test

import (
	"encoding/json"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

const mod = "github.com/nwdes/nwdes/"

// allowed is every package of the module and the packages of the module it
// may import directly: the arrows of docs/architecture.md, top to bottom.
// refusal (the one error shape), internal/lazyre (a regular expression
// compiled at first use; the standard library only) and internal/names (the
// name rule, no imports) may be imported by any package and are left out
// of the lists;
// above the store, gitstore/gitrepo (where a repository is) and
// gitstore/oid (object ids) may be named by any layer. A
// package that is not listed fails the test, so a new package is placed in
// the layers before it lands.
var allowed = map[string][]string{
	"cmd/git-nwdes":              {"cmd/git-nwdes/internal/cli"},
	"cmd/git-nwdes/internal/cli": {"examine", "examine/workspace", "swarm", "hooks", "report", "judge", "ledger", "trial", "trace", "trust", "sandbox", "gitstore", "gitstore/remote", "gitstore/gitrepo", "gitstore/oid", "internal/boundedio", "internal/text"},
	"hooks":                      {"judge", "examine", "trust", "gitstore", "gitstore/gitrepo", "gitstore/oid", "internal/boundedio", "internal/text"},
	"report":                     {"judge", "examine", "gitstore", "gitstore/gitrepo", "gitstore/oid", "internal/text"},
	"examine/workspace":          {"examine", "sandbox", "gitstore", "gitstore/gitrepo", "gitstore/oid"},
	"swarm":                      {"judge", "examine", "sandbox", "internal/boundedio", "gitstore", "gitstore/remote", "gitstore/stage", "gitstore/gitrepo", "gitstore/oid", "internal/text"},
	"judge":                      {"examine", "trust", "gitstore", "gitstore/gitrepo", "gitstore/oid"},
	"examine":                    {"sandbox", "trust", "gitstore", "gitstore/gitrepo", "gitstore/oid", "internal/text"},
	"ledger":                     {"gitstore", "gitstore/gitrepo", "gitstore/oid"},
	"trial":                      {"gitstore", "gitstore/gitrepo", "gitstore/oid", "internal/text"},
	"trace":                      {"gitstore", "gitstore/gitrepo", "gitstore/oid"},
	"trust":                      {"internal/boundedio"},
	"sandbox":                    {"internal/text"},
	// The store: replication and staging above the record store, the
	// record store above the git layer, the git layer above odb.
	"gitstore/remote":       {"gitstore", "gitstore/git", "gitstore/treemerge", "gitstore/oid", "internal/text"},
	"gitstore/stage":        {"gitstore/git", "gitstore/oid"},
	"gitstore/memstore":     {"gitstore", "gitstore/git", "gitstore/oid", "internal/text"},
	"gitstore/gitstoretest": {"gitstore", "gitstore/oid", "internal/gittest"},
	"gitstore":              {"gitstore/git", "gitstore/gitrepo", "gitstore/oid", "internal/text"},
	"gitstore/git":          {"gitstore/odb", "gitstore/gitrepo", "gitstore/oid", "internal/text"},
	"gitstore/treemerge":    {"gitstore/oid"},
	"gitstore/odb":          {"gitstore/oid"},
	"gitstore/gitrepo":      {"gitstore/oid"},
	"gitstore/oid":          {},
	"internal/boundedio":    {},
	"internal/text":         {},
	"internal/gittest":      {},
	"internal/layering":     {},
	"internal/apicheck":     {},
	"internal/race":         {},
	"refusal":               {},
	"internal/lazyre":       {},
	"internal/names":        {},
}

// anyLayer may be imported by every package: leaves of the standard
// library only, which hold no state of nwdes's.
var anyLayer = map[string]bool{"refusal": true, "internal/lazyre": true, "internal/names": true}

// goGit are the only packages that may import go-git, tests included:
// above them object ids are oid.IDs.
var goGit = map[string]bool{"gitstore/git": true, "gitstore/odb": true}

type pkg struct {
	ImportPath                         string
	Imports, TestImports, XTestImports []string
}

func TestImportsPointOneWay(t *testing.T) {
	out, err := exec.Command("go", "list", "-json", mod+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	seen := 0
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(p.ImportPath, mod)
		seen++
		ok, listed := allowed[name]
		if !listed {
			t.Errorf("%s is in no layer: add it to allowed (and to docs/architecture.md)", name)
			continue
		}
		for _, imp := range p.Imports {
			dep, ours := strings.CutPrefix(imp, mod)
			if ours && !anyLayer[dep] && !contains(ok, dep) {
				t.Errorf("%s imports %s, which its layer does not allow", name, dep)
			}
		}
		if goGit[name] {
			continue
		}
		for _, imp := range append(append(p.Imports, p.TestImports...), p.XTestImports...) {
			if strings.HasPrefix(imp, "github.com/go-git/") {
				t.Errorf("%s (or its tests) imports %s: only %v name go-git", name, imp, keys(goGit))
			}
		}
	}
	if seen < 20 {
		t.Fatalf("go list found %d packages: not the whole module", seen)
	}
}

// TestArrowsPointDown: the table itself has no cycle, so the layers it
// states are layers.
func TestArrowsPointDown(t *testing.T) {
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(p string, path []string)
	visit = func(p string, path []string) {
		switch state[p] {
		case 1:
			t.Errorf("the allowed arrows make a cycle: %s", strings.Join(append(path, p), " → "))
			return
		case 2:
			return
		}
		state[p] = 1
		for _, d := range allowed[p] {
			if _, ok := allowed[d]; !ok {
				t.Errorf("%s may import %s, which is in no layer", p, d)
			}
			visit(d, append(path, p))
		}
		state[p] = 2
	}
	for _, p := range keys(allowed) {
		visit(p, nil)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
