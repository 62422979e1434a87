package cli

import (
	"os"
	"regexp"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// TestTheWorkedExampleIsTheOneTested holds docs/swarm.md's agent-like
// harness to the one swarm_agent_example.txtar runs, byte for byte.
func TestTheWorkedExampleIsTheOneTested(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../../../docs/swarm.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```sh\n(#!/bin/sh\n# agent-like .*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/swarm.md holds no agent-like harness")
	}
	ar, err := txtar.ParseFile("testdata/script/swarm_agent_example.txtar")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range ar.Files {
		if f.Name == "pool/agent-like" {
			if string(f.Data) != string(m[1]) {
				t.Fatalf("the harness tested is not the one documented:\ntested:\n%s\ndocumented:\n%s", f.Data, m[1])
			}
			return
		}
	}
	t.Fatal("swarm_agent_example.txtar holds no pool/agent-like")
}
