package swarm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/refusal"
)

// An examine card (KIND: examine) asks a worker to examine CANDIDATE
// against FEATURE's contract, as a person does with examine prompt,
// observation add, verdict set and close. Its BASE is its CANDIDATE: the
// card is cut from the commit it examines (line 1's sha= is CANDIDATE's
// first 12), so that everything a card names about "where" names one
// commit. Its job is given the examiner's bundle and a public workspace
// (what examine prompt makes, in the job directory) and nothing of the
// checkout: no repository, no objects. What it records goes into its
// journal (journal.go), which the supervisor replays when the job ends.

// Examining is what a supervisor needs to run examine cards
// (Supervisor.Examining); without it an examine card is skipped, left for
// a supervisor that has it. The CLI passes examine's own workspace and
// examiner: the swarm does not import examine/workspace.
type Examining struct {
	// Prompt makes the examiner's workspace for t inside the job
	// directory job, as examine prompt does for a person
	// (workspace.Prompter with Job and TempDir set to job), and returns
	// the bundle.
	Prompt func(ctx context.Context, t examine.Target, job string) (*ExamineBundle, error)
	// Examiner is the examiner a journal is replayed through, made as
	// examine close makes it here (gates mode, display ref, the key that
	// signs when the repository signs); the replay sets its By and
	// Drafts.
	Examiner func() (*examine.Examiner, error)
}

// ExamineBundle is what Examining.Prompt made: the bundle's text (as
// examine prompt prints it), the workspace, and the paths of the public
// projection it shows (those an observation may cite).
type ExamineBundle struct {
	Text      string
	Workspace string
	Public    []string
}

// examJob is what an examine card's job directory adds to a produce
// card's: the workspace and the paths it shows, and who examines.
type examJob struct {
	Workspace string
	Public    map[string]bool
	By        *examine.ExaminedBy
}

// The fates of a journal (Job.Journal).
const (
	JournalReplayed = "replayed"
	JournalRefused  = "refused"
	JournalNone     = "none"
	JournalIgnored  = "ignored"
)

// examinedBy names the worker of s as the examiner of one job.
func (s *Supervisor) examinedBy(label string, attempt int, nonce string) *examine.ExaminedBy {
	name, email := s.Worker.Ident()
	return &examine.ExaminedBy{Worker: s.Worker.Name, Identity: name + " <" + email + ">", Job: fmt.Sprintf("%s/%d-%s", label, attempt, nonce)}
}

// Producers are the workers the job records name as having made commit:
// each job whose harvested head it is.
func Producers(jobs []Job, commit string) []examine.ExaminedBy {
	var out []examine.ExaminedBy
	for _, j := range jobs {
		if j.Head == commit && commit != "" {
			out = append(out, examine.ExaminedBy{Worker: j.Worker, Identity: j.Identity, Job: fmt.Sprintf("%s/%d-%s", j.Label, j.Attempt, j.Nonce)})
		}
	}
	return out
}

// ownWork asks examine's rule that nobody certifies their own work
// whether by may examine c's candidate, with what the job records know
// of who produced it: a DutyNotSeparated refusal when it may not. A
// candidate swarm land made by rebasing is nwdes's commit, but its change
// is still its producer's: the rule is asked of it and of each earlier
// candidate the landing records say it was rebased from, back to the
// harvested head, so that the worker who made that head cannot certify
// that its work still holds, and nobody else is refused for the commit's
// author being nwdes.
func ownWork(st *gitstore.Store, jobs []Job, c *Card, by *examine.ExaminedBy) error {
	landings, err := Landings(st, "")
	if err != nil {
		return err
	}
	for _, commit := range rebasedFrom(c.Candidate, landings) {
		cand, err := oid.Parse(commit)
		if err != nil {
			return err
		}
		problem, err := examine.OwnWork(st, cand, c.Feature, by, nil, Producers(jobs, commit))
		if err != nil {
			return err
		}
		if problem != "" {
			if commit != c.Candidate {
				problem = fmt.Sprintf("candidate %s is swarm land's rebase of %s: %s", text.Short(c.Candidate), text.Short(commit), problem)
			}
			return refusal.New(refusal.DutyNotSeparated, "leave the card to a supervisor running another worker (swarm run --worker), or drop it",
				"card %s: %s", c.Label, problem)
		}
	}
	return nil
}

