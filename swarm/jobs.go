package swarm

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/internal/names"
	"github.com/nwdes/nwdes/refusal"
	"github.com/nwdes/nwdes/sandbox"
)

// End is how a job ended (Exit.End, Job.End).
type End string

// How a job ended.
const (
	EndDone     End = "done"     // the harness exited 0
	EndFailed   End = "failed"   // it exited non-zero, or could not start
	EndDeadline End = "deadline" // the wall ended it at its deadline
	EndWall     End = "wall"     // the wall refused it a path outside its write set
	EndIdle     End = "idle"     // it wrote no output and used no CPU for the worker's idle time (v3)
	EndUnknown  End = "unknown"  // anything else: a signal, survivors, a stop
	// EndBudget: a reading of spent.json passed the job's budget (v4).
	EndBudget End = "budget"
	// EndBudgetUnverifiable: under a budget, the harness's readings
	// stopped arriving (v4).
	EndBudgetUnverifiable End = "budget-unverifiable"
)

// Exit is a job's exit record: exit.json in its job directory, written by
// the supervisor after every process of the job was reaped. Secret is the
// attestation secret the supervisor minted in memory when it took the
// lease, whose SHA-256 the lease recorded before the job started; MAC is
// HMAC-SHA256 over the record without MAC. A job cannot know the secret,
// so an exit record it wrote itself cannot carry one that verifies.
type Exit struct {
	Label     string `json:"label"`
	Attempt   int    `json:"attempt"`
	Nonce     string `json:"nonce"`
	End       End    `json:"end"`
	ExitCode  int    `json:"exit_code"`
	Signal    string `json:"signal,omitempty"`
	Survivors int    `json:"survivors"`
	Started   string `json:"started"`
	Ended     string `json:"ended"`
	Reason    string `json:"reason,omitempty"`
	Secret    string `json:"secret"`
	MAC       string `json:"mac,omitempty"`
}

func (e Exit) mac(secret []byte) (string, error) {
	e.MAC = ""
	b, err := gitstore.Canonical(e)
	if err != nil {
		return "", err
	}
	m := hmac.New(sha256.New, secret)
	m.Write(b)
	return hex.EncodeToString(m.Sum(nil)), nil
}

// newSecret mints an attestation secret and its hash.
func newSecret() ([]byte, string) {
	s := make([]byte, 32)
	if _, err := rand.Read(s); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	h := sha256.Sum256(s)
	return s, hex.EncodeToString(h[:])
}

func newNonce() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// endOf maps what the wall reported to a job's end.
func endOf(r sandbox.Result) (End, string) {
	switch {
	case r.End == sandbox.EndStopped:
		return EndUnknown, "stopped: " + r.StopReason
	case r.Survivors > 0:
		return EndUnknown, fmt.Sprintf("%d processes survived the reaping", r.Survivors)
	case r.End == sandbox.EndDeadline:
		return EndDeadline, ""
	case r.End == sandbox.EndWall:
		reason := ""
		if r.Refused != nil {
			reason = "the wall refused " + r.Refused.Path
		}
		return EndWall, reason
	case r.End == sandbox.EndStartFailed:
		return EndFailed, "did not start: " + r.Err
	case r.End == sandbox.EndExit && r.ExitCode == 0:
		return EndDone, ""
	case r.End == sandbox.EndExit:
		return EndFailed, fmt.Sprintf("exit %d", r.ExitCode)
	}
	return EndUnknown, string(r.End)
}

