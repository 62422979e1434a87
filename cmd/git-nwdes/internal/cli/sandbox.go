package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"

	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/refusal"
	"github.com/nwdes/nwdes/sandbox"
)

// tempRoot is where job directories are made.
func (s *session) tempRoot() string {
	if t := s.env.Getenv("TMPDIR"); t != "" {
		return t
	}
	return sandbox.DefaultTempRoot
}

// wall is the wall every untrusted program of this run goes through.
func (s *session) wall(strict bool) *sandbox.Wall {
	return &sandbox.Wall{
		Path: s.env.Getenv("PATH"), Home: s.env.Getenv("HOME"), Getenv: s.env.Getenv,
		TempRoot: s.tempRoot(), Strict: strict, Now: s.env.Now,
	}
}

// jobWall is the wall of every job nwdes runs for a repository (gate
// runs, examination probes, swarm jobs), configured alike from git config:
// nwdes.sandbox.root (toolchain directories added to the default roots,
// read-only), nwdes.sandbox.cache (shared caches, copy-on-write to each
// job) and nwdes.sandbox.namespaces (false: no namespaces, hence no view).
func (s *session) jobWall(strict bool, cfg *gitrepo.Config) (*sandbox.Wall, error) {
	w := s.wall(strict)
	if cfg == nil {
		return w, nil
	}
	w.Caches = cfg.GetAll("nwdes.sandbox.cache")
	if roots := cfg.GetAll("nwdes.sandbox.root"); len(roots) > 0 {
		for _, r := range roots {
			if !filepath.IsAbs(r) {
				return nil, refusal.New(refusal.PathUnusable, "give nwdes.sandbox.root absolute paths of directories",
					"nwdes.sandbox.root %q is not an absolute path", r)
			}
		}
		w.Roots = append(sandbox.DefaultRoots(w.Path, w.Home), roots...)
	}
	namespaces, err := configBool(cfg, "nwdes.sandbox.namespaces", true)
	if err != nil {
		return nil, err
	}
	w.NoNamespaces = !namespaces
	return w, nil
}

// homeHint is a note for a path the wall refused that lies under a home
// directory, where no default root reaches beyond a PATH directory: the
// configuration that would make it a root. "" for any other path.
func (s *session) homeHint(path string) string {
	if path == "" || !filepath.IsAbs(path) || !(&sandbox.Wall{Home: s.env.Getenv("HOME")}).UnderHome(path) {
		return ""
	}
	return "it lies under a home directory, outside the wall's roots: " + sandbox.RootRemedy(sandbox.SuggestRoot(path, s.env.Getenv("PATH")))
}

// gateStrict says whether gates run strict: yes, unless --best-effort or
// git config nwdes.sandbox.bestEffort says otherwise.
func gateStrict(c *cli.Context, cfg *gitrepo.Config) (bool, error) {
	return wallStrict(c.Bool("best-effort"), cfg)
}

// wallStrict is gateStrict for --best-effort as given.
func wallStrict(bestEffort bool, cfg *gitrepo.Config) (bool, error) {
	if bestEffort {
		return false, nil
	}
	best, err := configBool(cfg, "nwdes.sandbox.bestEffort", false)
	return !best, err
}

// sandboxExitStatus is sandbox run's: the program's code, then the table
// for nwdes's own failures (SandboxUnavailable with --strict is 4). Both
// share numbers; --json's "end" tells them apart.
func sandboxExitStatus() string {
	return exitStatus(passesThrough(`the program's own exit code when it exited (also when the wall refused it
something: see "end" in --json, which also tells it from nwdes's own);
128+n when signal n ended it; 124 at the deadline; 127 when it could not
start; 125 when processes survived the reaping (a failure of the wall)`))
}

func (s *session) sandboxCmd() *cli.Command {
	return &cli.Command{
		Name:  "sandbox",
		Usage: "run a program inside the wall that gates, probes and workers run in",
		Description: `The wall is how nwdes runs every program it did not write. The program
sees a filesystem view of its own: its read set and the OS and toolchain
roots read-only, its write set read-write, nothing else (no home, no
/run, no host sockets); Landlock keeps writes inside the write set and
reads inside the read set on top of that. A seccomp filter refuses
keyrings, user namespaces and io_uring, and with --no-network every
socket but a UNIX one, in an empty network namespace. The program runs as
the child of a helper that is the init of its own pid namespace, with a
private /proc, no capabilities, no new privileges, resource limits and a
pids cgroup; the supervisor holds the deadline.
See docs/sandbox.md for what is enforced on which kernel.

EXAMPLES
   git nwdes sandbox run --write "$PWD/out" --no-network -- make test
   git nwdes sandbox run --json --deadline 30s -- ./hostile.sh
` + sandboxExitStatus(),
		Subcommands: []*cli.Command{s.sandboxRunCmd()},
	}
}

