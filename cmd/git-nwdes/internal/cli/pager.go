package cli

import (
	"io"
	"os/exec"
	"strings"

	"github.com/nwdes/nwdes/gitstore/gitrepo"
)

// withPager runs render with its output going through the user's pager,
// chosen as git chooses it (GIT_PAGER, pager.nwdes, core.pager, PAGER,
// else less, with LESS=FRX unless set), when stdout is a terminal; never
// when it is piped, with --json, or with pager.nwdes=false. A pager that
// cannot start is skipped: the output is printed directly.
func (s *session) withPager(asJSON bool, render func(w io.Writer)) {
	cmdline := s.pagerCommand()
	if asJSON || !s.env.StdoutTerminal || cmdline == "" {
		render(s.env.Stdout)
		return
	}
	cmd := exec.Command("/bin/sh", "-c", cmdline)
	cmd.Dir = s.dir
	env := []string{}
	if s.env.Environ != nil {
		env = s.env.Environ()
	}
	if s.env.Getenv("LESS") == "" {
		env = append(env, "LESS=FRX")
	}
	if s.env.Getenv("LV") == "" {
		env = append(env, "LV=-c")
	}
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = s.env.Stdout, s.env.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		render(s.env.Stdout)
		return
	}
	if err := cmd.Start(); err != nil {
		render(s.env.Stdout)
		return
	}
	render(in)
	in.Close()
	_ = cmd.Wait()
}

// pagerCommand is the pager to use, "" for none.
func (s *session) pagerCommand() string {
	if p := s.env.Getenv("GIT_PAGER"); p != "" {
		return pagerOrNone(p)
	}
	if s.cfg != nil {
		if v, ok := s.cfg.Get("pager.nwdes"); ok {
			if isFalse(v) {
				return ""
			}
			if !isTrue(v) {
				return pagerOrNone(v)
			}
		}
		if v, ok := s.cfg.Get("core.pager"); ok {
			return pagerOrNone(v)
		}
	}
	if p := s.env.Getenv("PAGER"); p != "" {
		return pagerOrNone(p)
	}
	return "less"
}

// pagerOrNone treats "cat" and an empty command as no pager, as git does.
func pagerOrNone(p string) string {
	if p = strings.TrimSpace(p); p == "" || p == "cat" {
		return ""
	}
	return p
}

func isTrue(v string) bool {
	b, err := gitrepo.ParseBool(v)
	return err == nil && b
}