// Job is the record of one finished attempt at a card, in JobsRef.
type Job struct {
	Label     string `json:"label"`
	Attempt   int    `json:"attempt"`
	Nonce     string `json:"nonce"`
	Worker    string `json:"worker"`
	Holder    Holder `json:"holder"`
	Started   string `json:"started"`
	Ended     string `json:"ended"`
	End       End    `json:"end"`
	ExitCode  int    `json:"exit_code"`
	Signal    string `json:"signal,omitempty"`
	Survivors int    `json:"survivors"`
	// Result is the RESULT.md check: ok, refused or blocked.
	Result Verdict `json:"result"`
	Reason string  `json:"reason,omitempty"`
	// Stopped: a stop record or a lost lease ended the job; the card
	// stays queued.
	Stopped bool `json:"stopped,omitempty"`
	// Forged names what the job wrote that only the machinery may (an
	// exit.json of its own): the result is refused.
	Forged []string `json:"forged,omitempty"`
	// Attest is the SHA-256 of the attestation secret; ExitSHA256 the
	// digest of exit.json as the supervisor wrote it.
	Attest     string `json:"attest"`
	ExitSHA256 string `json:"exit_sha256"`
	JobDir     string `json:"job_dir"`
	// Harvest says what became of the job's commits (v2; empty in v1):
	// HarvestNone, HarvestDescends, HarvestDiverged, HarvestBehind or
	// HarvestRefused, with HarvestNote saying why when refused.
	Harvest     string `json:"harvest,omitempty"`
	HarvestNote string `json:"harvest_note,omitempty"`
	// Head is the commit the job's HEAD named when it ended, harvested
	// into this repository and kept by HeadRef (HeadRef(label, attempt,
	// nonce)); empty when the job committed nothing or the harvest was
	// refused.
	Head    string `json:"head,omitempty"`
	HeadRef string `json:"head_ref,omitempty"`
	// Commits is how many commits the job made that this repository
	// lacked; Changed the paths its head changes against the card's base
	// (at most MaxChangedListed), ChangedCount how many there are.
	Commits      int      `json:"commits,omitempty"`
	Changed      []string `json:"changed,omitempty"`
	ChangedCount int      `json:"changed_count,omitempty"`
	// Timeline is when each step of the job happened (v3): timeline.tsv
	// without its renewals, which Renewals counts.
	Timeline []Step `json:"timeline,omitempty"`
	Renewals int    `json:"renewals,omitempty"`
	// LogBytes is how much the harness wrote in all (v3); the record's
	// harness.log payload is its last MaxLogTail bytes.
	LogBytes int64 `json:"log_bytes,omitempty"`
	// Lost names what the supervisor could not write for the job
	// (usage.tsv, timeline.tsv) and why (v3).
	Lost []string `json:"lost,omitempty"`
	// Spent is the harness's last reading of spent.json (v4), nil when it
	// reported none; SpentProblem why its last one was refused. Budget is
	// the job's budget (the card's and the worker's, the tighter of each).
	Spent        *Spent `json:"spent,omitempty"`
	SpentProblem string `json:"spent_problem,omitempty"`
	Budget       string `json:"budget,omitempty"`
	// Retry (v4): the job failed to start, or its harness exited within
	// the launch grace with no result, and attempts are left: it does
	// not finish the card, which runs again once RetryAfter has passed.
	Retry      bool   `json:"retry,omitempty"`
	RetryAfter string `json:"retry_after,omitempty"`
	// Outside are the changed paths (of those listed in Changed) that no
	// glob of the card's PATHS matches (v4); OutsideCount how many.
	Outside      []string `json:"outside,omitempty"`
	OutsideCount int      `json:"outside_count,omitempty"`
	// Identity is the git identity the worker ran the job with (v5):
	// "Name <email>", its commits' author and committer. With Worker it
	// names who produced the job's head: such a worker may not examine it.
	Identity string `json:"identity,omitempty"`
	// Journal says what became of an examine card's journal (v5):
	// JournalReplayed (Examination names the record published),
	// JournalRefused (Reason says why, every problem), JournalNone (the
	// job left none) or JournalIgnored (the job did not end done with an
	// ok result, so its journal was not replayed). "" for a produce card.
	Journal     string `json:"journal,omitempty"`
	Examination string `json:"examination,omitempty"`
	// Gate is what the feature's gates showed at the head (v5), nil when
	// the run was not asked to gate (swarm run --gate) or nothing was
	// harvested.
	Gate *GateSummary `json:"gate,omitempty"`
}