// rebasedFrom is commit, then each candidate the landing records say was
// rebased into the one before, back to the harvested head.
func rebasedFrom(commit string, landings map[string]Landing) []string {
	from := map[string]string{}
	for _, l := range landings {
		if l.Event == LandRebased {
			from[l.Rebased] = l.Candidate
		}
	}
	out := []string{commit}
	for n := 0; n < maxChain; n++ {
		prev, ok := from[commit]
		if !ok {
			break
		}
		out = append(out, prev)
		commit = prev
	}
	return out
}

// examineCardProblems checks an examine card against the repository as
// CheckCard does: BASE is CANDIDATE, CANDIDATE a commit here with
// FEATURE's contract, and, when the worker that will run it is named,
// that worker did not produce it (the rule of ownWork, on the job
// records). Who produced it is a warning when no worker is named.
func examineCardProblems(c *Card, o CheckOptions) (problems, warnings []string, err error) {
	if c.Kind != KindExamine || c.Candidate == "" {
		return nil, nil, nil
	}
	if c.Base != "" && c.Base != c.Candidate {
		problems = append(problems, fmt.Sprintf("BASE %s is not CANDIDATE %s: an examine card is cut from the commit it examines (BASE: <CANDIDATE>, sha= its first 12)", c.Base, c.Candidate))
	}
	id, perr := oid.Parse(c.Candidate)
	if perr == nil {
		_, _, perr = o.Store.Parents(id)
	}
	if perr != nil {
		return append(problems, fmt.Sprintf("CANDIDATE %s is not a commit of this repository (fetch it, or name one it has)", c.Candidate)), nil, nil
	}
	if c.Feature != "" {
		if _, err := examine.Load(o.Store, examine.Target{Feature: c.Feature, Candidate: c.Candidate}); err != nil {
			rf, ok := refusal.As(err)
			if !ok {
				return nil, nil, err
			}
			problems = append(problems, fmt.Sprintf("FEATURE %s at CANDIDATE: %s: %s", c.Feature, rf.Name, text.OneLine(rf.Detail)))
		}
	}
	jobs, err := Jobs(o.Store)
	if err != nil {
		return nil, nil, err
	}
	if o.Worker != "" {
		if err := ownWork(o.Store, jobs, c, &examine.ExaminedBy{Worker: o.Worker}); err != nil {
			rf, ok := refusal.As(err)
			if !ok {
				return nil, nil, err
			}
			problems = append(problems, rf.Name+": "+rf.Detail)
		}
	} else {
		for _, p := range Producers(jobs, c.Candidate) {
			warnings = append(warnings, fmt.Sprintf("CANDIDATE is the head of job %s by worker %s: that worker may not examine it (nobody certifies their own work)", p.Job, p.Worker))
		}
	}
	return problems, warnings, nil
}

