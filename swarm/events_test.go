package swarm_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/swarm"
)

func TestTheEventKindsDocumentedAreTheOnesEmitted(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../docs/swarm.md")
	if err != nil {
		t.Fatal(err)
	}
	section := regexp.MustCompile("(?s)### Events\n(.*?)\n\n").FindSubmatch(b)
	if section == nil {
		t.Fatal("docs/swarm.md has no Events section")
	}
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z-]+)` \\|").FindAllSubmatch(section[1], -1) {
		documented[string(m[1])] = true
	}
	declared := map[string]bool{}
	for _, k := range swarm.EventKinds() {
		declared[string(k)] = true
		if !documented[string(k)] {
			t.Errorf("event kind %s is not in docs/swarm.md's Events table", k)
		}
	}
	for k := range documented {
		if !declared[k] {
			t.Errorf("docs/swarm.md documents an event kind %s that swarm.EventKinds does not declare", k)
		}
	}
}

func TestEveryDeclaredEventKindIsEmitted(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("supervisor.go")
	if err != nil {
		t.Fatal(err)
	}
	decls := regexp.MustCompile(`(?m)^\s+(Event\w+)\s+EventKind = "([a-z-]+)"`).FindAllSubmatch(src, -1)
	if len(decls) != len(swarm.EventKinds()) {
		t.Fatalf("%d kinds declared in supervisor.go, %d in EventKinds", len(decls), len(swarm.EventKinds()))
	}
	// The supervisor's methods live in more than one file (gate.go).
	files, _ := filepath.Glob("*.go")
	var all []byte
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	for _, d := range decls {
		if !regexp.MustCompile(`Event\{Kind: ` + string(d[1]) + `\b`).Match(all) {
			t.Errorf("event kind %s (%s) is declared but never emitted", d[2], d[1])
		}
	}
}