// Step is one row of a job's timeline.
type Step struct {
	At     string `json:"at"`
	Step   string `json:"step"`
	Detail string `json:"detail,omitempty"`
}

// MaxTimeline bounds the steps a job record holds.
const MaxTimeline = 64

// jobVersion is the version of the job records written now (swarm.job,
// register.go). v1: the job; v2: its harvest (harvest, head, head_ref,
// commits, changed); v3: end idle, timeline, renewals, log_bytes, lost
// and the harness.log payload (the log's tail); v4: ends budget and
// budget-unverifiable, spent, spent_problem, budget, retry, retry_after,
// outside and outside_count; v5: identity, an examine card's journal and
// examination, and gate (swarm run --gate).
const jobVersion = 5

// harvestProblem says what is wrong with the harvest fields of a job
// record of version v, or "".
func (j *Job) harvestProblem(v int) string {
	hasHead := j.Head != "" || j.HeadRef != ""
	switch {
	case v == 1 && (j.Harvest != "" || j.HarvestNote != "" || hasHead || j.Commits != 0 || j.Changed != nil || j.ChangedCount != 0):
		return "a v1 job record holds no harvest"
	case v == 1:
		return ""
	}
	switch j.Harvest {
	case HarvestNone, HarvestRefused:
		if hasHead || j.Commits != 0 || j.Changed != nil || j.ChangedCount != 0 {
			return fmt.Sprintf("a harvest %s names no head, commits or paths", j.Harvest)
		}
	case HarvestDescends, HarvestDiverged, HarvestBehind:
		if !isCommitID(j.Head) || j.HeadRef != string(HeadRef(j.Label, j.Attempt, j.Nonce)) {
			return fmt.Sprintf("a harvest %s names its head (a full commit id) and %s", j.Harvest, HeadRef(j.Label, j.Attempt, j.Nonce))
		}
		if j.Commits < 0 || j.ChangedCount < len(j.Changed) || len(j.Changed) > MaxChangedListed {
			return "the counts of its commits and changed paths do not add up"
		}
	default:
		return fmt.Sprintf("harvest %q is not none, descends, diverged, behind or refused", j.Harvest)
	}
	return ""
}

func jobPath(label string, attempt int, nonce string) string {
	return fmt.Sprintf("jobs/%s/%d-%s", label, attempt, nonce)
}

// Payloads of a job record: exit.json and RESULT.md as the supervisor
// read them (the report bounded).
const (
	exitPayload   = "exit.json"
	resultPayload = "RESULT.md"
	logPayload    = "harness.log" // its last MaxLogTail bytes (v3)
)