// sandboxRunOptions are sandbox run's flags and command line.
type sandboxRunOptions struct {
	Args            []string // CMD [ARGS…]
	Write, Read     []string
	Roots           []string
	NoNetwork       bool
	Deadline, Grace time.Duration
	Env             []string
	Limits          []string // NAME=VALUE
	Dir             string
	Strict          bool
	JSON            bool
}

func (s *session) sandboxRunCmd() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "run one program inside the wall and report how it ended",
		UsageText: "git nwdes sandbox run [--write DIR]… [--read DIR]… [--no-network] [--deadline D] [--grace D] [--env NAME]… [--limit NAME=VALUE]… [--root DIR]… [--dir DIR] [--strict] [--json] -- CMD [ARGS…]",
		Description: `Runs CMD in a fresh job directory (its HOME and TMPDIR are inside it) with:
--write DIR  a directory it may also write (repeatable)
--read DIR   a directory it may also read (repeatable)
--root DIR   replaces the default OS and toolchain roots (repeatable)
--env NAME   a variable of yours it receives; nothing else passes but
             PATH, LANG, HOME and TMPDIR, and no value is ever printed
--limit      cpu=SECONDS, as=BYTES, nofile=N, fsize=BYTES, nproc=N
             (sizes take K, M, G; "unlimited" lifts one)
--dir DIR    its working directory (default: the first --write, else the
             job's own work directory)
At the deadline the job gets TERM and CONT, then KILL after --grace.
Without --strict the wall runs with what the kernel can enforce and says
on stderr what it could not; with --strict it refuses instead
(SandboxUnavailable). With --json the program's output goes to stderr and
stdout holds one object: end (exit, signal, deadline, wall,
start-failed), exit_code, signal, survivors, duration_ms, wall (the path
the kernel refused and the last STEP <n> line), and enforced (Landlock
ABI, network mechanisms, process containment, limits, and what is
missing).

EXAMPLES
   git nwdes sandbox run -- sh -c 'echo hi > /etc/x'
   git nwdes sandbox run --strict --no-network --write "$PWD" --json -- go test ./...
` + sandboxExitStatus(),
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "write", Usage: "a `DIR` the program may write"},
			&cli.StringSliceFlag{Name: "read", Usage: "a `DIR` the program may read"},
			&cli.StringSliceFlag{Name: "root", Usage: "an OS or toolchain `DIR` (replaces the defaults)"},
			&cli.BoolFlag{Name: "no-network", Usage: "deny every socket but a UNIX one"},
			durationFlag("deadline", "end the program after `D`", sandbox.DefaultDeadline),
			durationFlag("grace", "time between TERM and KILL at the deadline", sandbox.DefaultGrace),
			&cli.StringSliceFlag{Name: "env", Usage: "a variable `NAME` passed to the program"},
			&cli.StringSliceFlag{Name: "limit", Usage: "a resource limit `NAME=VALUE`"},
			&cli.StringFlag{Name: "dir", Usage: "the program's working `DIR`"},
			&cli.BoolFlag{Name: "strict", Usage: "refuse to run what the kernel cannot wall in"},
			jsonFlag(),
		},
		Action: func(c *cli.Context) error {
			o := sandboxRunOptions{Args: c.Args().Slice(), Write: c.StringSlice("write"), Read: c.StringSlice("read"), Roots: c.StringSlice("root"),
				NoNetwork: c.Bool("no-network"), Deadline: c.Duration("deadline"), Grace: c.Duration("grace"), Env: c.StringSlice("env"),
				Limits: c.StringSlice("limit"), Dir: c.String("dir"), Strict: c.Bool("strict")}
			o.JSON = s.wantJSON(c)
			return s.sandboxRun(c.Context, o)
		},
	}
}

func (s *session) sandboxRun(ctx context.Context, o sandboxRunOptions) error {
	if len(o.Args) == 0 {
		return usagef("a program to run is required after --")
	}
	if o.Deadline <= 0 || o.Grace <= 0 {
		return usagef("--deadline and --grace must be positive")
	}
	abs := func(ps []string) []string {
		out := make([]string, len(ps))
		for i, p := range ps {
			if !filepath.IsAbs(p) {
				p = filepath.Join(s.dir, p)
			}
			out[i] = p
		}
		return out
	}
	limits, err := parseLimits(o.Limits)
	if err != nil {
		return err
	}
	w := s.wall(o.Strict)
	w.Grace, w.Limits = o.Grace, limits
	if len(o.Roots) > 0 {
		w.Roots = abs(o.Roots)
	}
	cmd := sandbox.Command{
		Args: o.Args, Write: abs(o.Write), Read: abs(o.Read),
		Env: o.Env, NoNetwork: o.NoNetwork, Deadline: o.Deadline,
		Stdout: s.env.Stdout, Stderr: s.env.Stderr,
	}
	if o.JSON {
		cmd.Stdout = s.env.Stderr
	}
	switch {
	case o.Dir != "":
		cmd.Dir = abs([]string{o.Dir})[0]
	case len(cmd.Write) > 0:
		cmd.Dir = cmd.Write[0]
	}
	res, err := w.Run(ctx, cmd)
	if err != nil {
		return err
	}
	if o.JSON {
		writeJSON(s.env.Stdout, sandboxReport(res))
	} else {
		for _, line := range s.sandboxNotes(res) {
			fmt.Fprintf(s.env.Stderr, "nwdes sandbox: %s\n", line)
		}
	}
	return &passthrough{code: exitCodeOf(res)}
}

