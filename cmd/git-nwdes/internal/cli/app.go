package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/refusal"
	"github.com/nwdes/nwdes/sandbox"
)

// Set at build time by the Makefile (-ldflags -X).
var (
	version = "dev"
	commit  = ""
)

// session carries what one run of the command shares between its verbs.
type session struct {
	env   Env
	style style
	dir   string // after -C
	json  bool   // set by a verb's --json, for refusal rendering

	cfg    *gitrepo.Config // git configuration, read once (see config)
	cfgLoc gitrepo.Location

	hooked *gitstore.Store // the store a hook reads (see hookStore)
}

// Main runs the command with args (args[0] is the program name) and returns
// the exit code. It never calls os.Exit.
func Main(ctx context.Context, args []string, env Env) int {
	if sandbox.IsHelper(args) {
		// This process is the wall's helper, not a command line.
		return sandbox.HelperMain()
	}
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	return run(ctx, args, env, invokedVerb(args))
}

// run runs args with an app that has only the verb v, or every verb when v
// is nil. Tests run the same arguments both ways to hold them equal.
func run(ctx context.Context, args []string, env Env, v *verb) int {
	s := &session{env: env, style: newStyle(env), dir: env.Dir}
	app := s.app(v)
	err := app.RunContext(ctx, args)
	return report(err, ctx.Err() != nil, env.Stdout, env.Stderr, s.json, s.style)
}

// app is the command line with every verb (v nil) or with v alone.
// Building every verb's command, flags and help was a tenth of the CPU
// time of a start (perf, issue 26), and a run that names its verb
// needs no other: its help, flags and sub-verbs are all in its own
// subtree. The top level's help, an unknown verb's nearest name and
// completion need them all, and get them.
func (s *session) app(v *verb) *cli.App {
	var cmds []*cli.Command
	description := ""
	if v != nil {
		cmds = []*cli.Command{v.build(s)}
	} else {
		cmds = s.commands()
		description = `nwdes keeps contracts, observations, verdicts and gate evidence as git
objects under refs/nwdes/ and refs/notes/nwdes, moved only by compare-and-swap.

EXAMPLES
   git nwdes version
   git nwdes -C ../candidate fsck --json
` + exitStatusAll()
	}
	app := &cli.App{
		Name:        "git nwdes",
		HelpName:    "git nwdes",
		Usage:       "decide with evidence whether a candidate commit does what was asked",
		UsageText:   "git nwdes [-C <path>] <verb> [options]",
		Description: description,
		Reader:      s.env.Stdin,
		Writer:      s.env.Stdout,
		ErrWriter:   s.env.Stderr,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "C", Usage: "run as if started in `path`"},
		},
		Before: func(c *cli.Context) error {
			if p := c.String("C"); p != "" {
				if !filepath.IsAbs(p) {
					p = filepath.Join(s.dir, p)
				}
				s.dir = p
			}
			return nil
		},
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return &usageError{err}
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return unknownVerb("git nwdes", c.Args().First(), c.App.Commands)
			}
			c.App.Writer = s.env.Stderr
			cli.ShowAppHelp(c)
			return usagef("a verb is required")
		},
		Commands:             cmds,
		EnableBashCompletion: true,
		HideHelpCommand:      false,
	}
	for _, cmd := range app.Commands {
		setUsageErrors(cmd)
		guideGroups("git nwdes", cmd, s)
	}
	// With a help verb of its own, urfave/cli adds no -h to the top level.
	app.Commands = append(app.Commands, helpCmd(nil, app.Commands))
	app.Flags = append(app.Flags, cli.HelpFlag)
	// The version alone: buildInfo's commit is for the version verb, and
	// reading the build information parses the module list at every start.
	app.Version = version
	app.HideVersion = false
	// Any time but the zero one spares urfave/cli a stat of os.Args[0] at
	// every start; nothing nwdes prints shows it.
	app.Compiled = time.Unix(0, 0)
	return app
}