func jobFrom(path string, rec *gitstore.Record) (*Job, error) {
	if rec.Kind != KindJob || rec.V < 1 || rec.V > jobVersion {
		return nil, malformed(path, "a %s v%d record, not a job", rec.Kind, rec.V)
	}
	var j Job
	if err := rec.Decode(&j); err != nil {
		return nil, err
	}
	if why := j.harvestProblem(rec.V); why != "" {
		return nil, malformed(path, "%s", why)
	}
	if path != jobPath(j.Label, j.Attempt, j.Nonce) {
		return nil, malformed(path, "a job of %s attempt %d belongs under %s", j.Label, j.Attempt, jobPath(j.Label, j.Attempt, j.Nonce))
	}
	switch j.End {
	case EndDone, EndFailed, EndDeadline, EndWall, EndUnknown:
	case EndIdle:
		if rec.V < 3 {
			return nil, malformed(path, "end idle is not in a v%d job record", rec.V)
		}
	case EndBudget, EndBudgetUnverifiable:
		if rec.V < 4 {
			return nil, malformed(path, "end %s is not in a v%d job record", j.End, rec.V)
		}
	default:
		return nil, malformed(path, "end %q is not done, failed, deadline, idle, budget, budget-unverifiable, wall or unknown", j.End)
	}
	if rec.V < 4 && (j.Spent != nil || j.SpentProblem != "" || j.Budget != "" || j.Retry || j.RetryAfter != "" || j.Outside != nil || j.OutsideCount != 0) {
		return nil, malformed(path, "a v%d job record holds no spending, retry or paths outside", rec.V)
	}
	if j.Gate != nil && rec.V < 5 {
		return nil, malformed(path, "a v%d job record holds no gate summary", rec.V)
	} else if j.Gate != nil {
		if why := j.Gate.problem(); why != "" {
			return nil, malformed(path, "%s", why)
		}
	}
	if rec.V < 5 && (j.Identity != "" || j.Journal != "" || j.Examination != "") {
		return nil, malformed(path, "a v%d job record holds no identity, journal or examination", rec.V)
	}
	switch j.Journal {
	case "", JournalNone, JournalIgnored, JournalRefused:
		if j.Examination != "" {
			return nil, malformed(path, "an examination without a replayed journal")
		}
	case JournalReplayed:
		if j.Examination == "" {
			return nil, malformed(path, "a replayed journal names the examination it published")
		}
	default:
		return nil, malformed(path, "journal %q is not replayed, refused, none or ignored", j.Journal)
	}
	if j.Retry {
		if _, err := time.Parse(stamp, j.RetryAfter); err != nil {
			return nil, malformed(path, "a retried job names when (retry_after %q is not a time)", j.RetryAfter)
		}
	} else if j.RetryAfter != "" {
		return nil, malformed(path, "retry_after without retry")
	}
	if j.Spent != nil && (j.Spent.Tokens < 0 || j.Spent.CostMicros < 0 || j.Spent.Turns < 0) {
		return nil, malformed(path, "its spending is negative")
	}
	if j.OutsideCount < len(j.Outside) || len(j.Outside) > MaxChangedListed {
		return nil, malformed(path, "the count of its paths outside PATHS does not add up")
	}
	switch j.Result {
	case VerdictOK, VerdictRefused, VerdictBlocked:
	default:
		return nil, malformed(path, "result %q is not ok, refused or blocked", j.Result)
	}
	exit, ok := rec.Payloads[exitPayload]
	if !ok {
		return nil, malformed(path, "it holds no exit record")
	}
	if d := sha256.Sum256(exit); hex.EncodeToString(d[:]) != j.ExitSHA256 {
		return nil, malformed(path, "its exit record is not the one it names")
	}
	for name, b := range rec.Payloads {
		switch {
		case name == exitPayload, name == resultPayload:
		case name == logPayload && rec.V >= 3 && len(b) <= MaxLogTail:
		default:
			return nil, malformed(path, "it holds a payload %q", name)
		}
	}
	if rec.V < 3 && (j.Timeline != nil || j.Renewals != 0 || j.LogBytes != 0 || j.Lost != nil) {
		return nil, malformed(path, "a v%d job record holds no timeline, log or losses", rec.V)
	}
	if len(j.Timeline) > MaxTimeline || j.Renewals < 0 || j.LogBytes < 0 {
		return nil, malformed(path, "its timeline or log counts are out of bounds")
	}
	return &j, nil
}

// Jobs lists the recorded jobs, by label then attempt. A record that does
// not parse is left out (JobProblems names it; fsck too): one bad record
// anyone pushed must not stop every supervisor. An object that cannot be
// read is an error.
func Jobs(st gitstore.RecordReader) ([]Job, error) {
	jobs, _, err := JobProblems(st)
	return jobs, err
}

// JobProblems is Jobs, with the records it left out and why.
func JobProblems(st gitstore.RecordReader) ([]Job, []string, error) {
	tx, err := st.Records(JobsRef)
	if err != nil {
		return nil, nil, err
	}
	return jobsIn(tx, nil)
}

// labelJobs are the jobs of one label and the records of it left out.
// Once parsed it is never changed: a supervisor's look at the queue keeps
// pointers into jobs.
type labelJobs struct {
	label    string
	jobs     []Job
	problems []string
}

