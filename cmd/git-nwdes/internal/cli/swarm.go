package cli

import (
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/internal/boundedio"
	"github.com/nwdes/nwdes/sandbox"
	"github.com/nwdes/nwdes/swarm"
)

func (s *session) swarmCmd() *cli.Command {
	return &cli.Command{
		Name:  "swarm",
		Usage: "run queued cards with one-task workers, coordinated by leases in git refs",
		Description: `A card is a task: line 1 is its contract line RESULT: <label> sha=<sha12>,
then headers (BASE: <commit>, DEADLINE:, PATHS:, DEPENDS-ON:, TEST:,
BUDGET:), then the task; the whole
card is the worker's prompt. A worker description says which harness runs
it. Supervisors take a lease on a card by compare-and-swap (in this
repository, or with --remote on a git remote that many machines share),
run the harness inside the wall in a job directory of its own, and record
how it ended. See docs/swarm.md.

EXAMPLES
   git nwdes swarm worker check worker.json
   git nwdes swarm card check cards/fix-typo.md
   git nwdes swarm add --card cards/fix-typo.md
   git nwdes swarm run --worker worker.json --workers 2
   git nwdes swarm status
` + exitStatusAll(),
		Subcommands: []*cli.Command{
			s.swarmCardCmd(),
			s.swarmReworkCmd(),
			s.swarmLandCmd(),
			s.swarmWorkerCmd(),
			s.swarmAddCmd(),
			s.swarmRunCmd(),
			s.swarmStatusCmd(),
			s.swarmLeasesCmd(),
			s.swarmReleaseCmd(),
			s.swarmReapCmd(),
			s.swarmStopCmd(),
			s.swarmResumeCmd(),
			s.swarmRequeueCmd(),
			s.swarmShowCmd(),
			s.swarmDropCmd(),
		},
	}
}

// swarmRemoteFlag is --remote of the verbs that read or keep leases.
func swarmRemoteFlag() cli.Flag {
	return &cli.StringFlag{Name: "remote", Usage: "keep leases on git remote `NAME` (atomic push with the expected old value)"}
}

// oneLabel is the verb's one argument, a card label.
func oneLabel(c *cli.Context) (string, error) {
	if c.NArg() != 1 {
		return "", usagef("give one card LABEL, after the flags")
	}
	return c.Args().First(), nil
}

func cardOrAll(c *cli.Context) (string, error) {
	switch {
	case c.IsSet("card") == c.Bool("all"):
		return "", usagef("give exactly one of --card LABEL and --all")
	case c.Bool("all"):
		return "all", nil
	}
	return c.String("card"), nil
}

func (s *session) now() time.Time {
	if s.env.Now != nil {
		return s.env.Now()
	}
	return time.Now()
}

// owner names who queued or stops: git's user.email, else the user.
func (s *session) owner() string {
	if s.cfg != nil {
		if v, _ := s.cfg.Get("user.email"); v != "" {
			return v
		}
	}
	if u := s.env.Getenv("USER"); u != "" {
		return u
	}
	return "unknown"
}

// readFileArg reads a file argument (relative to -C), or stdin for "-",
// through boundedio: a regular file only, at most lim.
func (s *session) readFileArg(p string, lim boundedio.Limit) ([]byte, error) {
	if p == "-" {
		return boundedio.ReadAll(s.env.Stdin, "stdin", lim)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(s.dir, p)
	}
	return boundedio.ReadFile(p, lim)
}

func (s *session) readWorker(p string) (*swarm.Worker, error) {
	b, err := s.readFileArg(p, workerLimit)
	if err != nil {
		return nil, err
	}
	return swarm.ParseWorker(b)
}

// book keeps the leases in this repository, or on the git remote named.
func (s *session) book(st *gitstore.Store, remote string) swarm.Book {
	if remote != "" {
		return &swarm.Remote{Store: st, Name: remote, Sync: s.syncOptions()}
	}
	return &swarm.Local{Store: st}
}

// leaseQuery reads the leases of this repository, or of the git remote
// named, as this process at this time. A one-shot reader has watched no
// heartbeat stay unchanged, so no stale window is given.
func (s *session) leaseQuery(st *gitstore.Store, remote string) (swarm.LeaseQuery, error) {
	me, err := swarm.Self(s.owner())
	if err != nil {
		return swarm.LeaseQuery{}, err
	}
	return swarm.LeaseQuery{Store: st, Book: s.book(st, remote), Remote: remote, Sync: s.syncOptions(), Here: me, Now: s.now()}, nil
}

func (s *session) supervisor(c *cli.Context, st *gitstore.Store, w *swarm.Worker, strict bool) (*swarm.Supervisor, error) {
	book := s.book(st, c.String("remote"))
	me, err := swarm.Self(s.owner())
	if err != nil {
		return nil, err
	}
	wall, err := s.jobWall(strict, s.cfg)
	if err != nil {
		return nil, err
	}
	if err := harnessReachable(wall, w); err != nil {
		return nil, err
	}
	if c.Int("attempts") < 1 {
		return nil, usagef("--attempts is at least 1")
	}
	jobs := filepath.Join(st.Location().CommonDir, "nwdes", "swarm", "jobs")
	if r, err := filepath.EvalSymlinks(st.Location().CommonDir); err == nil {
		// The wall walks its write set following no link: name the
		// repository as it is.
		jobs = filepath.Join(r, "nwdes", "swarm", "jobs")
	}
	return &swarm.Supervisor{
		Store: st, Book: book, Remote: c.String("remote"), Sync: s.mergeOptions(st), Wall: wall, Worker: w,
		Workers: c.Int("workers"), Follow: c.Bool("follow"),
		JobsDir: jobs,
		Holder:  me, StaleAfter: c.Duration("stale-after"), Heartbeat: c.Duration("heartbeat"),
		Export: examine.ExportTree, Now: s.env.Now,
		Examining: s.examining(c, st),
		Retry:     swarm.RetryPolicy{Attempts: c.Int("attempts"), LaunchGrace: c.Duration("launch-grace"), Backoff: c.Duration("retry-backoff")},
	}, nil
}

// harnessReachable refuses a harness named by absolute path that no root
// of the wall and none of the worker's read_roots holds: every job would
// end "did not start".
func harnessReachable(wall *sandbox.Wall, w *swarm.Worker) error {
	if !filepath.IsAbs(w.Harness) || wall.Holds(w.Harness, w.ReadRoots) {
		return nil
	}
	return sandbox.OutsideRootsError("harness", w.Harness)
}

// spentText is a reading as status and show print it.
func spentText(sp swarm.Spent) string {
	b := swarm.Budget(sp)
	if t := b.String(); t != "" {
		return t
	}
	return "nothing"
}