// stageExamine makes the job directory of one attempt at an examine card:
//
//	<workspace>/   public/ and scratch/, as examine prompt makes them: the
//	               job's working directory
//	scratch/, home/, data/   its TMPDIR, HOME and XDG_DATA_HOME
//	prompt.md      the card, the examiner's bundle, the journal contract
//	               and the result contract
//	harness.log    what the harness wrote
//	journal.jsonl  what the examiner records (the job writes it)
//
// It refuses first, making nothing, a worker that produced the candidate
// (DutyNotSeparated) and one whose read_roots would show the job this
// repository.
func (s *Supervisor) stageExamine(ctx context.Context, c *Card, l *Lease, root string) (*jobDir, error) {
	if s.Examining == nil || s.Examining.Prompt == nil || s.Examining.Examiner == nil {
		return nil, errors.New("this supervisor runs no examine cards")
	}
	jobs, err := Jobs(s.Store)
	if err != nil {
		return nil, err
	}
	by := s.examinedBy(c.Label, l.Attempt, l.Nonce)
	if err := ownWork(s.Store, jobs, c, by); err != nil {
		return nil, err
	}
	if err := s.readRootsShowNoRepository(); err != nil {
		return nil, err
	}
	j := &jobDir{
		Root: root, Scratch: filepath.Join(root, "scratch"), Home: filepath.Join(root, "home"),
		Data: filepath.Join(root, "data"), Prompt: filepath.Join(root, "prompt.md"),
	}
	if err := os.MkdirAll(filepath.Dir(root), 0o755); err != nil {
		return nil, err
	}
	if err := os.Mkdir(root, 0o755); err != nil {
		return nil, err
	}
	for _, d := range []string{j.Scratch, j.Home, j.Data} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return nil, err
		}
	}
	b, err := s.Examining.Prompt(ctx, examine.Target{Feature: c.Feature, Candidate: c.Candidate}, root)
	if err != nil {
		return nil, err
	}
	j.Repo = b.Workspace // the job's working directory: it has no repository
	j.Exam = &examJob{Workspace: b.Workspace, Public: map[string]bool{}, By: by}
	for _, p := range b.Public {
		j.Exam.Public[p] = true
	}
	if err := j.writePrompt(ExaminePrompt(c, b.Text, filepath.Join(root, JournalName), filepath.Join(root, ResultName))); err != nil {
		return nil, err
	}
	return j, j.openLog()
}

// readRootsShowNoRepository refuses a worker whose read_roots hold this
// repository (its work tree or git directory) or lie in it: an examine
// job would see the candidate's files through them.
func (s *Supervisor) readRootsShowNoRepository() error {
	loc := s.Store.Location()
	for _, r := range s.Worker.ReadRoots {
		for _, repo := range []string{loc.WorkTree, loc.CommonDir} {
			if repo == "" {
				continue
			}
			if real, err := filepath.EvalSymlinks(repo); err == nil {
				repo = real
			}
			if inside(r, repo) || inside(repo, r) {
				return refusal.New(refusal.OutsideRoots, "run examine cards with a worker whose read_roots hold nothing of the repository",
					"worker %s's read root %s shows the repository %s: an examine job must see nothing of the checkout", s.Worker.Name, r, repo)
			}
		}
	}
	return nil
}

// inside reports whether path is dir or beneath it.
func inside(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}

// ExaminePrompt is an examine card's prompt: the card byte for byte, the
// examiner's bundle (as examine prompt prints it), then the journal
// contract (where it goes, its entries and bounds) and the result
// contract.
func ExaminePrompt(c *Card, bundle, journalPath, resultPath string) []byte {
	b := append([]byte{}, c.Text...)
	if len(b) > 0 && b[len(b)-1] != '\n' {
		b = append(b, '\n')
	}
	b = fmt.Appendf(b, "\n---\nThe examiner's bundle (git nwdes examine prompt)\n\n%s", bundle)
	if !strings.HasSuffix(bundle, "\n") {
		b = append(b, '\n')
	}
	b = fmt.Appendf(b, `
---
The journal contract (nwdes swarm)

This job cannot run git nwdes: it has no repository. Read the workspace's
public/ directly (examine read and examine probe are not available here)
and record what the verbs above would record, in order, one JSON object a
line, in $NWDES_JOB_DIR/%s (%s):
  {"op":"observation add","id":"O1","text":"what you observed","public":["docs/guides/x.md"]}
  {"op":"verdict set","expectation":"E1","verdict":"met","observations":["O1"]}
  {"op":"verdict set","expectation":"E2","verdict":"unmet","class":"product_violation","observations":["O1"]}
  {"op":"verdict set","expectation":"E3","verdict":"not_examined","reason":"why"}
  {"op":"close","outcome":"accepted","diagnostic":"what the examination found"}
Observation ids are issued in order from O1; "public" lists the paths under
public/ an observation cites (optional). close comes once, last. At most %d
bytes and %d lines. When the job ends the journal is replayed through the
examine verbs as examiner %s; any entry they refuse refuses the whole
journal and nothing is published.
`, JournalName, journalPath, MaxJournalSize, MaxJournalEntries, c.Label)
	p := Prompt(c, resultPath)
	return append(b, p[len(c.Text):]...)
}

