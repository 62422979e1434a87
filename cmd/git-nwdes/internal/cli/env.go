package cli

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/refusal"
	"golang.org/x/term"
)

// Env is everything the command takes from its process. Tests build one
// with buffers and a map; main passes the real process's.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	Environ        func() []string
	Dir            string // the working directory
	Now            func() time.Time
	// Terminal reports whether stderr is a terminal (for colour and
	// progress); StdoutTerminal whether stdout is (for the pager).
	Terminal       bool
	StdoutTerminal bool
}

// OSEnv returns the running process's environment.
func OSEnv() Env {
	dir, _ := os.Getwd()
	return Env{
		StdoutTerminal: term.IsTerminal(int(os.Stdout.Fd())),
		Stdin:          os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		Getenv: os.Getenv, Environ: os.Environ, Dir: dir, Now: time.Now,
		Terminal: term.IsTerminal(int(os.Stderr.Fd())),
	}
}

type style struct{ color bool }

func (s style) red(t string) string {
	if !s.color {
		return t
	}
	return "\x1b[31m" + t + "\x1b[0m"
}

func newStyle(e Env) style {
	return style{color: e.Terminal && e.Getenv("NO_COLOR") == "" && e.Getenv("TERM") != "dumb"}
}

// storeOptions takes the store's tuning from git config (nwdes.durable,
// nwdes.maxRecordBytes, nwdes.maxWalk). Durable is on unless set false.
func storeOptions(cfg *gitrepo.Config, now func() time.Time) (gitstore.Options, error) {
	var display gitstore.RefName
	if cfg != nil {
		if v, ok := cfg.Get("nwdes.displayRef"); ok {
			display = gitstore.RefName(strings.TrimSpace(v))
		}
	}
	reg, err := registry(display)
	if err != nil {
		return gitstore.Options{}, err
	}
	o := gitstore.Options{Durable: true, Now: now, Registry: reg}
	durable, err := configBool(cfg, "nwdes.durable", true)
	if err != nil {
		return o, err
	}
	o.Durable = durable
	for key, dst := range map[string]*int{"nwdes.maxRecordBytes": &o.MaxRecordBytes, "nwdes.maxWalk": &o.MaxWalk} {
		if v, ok := cfg.Get(key); ok {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return o, refusal.New(refusal.ConfigurationMalformed, fmt.Sprintf("set %s to a positive whole number", key),
					"git config %s is %q", key, v)
			}
			*dst = n
		}
	}
	return o, nil
}

// isFalse and isTrue read a boolean as git config --type=bool does
// (gitrepo.ParseBool); a value git would refuse is neither.
func isFalse(v string) bool {
	b, err := gitrepo.ParseBool(v)
	return err == nil && !b
}

// configBool reads a boolean git config key as git config --type=bool
// does: def when unset, and a named refusal for a value git would refuse
// (never a guess that turns an option on).
func configBool(cfg *gitrepo.Config, key string, def bool) (bool, error) {
	v, ok := cfg.Get(key)
	if !ok {
		return def, nil
	}
	b, err := gitrepo.ParseBool(v)
	if err != nil {
		return def, refusal.New(refusal.ConfigurationMalformed, fmt.Sprintf("set %s to true or false", key),
			"git config %s is %q, which is not a boolean", key, v)
	}
	return b, nil
}
