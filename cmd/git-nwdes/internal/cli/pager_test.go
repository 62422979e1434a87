package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/internal/gittest"
)

func TestShowGoesThroughThePagerOnATerminalOnly(t *testing.T) {
	dir := gittest.Init(t, false)
	gittest.WriteFile(t, dir, ".nwave/features/f.md", "# REQUEST\nr\n# ACCEPTANCE CRITERIA\nE1. one\n")
	gittest.Git(t, dir, "add", "-A")
	gittest.Git(t, dir, "commit", "-q", "-m", "c")
	cases := []struct {
		name     string
		terminal bool
		env      map[string]string
		config   string
		paged    bool
	}{
		{"a terminal and GIT_PAGER", true, map[string]string{"GIT_PAGER": "sed s/^/PAGED:/"}, "", true},
		{"a pipe", false, map[string]string{"GIT_PAGER": "sed s/^/PAGED:/"}, "", false},
		{"pager.nwdes=false", true, map[string]string{"PAGER": "sed s/^/PAGED:/"}, "false", false},
		{"pager.nwdes names one", true, nil, "sed s/^/PAGED:/", true},
		{"cat is no pager", true, map[string]string{"GIT_PAGER": "cat"}, "", false},
	}
	for _, c := range cases {
		if c.config != "" {
			gittest.Git(t, dir, "config", "pager.nwdes", c.config)
		} else {
			gittest.Run(dir, "config", "--unset", "pager.nwdes")
		}
		env := map[string]string{"PATH": "/usr/bin:/bin", "HOME": filepath.Dir(dir), "GIT_CONFIG_NOSYSTEM": "1"}
		for k, v := range c.env {
			env[k] = v
		}
		run := func(args ...string) string {
			var out, errb bytes.Buffer
			code := Main(context.Background(), append([]string{"git-nwdes"}, args...), Env{Stdout: &out, Stderr: &errb, Dir: dir,
				StdoutTerminal: c.terminal, Getenv: func(k string) string { return env[k] }})
			if code != 0 {
				t.Fatalf("%s: %v: exit %d: %s", c.name, args, code, errb.String())
			}
			return out.String()
		}
		run("examine", "open")
		out := run("examine", "show")
		if got := strings.HasPrefix(out, "PAGED:draft of f"); got != c.paged {
			t.Fatalf("%s: paged %v, output %q", c.name, got, out)
		}
	}
}