// setUsageErrors makes every flag mistake a usage error (exit 2, two lines
// on stderr). Required flags are checked here rather than by urfave/cli,
// which would also print the whole help on stdout.
func setUsageErrors(cmd *cli.Command) {
	cmd.OnUsageError = func(_ *cli.Context, err error, _ bool) error {
		if bad := badFlagValue(cmd.Flags); bad != nil {
			return &usageError{bad}
		}
		return &usageError{err}
	}
	var required []string
	for _, f := range cmd.Flags {
		if sf, ok := f.(*cli.StringFlag); ok && sf.Required {
			sf.Required = false
			required = append(required, sf.Name)
		}
	}
	if len(required) > 0 {
		before := cmd.Before
		cmd.Before = func(c *cli.Context) error {
			// Every missing flag in one refusal, not one per try.
			var missing []string
			for _, name := range required {
				if !c.IsSet(name) {
					missing = append(missing, "--"+name)
				}
			}
			switch len(missing) {
			case 0:
			case 1:
				return usagef("required flag %s is missing", missing[0])
			default:
				return usagef("required flags %s are missing", strings.Join(missing, ", "))
			}
			if before != nil {
				return before(c)
			}
			return nil
		}
	}
	for _, sub := range cmd.Subcommands {
		setUsageErrors(sub)
	}
}

// verb is a top-level verb: its name, and how to build its command.
type verb struct {
	name  string
	build func(*session) *cli.Command
}

// verbs are the top-level verbs in the order help lists them (man last:
// it is hidden). TestVerbsAreNamedAsTheyBuild holds each name to its
// command's.
var verbs = []verb{
	{"examine", (*session).examineCmd},
	{"fsck", (*session).fsckCmd},
	{"gate", (*session).gateCmd},
	{"verify", (*session).verifyCmd},
	{"hooks", (*session).hooksCmd},
	{"hook", (*session).hookCmd},
	{"status", (*session).statusCmd},
	{"features", (*session).featuresCmd},
	{"contract", (*session).contractCmd},
	{"export", (*session).exportCmd},
	{"remote", (*session).remoteCmd},
	{"fetch", func(s *session) *cli.Command { return s.syncCmd("fetch") }},
	{"push", func(s *session) *cli.Command { return s.syncCmd("push") }},
	{"trust", (*session).trustCmd},
	{"sandbox", (*session).sandboxCmd},
	{"swarm", (*session).swarmCmd},
	{"ledger", (*session).ledgerCmd},
	{"trace", (*session).traceCmd},
	{"trial", (*session).trialCmd},
	{"notes", (*session).notesCmd},
	{"completion", (*session).completionCmd},
	{"version", (*session).versionCmd},
	{"man", (*session).manCmd},
}

// commands builds every verb.
func (s *session) commands() []*cli.Command {
	cmds := make([]*cli.Command, len(verbs))
	for i, v := range verbs {
		cmds[i] = v.build(s)
	}
	return cmds
}

// invokedVerb is the verb args run, or nil when the run needs every verb:
// no verb, a verb that does not exist, help (the verb or a flag before the
// verb) and completion. Only -C may come before the verb; any other flag
// there is left to the whole app to parse or refuse.
func invokedVerb(args []string) *verb {
	for _, a := range args {
		if a == "--generate-bash-completion" {
			return nil
		}
	}
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-C" || a == "--C":
			i++
		case strings.HasPrefix(a, "-C=") || strings.HasPrefix(a, "--C="):
		case strings.HasPrefix(a, "-"):
			return nil
		default:
			for j := range verbs {
				if verbs[j].name == a {
					return &verbs[j]
				}
			}
			return nil
		}
	}
	return nil
}

func (s *session) manCmd() *cli.Command {
	return &cli.Command{
		Name:   "man",
		Hidden: true,
		Usage:  "print the man page (used by make install)",
		Action: func(c *cli.Context) error {
			_, err := fmt.Fprint(s.env.Stdout, manPage)
			return err
		},
	}
}

// open finds and opens the repository the command runs in.
func (s *session) open() (*gitstore.Store, error) {
	loc, err := gitrepo.Discover(s.dir, s.env.Getenv)
	if err != nil {
		return nil, err
	}
	return s.openAt(loc)
}