// sealExamine is sealJob for an examine card's job, which was given no
// repository: whatever would make its directory one to git's discovery
// (a .git or HEAD at the top) or look like a job's repository (repo) is
// removed, never followed. It returns what it removed.
func sealExamine(dir string) ([]string, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	var removed []string
	for _, name := range []string{".git", "HEAD", "repo"} {
		if _, err := root.Lstat(name); err == nil {
			if err := root.RemoveAll(name); err != nil {
				return removed, err
			}
			removed = append(removed, name)
		}
	}
	return removed, nil
}

// examineEnd replays an examine card's journal when its job ended done
// with an ok result, and says in rec what became of it. A journal refused
// (JournalInvalid, every problem) leaves the result refused and nothing
// published; the replay's private draft is removed either way.
func (s *Supervisor) examineEnd(ctx context.Context, c *Card, rec *Job, j *jobDir) {
	rec.Harvest, rec.HarvestNote = HarvestNone, "an examine card's job makes no commits"
	refuse := func(err error) {
		rec.Journal, rec.Result = JournalRefused, VerdictRefused
		what := err.Error()
		if rf, ok := refusal.As(err); ok {
			what = rf.Name + ": " + rf.Detail
		}
		rec.Reason = joinReasons(rec.Reason, s.redact(what))
	}
	b, err := ReadJournal(rec.JobDir)
	done := rec.End == EndDone && rec.Result == VerdictOK
	switch {
	case errors.Is(err, ErrNoJournal) && done:
		rec.Journal, rec.Result = JournalNone, VerdictRefused
		rec.Reason = joinReasons(rec.Reason, "DONE without a "+JournalName+": no examination was recorded")
		return
	case errors.Is(err, ErrNoJournal):
		rec.Journal = JournalNone
		return
	case !done:
		rec.Journal = JournalIgnored
		return
	case err != nil:
		refuse(err)
		return
	}
	entries, problems := ParseJournal(b, func(p string) bool { return j.Exam.Public[p] })
	if len(problems) > 0 {
		refuse(journalRefusal(problems))
		return
	}
	x, err := s.Examining.Examiner()
	if err != nil {
		refuse(err)
		return
	}
	x.By = j.Exam.By
	x.Drafts = examine.ReplayDrafts + gitstore.RefName(rec.Label+"/"+fmt.Sprintf("%d-%s", rec.Attempt, rec.Nonce))
	defer s.dropDrafts(x.Drafts)
	jobs, err := Jobs(s.Store)
	if err == nil {
		// The rule asked again at the replay: a head harvested while
		// the job ran counts too.
		err = ownWork(s.Store, jobs, c, x.By)
	}
	if err != nil {
		refuse(err)
		return
	}
	ex, err := Replay(ctx, x, examine.Target{Feature: c.Feature, Candidate: c.Candidate}, entries)
	if ex == nil {
		refuse(err)
		return
	}
	rec.Journal, rec.Examination = JournalReplayed, ex.Path
	rec.Reason = joinReasons(rec.Reason, fmt.Sprintf("examined %s at %s: %s", ex.Feature, ex.Candidate[:12], ex.Outcome))
	if err != nil {
		rec.Reason = joinReasons(rec.Reason, s.redact(err.Error()))
	}
}

// dropDrafts removes a replay's private draft ref.
func (s *Supervisor) dropDrafts(ref gitstore.RefName) {
	if tip, err := s.Store.Tip(ref); err == nil && !tip.IsZero() {
		_ = s.Store.Refs().CompareAndSwap(ref, tip, oid.ID{})
	}
}
