package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/internal/boundedio"
	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/refusal"
)

func (s *session) contractCmd() *cli.Command {
	return &cli.Command{
		Name:  "contract",
		Usage: "write and check feature contracts in the work tree, before they are committed",
		Description: `EXAMPLES
   git nwdes contract new greeting
   git nwdes contract check
` + exitStatusAll(),
		Subcommands: []*cli.Command{s.contractCheckCmd(), s.contractNewCmd()},
	}
}

// workTree is the directory contract paths are taken from: the work tree
// of the repository the command runs in, else the current directory.
func (s *session) workTree() string {
	if loc, err := gitrepo.Discover(s.dir, s.env.Getenv); err == nil && loc.WorkTree != "" {
		return loc.WorkTree
	}
	return s.dir
}

// contractCheckOptions are contract check's flags and PATHs.
type contractCheckOptions struct {
	Feature string
	Paths   []string
}

func (s *session) contractCheckCmd() *cli.Command {
	return &cli.Command{
		Name:      "check",
		Usage:     "lint contracts in the work tree, reporting every problem at once",
		UsageText: "git nwdes contract check [--feature F] [PATH…]",
		Description: `Reads contracts from the work tree (not from a commit): the PATHs given,
else .nwave/features/<F>.md with --feature, else every file in
.nwave/features. Prints every problem as file:line: what is wrong, in one
run, and what gate run, status and the hook would refuse about the files
themselves (names, symbolic links, look-alikes). Nothing is written.

EXAMPLES
   git nwdes contract check
   git nwdes contract check --feature greeting
   git nwdes contract check docs/draft-contract.md
` + exitStatus(judges("some contract has problems, each printed")),
		Flags: []cli.Flag{&cli.StringFlag{Name: "feature", Usage: "check .nwave/features/`NAME`.md"}},
		Action: func(c *cli.Context) error {
			return s.contractCheck(contractCheckOptions{Feature: c.String("feature"), Paths: c.Args().Slice()})
		},
	}
}

func (s *session) contractCheck(o contractCheckOptions) error {
	root := s.workTree()
	paths, problems, err := s.contractPaths(root, o)
	if err != nil {
		return err
	}
	problems = append(problems, contractProblems(root, paths)...)
	for _, p := range problems {
		fmt.Fprintln(s.env.Stdout, text.TerminalLine(p))
	}
	fmt.Fprintf(s.env.Stdout, "checked %s: %s\n", text.Plural(len(paths), "contract", "contracts"), text.Plural(len(problems), "problem", "problems"))
	if len(problems) > 0 {
		return negative("contracts have problems")
	}
	return nil
}

// contractPaths are the work-tree files contract check reads: the PATHs
// given, else --feature's contract, else every file in .nwave/features
// (sorted), with the problems of the names found there (a directory, a
// symbolic link, a look-alike name).
func (s *session) contractPaths(root string, o contractCheckOptions) (paths, problems []string, err error) {
	switch {
	case len(o.Paths) > 0:
		for _, p := range o.Paths {
			if !filepath.IsAbs(p) {
				p = filepath.Join(s.dir, p)
			}
			paths = append(paths, p)
		}
	case o.Feature != "":
		if err := examine.ValidFeature(o.Feature); err != nil {
			return nil, nil, err
		}
		paths = append(paths, filepath.Join(root, filepath.FromSlash(examine.DefaultContractPath(o.Feature))))
	default:
		dir := filepath.Join(root, ".nwave", "features")
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil, nil, refusal.New(refusal.MissingFact, "write one with git nwdes contract new FEATURE", "no contracts in %s: %v", dir, err)
		}
		for _, e := range ents {
			fi, err := os.Lstat(filepath.Join(dir, e.Name()))
			if err != nil {
				continue
			}
			mode := uint32(gitstore.ModeFile)
			switch {
			case fi.IsDir():
				mode = gitstore.ModeTree
			case fi.Mode()&os.ModeSymlink != 0:
				mode = gitstore.ModeSymlink
			}
			if p := examine.FeatureFileProblem(e.Name(), mode); p != "" {
				problems = append(problems, fmt.Sprintf(".nwave/features/%s %s", e.Name(), p))
				continue
			}
			paths = append(paths, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(paths)
	return paths, problems, nil
}

// contractProblems reads each contract file (bounded) and lists what
// examine.ContractProblems finds in it, or why it could not be read.
func contractProblems(root string, paths []string) []string {
	var problems []string
	for _, p := range paths {
		rel, err := filepath.Rel(root, p)
		if err != nil || strings.HasPrefix(rel, "..") {
			rel = p
		}
		f, err := boundedio.Open(p)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: cannot be read: %v", rel, err))
			continue
		}
		b, err := io.ReadAll(io.LimitReader(f, examine.MaxContractBytes+1))
		f.Close()
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: cannot be read: %v", rel, err))
			continue
		}
		for _, perr := range examine.ContractProblems(filepath.ToSlash(rel), b) {
			if r, ok := refusal.As(perr); ok {
				problems = append(problems, r.Detail)
			} else {
				problems = append(problems, perr.Error())
			}
		}
	}
	return problems
}

const contractSkeleton = `# REQUEST
What was asked, in the asker's words: the behaviour a user will see.

# ACCEPTANCE CRITERIA
E1. one observable behaviour, stated so a user could check it
  CHECK: a shell command, run in the committed tree inside the wall
  EXPECT: a marker its standard output must contain
E2. a behaviour the examiner judges from public evidence (no oracle)

# FILE SCOPE
.nwave/features/%s.md
`

func (s *session) contractNewCmd() *cli.Command {
	return &cli.Command{
		Name:      "new",
		Usage:     "write a contract skeleton at .nwave/features/<FEATURE>.md",
		UsageText: "git nwdes contract new FEATURE",
		Description: `Writes a skeleton with every section and one criterion with an oracle and
one without, to edit and then check with git nwdes contract check. An
existing file is never overwritten.

EXAMPLES
   git nwdes contract new greeting
` + exitStatus(),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("name one feature: git nwdes contract new FEATURE")
			}
			return s.contractNew(c.Args().First())
		},
	}
}

// contractNew writes feature f's contract skeleton, never over a file.
func (s *session) contractNew(f string) error {
	if err := examine.ValidFeature(f); err != nil {
		return err
	}
	p := filepath.Join(s.workTree(), filepath.FromSlash(examine.DefaultContractPath(f)))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if os.IsExist(err) {
		return refusal.New(refusal.ContractExists, "edit it, or check it with git nwdes contract check --feature "+f, "%s already exists", examine.DefaultContractPath(f))
	}
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(out, contractSkeleton, f); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	fmt.Fprintf(s.env.Stdout, "wrote %s: edit it, then git nwdes contract check --feature %s\n", examine.DefaultContractPath(f), f)
	return nil
}