// sandboxReport is the --json object of sandbox run.
func sandboxReport(r sandbox.Result) map[string]any {
	return map[string]any{
		"end": r.End, "exit_code": r.ExitCode, "signal": r.Signal, "survivors": r.Survivors,
		"duration_ms": r.Duration.Milliseconds(), "deadline_ms": r.Deadline.Milliseconds(),
		"wall": r.Refused, "step": r.Step, "start_error": r.Err, "output_cut": r.OutputCut,
		"stdout":   map[string]any{"bytes": r.Stdout.Bytes, "sha256": r.Stdout.SHA256},
		"stderr":   map[string]any{"bytes": r.Stderr.Bytes, "sha256": r.Stderr.SHA256},
		"enforced": r.Enforced,
	}
}

// sandboxNotes are the lines a person needs after a run that did not
// simply exit.
func (s *session) sandboxNotes(r sandbox.Result) []string {
	var out []string
	switch r.End {
	case sandbox.EndDeadline:
		out = append(out, fmt.Sprintf("ended at its deadline of %s", r.Deadline))
	case sandbox.EndWall:
		line := "the wall refused " + r.Refused.Path
		if r.Refused.Step != "" {
			line += " at STEP " + r.Refused.Step
		}
		out = append(out, line)
		if h := s.homeHint(r.Refused.Path); h != "" {
			out = append(out, h)
		}
	case sandbox.EndStartFailed:
		out = append(out, "did not start: "+r.Err)
	}
	if r.Survivors > 0 {
		out = append(out, fmt.Sprintf("%d processes survived the reaping", r.Survivors))
	}
	if len(r.Enforced.Missing) > 0 {
		out = append(out, "not enforced: "+strings.Join(r.Enforced.Missing, "; "))
	}
	return out
}

// exitCodeOf is sandbox run's exit code for a result, as a shell would
// report it.
func exitCodeOf(r sandbox.Result) int {
	switch {
	case r.Survivors > 0:
		return 125
	case r.End == sandbox.EndDeadline:
		return 124
	case r.End == sandbox.EndStartFailed:
		return 127
	case r.Signal != "":
		if n := unix.SignalNum(r.Signal); n != 0 {
			return 128 + int(n)
		}
		return 128
	case r.ExitCode >= 0:
		return r.ExitCode
	}
	return 1
}

// parseLimits reads --limit NAME=VALUE flags.
func parseLimits(flags []string) (sandbox.Limits, error) {
	var l sandbox.Limits
	for _, f := range flags {
		name, val, ok := strings.Cut(f, "=")
		var dst *uint64
		switch name {
		case "cpu":
			dst = &l.CPUSeconds
		case "as":
			dst = &l.AddressSpace
		case "nofile":
			dst = &l.OpenFiles
		case "fsize":
			dst = &l.FileSize
		case "nproc":
			dst = &l.Processes
		}
		if !ok || dst == nil {
			return l, usagef("--limit %q: want cpu=, as=, nofile=, fsize= or nproc= with a value", f)
		}
		n, err := parseSize(val)
		if err != nil || n == 0 {
			return l, usagef("--limit %q: %q is not a positive number, a size with K, M or G, or unlimited", f, val)
		}
		*dst = n
	}
	return l, nil
}

func parseSize(v string) (uint64, error) {
	if v == "unlimited" {
		return sandbox.Unlimited, nil
	}
	mult := uint64(1)
	switch {
	case strings.HasSuffix(v, "K"):
		mult, v = 1<<10, strings.TrimSuffix(v, "K")
	case strings.HasSuffix(v, "M"):
		mult, v = 1<<20, strings.TrimSuffix(v, "M")
	case strings.HasSuffix(v, "G"):
		mult, v = 1<<30, strings.TrimSuffix(v, "G")
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil || n > sandbox.Unlimited/mult {
		return 0, fmt.Errorf("not a size")
	}
	return n * mult, nil
}