// jobsIn is JobProblems of the view v, each label's jobs parsed once per
// tree of jobs/<label> through m (nil: every one parsed).
func jobsIn(v gitstore.View, m *memo) ([]Job, []string, error) {
	ljs, err := labelsIn(v, m)
	if err != nil {
		return nil, nil, err
	}
	var problems []string
	for _, lj := range ljs {
		problems = append(problems, lj.problems...)
	}
	return flatten(ljs), problems, nil
}

// flatten copies the jobs of ljs into one list, by label, then attempt.
func flatten(ljs []*labelJobs) []Job {
	var out []Job
	for _, lj := range ljs {
		out = append(out, lj.jobs...)
	}
	sort.SliceStable(out, func(i, k int) bool {
		if out[i].Label != out[k].Label {
			return out[i].Label < out[k].Label
		}
		return out[i].Attempt < out[k].Attempt
	})
	return out
}

// labelsIn reads the jobs of each label of v, in the tree's order, each
// parsed once per tree of jobs/<label> through m (nil: every one parsed).
func labelsIn(v gitstore.View, m *memo) ([]*labelJobs, error) {
	labels, err := v.ReadDir("jobs")
	if err != nil {
		return nil, err
	}
	out := make([]*labelJobs, 0, len(labels))
	for _, e := range labels {
		lj, err := memoized(m, e.Name, e.Hash, func() (*labelJobs, error) { return jobsOf(v, e.Name) })
		if err != nil {
			return nil, err
		}
		out = append(out, lj)
	}
	return out, nil
}

// jobsOf reads the job records of label in v; an object that cannot be
// read is an error, a record that does not parse a problem.
func jobsOf(v gitstore.View, label string) (*labelJobs, error) {
	names, err := v.List("jobs/" + label)
	if err != nil {
		return nil, err
	}
	lj := &labelJobs{label: label}
	for _, n := range names {
		path := "jobs/" + label + "/" + n
		rec, err := v.Get(path)
		if err != nil {
			if _, ok := refusal.As(err); ok {
				lj.problems = append(lj.problems, err.Error())
				continue
			}
			return nil, err
		}
		j, err := jobFrom(path, rec)
		if err != nil {
			lj.problems = append(lj.problems, err.Error())
			continue
		}
		lj.jobs = append(lj.jobs, *j)
	}
	return lj, nil
}

// recordJob writes j with its payloads; a job already recorded (the same
// attempt and nonce) is left as it is.
func recordJob(ctx context.Context, st gitstore.RecordWriter, j *Job, exit, result, logTail []byte) error {
	if len(j.Timeline) > MaxTimeline {
		// Keep the first steps and the last: what began and how it ended.
		j.Timeline = append(j.Timeline[:MaxTimeline/2:MaxTimeline/2], j.Timeline[len(j.Timeline)-MaxTimeline/2:]...)
	}
	v := jobVersion
	if j.Gate == nil && j.Identity == "" && j.Journal == "" && j.Examination == "" {
		// A job with none of v5's fields is written as v4, so that a
		// pool's older supervisors still read it.
		v = 4
	}
	rec, err := gitstore.NewRecord(KindJob, v, j)
	if err != nil {
		return err
	}
	rec.Payloads = map[string][]byte{exitPayload: exit}
	if result != nil {
		rec.Payloads[resultPayload] = result
	}
	if len(logTail) > 0 {
		rec.Payloads[logPayload] = logTail
	}
	path := jobPath(j.Label, j.Attempt, j.Nonce)
	_, err = st.Change(ctx, JobsRef, "job "+j.Label, func(tx gitstore.Edit) error {
		if _, err := tx.Get(path); err == nil {
			return nil
		} else if !errors.Is(err, gitstore.ErrNotFound) {
			return err
		}
		return tx.Put(path, rec)
	})
	return err
}

// afterJob are the files of a job's directory that only the supervisor
// writes, once the job has ended: anything at one of these names when
// the job ends, the job put there.
var afterJob = []string{"exit.json", "usage.tsv", "timeline.tsv"}