// openAt opens the store of a repository already found, tuned by git config.
func (s *session) openAt(loc gitrepo.Location) (*gitstore.Store, error) {
	cfg, err := s.config(loc)
	if err != nil {
		return nil, err
	}
	opts, err := storeOptions(cfg, s.env.Now)
	if err != nil {
		return nil, err
	}
	opts.Config = cfg
	if remotes := cfg.PromisorRemotes(); len(remotes) > 0 {
		// A partial clone: reads ask the promisor remotes for what the
		// filter left out, as git's do.
		opts.PartialClone = gitstore.PartialClone{Remotes: remotes, Environ: s.syncOptions().Environ}
	}
	return gitstore.Open(loc, opts)
}

// hookStore opens the store of loc once per run: a pre-push hook's check,
// the records it sends and its reminder read the same repository, and
// each open reads the store's options and declares its registry again.
func (s *session) hookStore(loc gitrepo.Location) (*gitstore.Store, error) {
	if h := s.hooked; h != nil && h.Location().GitDir == loc.GitDir && h.Location().CommonDir == loc.CommonDir && h.Location().ObjectDir == loc.ObjectDir {
		return h, nil
	}
	st, err := s.openAt(loc)
	if err != nil {
		return nil, err
	}
	s.hooked = st
	return st, nil
}

// config reads the git configuration of loc once per run: the hook needs
// it for its settings and for the store, and pays for every read.
func (s *session) config(loc gitrepo.Location) (*gitrepo.Config, error) {
	if s.cfg == nil || s.cfgLoc.GitDir != loc.GitDir || s.cfgLoc.CommonDir != loc.CommonDir {
		cfg, err := gitrepo.ReadConfig(loc, s.env.Getenv)
		if err != nil {
			return nil, err
		}
		s.cfg, s.cfgLoc = cfg, loc
	}
	return s.cfg, nil
}

func (s *session) versionCmd() *cli.Command {
	return &cli.Command{
		Name:      "version",
		Usage:     "print the version and the commit it was built from",
		UsageText: "git nwdes version [--json]",
		Description: `EXAMPLES
   git nwdes version
` + exitStatus(),
		Flags: []cli.Flag{jsonFlag()},
		Action: func(c *cli.Context) error {
			v, rev := buildInfo()
			if s.wantJSON(c) {
				return writeJSON(s.env.Stdout, map[string]string{"version": v, "commit": rev})
			}
			fmt.Fprintf(s.env.Stdout, "git-nwdes %s (commit %s)\n", v, rev)
			return nil
		},
	}
}

func buildInfo() (string, string) {
	v, rev := version, commit
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, st := range bi.Settings {
			if st.Key == "vcs.revision" && rev == "" {
				rev = st.Value
			}
			if st.Key == "vcs.modified" && st.Value == "true" && rev != "" && !strings.HasSuffix(rev, "-dirty") {
				rev += "-dirty"
			}
		}
	}
	if rev == "" {
		rev = "unknown"
	}
	return v, rev
}

func jsonFlag() cli.Flag {
	return &cli.BoolFlag{Name: "json", Usage: "print one JSON document on stdout"}
}

func (s *session) wantJSON(c *cli.Context) bool {
	s.json = c.Bool("json")
	return s.json
}

func (s *session) fsckCmd() *cli.Command {
	return &cli.Command{
		Name:      "fsck",
		Usage:     "re-read and re-validate every nwdes ref, record and note",
		UsageText: "git nwdes fsck [--json]",
		Description: `Walks every ref under refs/nwdes/ and refs/notes/nwdes: every commit of
each chain, every tree and blob they reach, every record (canonical JSON of
a known kind and version) and every note. With git config
nwdes.displayRef set, also each display note's nwdes block against the
records, and each judged commit that has no display note. Names each
problem found.

EXAMPLES
   git nwdes fsck
   git nwdes fsck --json | jq '.problems[]'
` + exitStatus(judges("problems found, each named")),
		Flags:  []cli.Flag{jsonFlag()},
		Action: func(c *cli.Context) error { return s.fsck(s.wantJSON(c)) },
	}
}