// writeExit writes exit.json into dir (from m's premade file when there
// is one), replacing whatever the job left at that name, never through a
// link. It returns the bytes written and what the job left at any name of
// afterJob, for a person (m.write replaces each: only the machinery
// writes them).
func writeExit(m machine, dir string, e Exit, secret []byte) ([]byte, []string, error) {
	var forged []string
	for _, name := range afterJob {
		if fi, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			forged = append(forged, fmt.Sprintf("%s was already there (a %s the job wrote)", name, fileKind(fi.Mode())))
		}
	}
	e.Secret = hex.EncodeToString(secret)
	mac, err := e.mac(secret)
	if err != nil {
		return nil, forged, err
	}
	e.MAC = mac
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return nil, forged, err
	}
	b = append(b, '\n')
	if err := m.write(dir, "exit.json", b); err != nil {
		return nil, forged, err
	}
	return b, forged, nil
}

// VerifyExit checks the exit.json on disk in a recorded job's directory
// against the job record: the bytes the supervisor wrote, a secret whose
// hash the lease recorded, and a MAC that holds. "" when it does, else
// what is wrong (a job, or anyone, rewrote it).
func VerifyExit(j *Job) string {
	// JobDir comes from a record anyone could have pushed: only a job
	// directory is read, and only a regular file in it, never through a
	// link, never a FIFO, bounded.
	if !filepath.IsAbs(j.JobDir) || filepath.Clean(j.JobDir) != j.JobDir || !strings.Contains(j.JobDir, "/nwdes/swarm/jobs/") {
		return "the record names no job directory of a supervisor"
	}
	if _, err := os.Lstat(j.JobDir); os.IsNotExist(err) {
		return "reaped (the job directory was removed; the record keeps exit.json)"
	}
	f, err := os.OpenFile(filepath.Join(j.JobDir, "exit.json"), os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return "exit.json cannot be read: " + err.Error()
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return "exit.json is not a regular file"
	}
	b, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return "exit.json cannot be read: " + err.Error()
	}
	if d := sha256.Sum256(b); hex.EncodeToString(d[:]) != j.ExitSHA256 {
		return "exit.json is not the one the supervisor wrote (rewritten)"
	}
	return checkExitBytes(b, j.Attest)
}

// checkExitBytes verifies an exit record's secret and MAC.
func checkExitBytes(b []byte, attest string) string {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var e Exit
	if err := dec.Decode(&e); err != nil {
		return "exit.json does not parse: " + err.Error()
	}
	secret, err := hex.DecodeString(e.Secret)
	if err != nil {
		return "exit.json's secret is not hex"
	}
	if h := sha256.Sum256(secret); hex.EncodeToString(h[:]) != attest {
		return "exit.json's secret is not the one the lease attested"
	}
	mac, err := e.mac(secret)
	if err != nil || !hmac.Equal([]byte(mac), []byte(e.MAC)) {
		return "exit.json's MAC does not hold (edited)"
	}
	return ""
}

// Stop is a stop record: every supervisor ends the named card's job (or
// every job, for "all") at once and takes nothing it names.
type Stop struct {
	Card   string `json:"card"` // a label, or "all"
	At     string `json:"at"`
	By     string `json:"by"`
	Reason string `json:"reason,omitempty"`
}

func stopPath(card string) string { return "stop/" + card }

func stopFrom(path string, rec *gitstore.Record) (*Stop, error) {
	if rec.Kind != KindStop || rec.V != 1 {
		return nil, malformed(path, "a %s v%d record, not a stop", rec.Kind, rec.V)
	}
	var s Stop
	if err := rec.Decode(&s); err != nil {
		return nil, err
	}
	if path != stopPath(s.Card) || (s.Card != "all" && !names.Valid(s.Card, maxLabel)) {
		return nil, malformed(path, "a stop of %q belongs under %s", s.Card, stopPath(s.Card))
	}
	return &s, nil
}