// fsck checks the store and, with nwdes.displayRef set, the display
// notes against the records.
func (s *session) fsck(asJSON bool) error {
	s.wholeReadGC()
	st, err := s.open()
	if err != nil {
		return err
	}
	rep, err := st.Fsck()
	if err != nil {
		return err
	}
	if ref := s.displayRef(); ref != "" {
		gaps, err := examine.DisplayGaps(st, ref)
		if err != nil {
			return err
		}
		rep.Problems = append(rep.Problems, gaps...)
	}
	if asJSON {
		writeJSON(s.env.Stdout, rep)
	} else {
		for _, p := range rep.Problems {
			fmt.Fprintf(s.env.Stdout, "problem: %s\n", text.TerminalLine(p.String()))
		}
		fmt.Fprintf(s.env.Stdout, "checked %d refs, %d commits, %d records, %d notes: %d problems\n",
			rep.Refs, rep.Commits, rep.Records, rep.Notes, len(rep.Problems))
	}
	if !rep.OK() {
		return negative("fsck found problems")
	}
	return nil
}

// guideGroups makes a verb group (gate, examine …) answer a mistyped
// sub-verb with UnknownVerb and the nearest one, and a bare group with its
// help on stderr and a usage error, as the top level does.
func guideGroups(path string, cmd *cli.Command, s *session) {
	if len(cmd.Subcommands) == 0 {
		return
	}
	full := path + " " + cmd.Name
	cmd.Action = func(c *cli.Context) error {
		if c.NArg() > 0 {
			return unknownVerb(full, c.Args().First(), cmd.Subcommands)
		}
		var b strings.Builder
		w := c.App.Writer
		c.App.Writer = &b
		cli.ShowSubcommandHelp(c)
		c.App.Writer = w
		fmt.Fprint(s.env.Stderr, b.String())
		return usagef("%s needs a verb: %s", full, strings.Join(verbNames(cmd.Subcommands), ", "))
	}
	for _, sub := range cmd.Subcommands {
		guideGroups(full, sub, s)
	}
	cmd.Subcommands = append(cmd.Subcommands, helpCmd(strings.Fields(strings.TrimPrefix(full, "git nwdes ")), cmd.Subcommands))
}

// helpCmd is the help verb of the top level (path nil) or of a verb group:
// "git nwdes help gate run" prints what "git nwdes gate run -h" prints,
// and a verb that does not exist is refused UnknownVerb, naming the
// nearest. (urfave/cli's own help verb looks up one name only, so it
// showed the group's help for "help gate run".)
func helpCmd(path []string, verbs []*cli.Command) *cli.Command {
	return &cli.Command{
		Name:      "help",
		Aliases:   []string{"h"},
		Usage:     "show a verb's help, as -h does",
		ArgsUsage: "[verb [sub-verb…]]",
		Action: func(c *cli.Context) error {
			at, cmds := append([]string(nil), path...), verbs
			for _, name := range c.Args().Slice() {
				var next *cli.Command
				for _, cmd := range cmds {
					if cmd.HasName(name) && cmd.Name != "help" {
						next = cmd
					}
				}
				if next == nil {
					return unknownVerb(strings.Join(append([]string{"git nwdes"}, at...), " "), name, cmds)
				}
				at, cmds = append(at, next.Name), next.Subcommands
			}
			if len(at) == 0 {
				return cli.ShowAppHelp(c)
			}
			return c.App.RunContext(c.Context, append(append([]string{c.App.Name}, at...), "-h"))
		},
	}
}

func verbNames(cmds []*cli.Command) []string {
	var out []string
	for _, c := range cmds {
		if !c.Hidden && c.Name != "help" {
			out = append(out, c.Name)
		}
	}
	return out
}

// unknownVerb is the refusal for a verb that does not exist, naming the
// nearest one that does.
func unknownVerb(path, got string, cmds []*cli.Command) error {
	names := verbNames(cmds)
	remedy := fmt.Sprintf("the verbs of %s are: %s (%s -h)", path, strings.Join(names, ", "), path)
	if near := text.Nearest(got, names); near != "" {
		remedy = fmt.Sprintf("did you mean %s %s? (%s -h lists the verbs)", path, near, path)
	}
	return refusal.New(refusal.UnknownVerb, remedy, "%s has no verb %q", path, got)
}