// SetStop writes a stop record for card ("all" for every card).
func SetStop(ctx context.Context, st gitstore.RecordWriter, s Stop) error {
	if s.Card != "all" && !names.Component(s.Card, maxLabel) {
		return refusal.New(refusal.CardInvalid, "name a card label, or --all", "%q is not a card label", s.Card)
	}
	rec, err := gitstore.NewRecord(KindStop, 1, s)
	if err != nil {
		return err
	}
	_, err = st.Change(ctx, ControlRef, "stop "+s.Card, func(tx gitstore.Edit) error { return tx.Put(stopPath(s.Card), rec) })
	return err
}

// ClearStop removes the stop record for card ("all", or every one when
// card is "").
func ClearStop(ctx context.Context, st gitstore.RecordWriter, card string) error {
	_, err := st.Change(ctx, ControlRef, "resume", func(tx gitstore.Edit) error {
		if card != "" {
			return tx.Remove(stopPath(card))
		}
		return tx.Remove("stop")
	})
	return err
}

// Stops reads the stop records: by card label, "all" for every card.
func Stops(st gitstore.RecordReader) (map[string]Stop, error) {
	tx, err := st.Records(ControlRef)
	if err != nil {
		return nil, err
	}
	return stopsIn(tx)
}

// stopsIn is Stops of the view v.
func stopsIn(tx gitstore.View) (map[string]Stop, error) {
	names, err := tx.List("stop")
	if err != nil {
		return nil, err
	}
	out := map[string]Stop{}
	for _, n := range names {
		rec, err := tx.Get(stopPath(n))
		var s *Stop
		if err == nil {
			s, err = stopFrom(stopPath(n), rec)
		}
		if err != nil {
			if _, ok := refusal.As(err); !ok && !errors.Is(err, gitstore.ErrNotFound) {
				return nil, err
			}
			// A stop record that does not parse still stops what its
			// name names: failing safe is not running.
			s = &Stop{Card: n, Reason: "an unreadable stop record: " + err.Error()}
		}
		out[s.Card] = *s
	}
	return out, nil
}

func now(f func() time.Time) time.Time {
	if f != nil {
		return f()
	}
	return time.Now()
}

// Shown is one job's record with what its payloads keep: the report and
// the tail of harness.log.
type Shown struct {
	Job
	Report  string `json:"report,omitempty"`
	LogTail string `json:"log_tail,omitempty"`
}

// ShowJob reads the record of one attempt at label (the latest recorded
// when attempt is 0), from the jobs ref alone: it works in any clone that
// fetched the record. None recorded is refused (JobNotFound).
func ShowJob(st gitstore.RecordReader, label string, attempt int) (*Shown, error) {
	if !validCard(label) {
		return nil, refusal.New(refusal.CardInvalid, "name a card label", "%q is not a card label", label)
	}
	tx, err := st.Records(JobsRef)
	if err != nil {
		return nil, err
	}
	names, err := tx.List("jobs/" + label)
	if err != nil {
		return nil, err
	}
	var best *Shown
	for _, n := range names {
		path := "jobs/" + label + "/" + n
		rec, err := tx.Get(path)
		if err != nil {
			if _, ok := refusal.As(err); ok {
				continue // fsck names it
			}
			return nil, err
		}
		j, err := jobFrom(path, rec)
		if err != nil {
			continue
		}
		if (attempt == 0 && (best == nil || j.Attempt > best.Attempt)) || j.Attempt == attempt {
			best = &Shown{Job: *j, Report: string(rec.Payloads[resultPayload]), LogTail: string(rec.Payloads[logPayload])}
		}
	}
	if best == nil {
		what := "no job"
		if attempt > 0 {
			what = fmt.Sprintf("no attempt %d", attempt)
		}
		return nil, refusal.New(refusal.JobNotFound, "git nwdes swarm status lists the recorded jobs (fetch them from the remote first)",
			"card %s has %s recorded", label, what)
	}
	return best, nil
}
