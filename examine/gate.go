package examine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/refusal"
	"github.com/nwdes/nwdes/sandbox"
	"github.com/nwdes/nwdes/trust"
)

// GateRef holds the mechanical judgments: gate evidence (the outcome of
// every oracle ever run) and verify results. Like Ref it is one ref however
// many records it holds.
const GateRef gitstore.RefName = "refs/nwdes/gates"

// Record kinds of gates and verify, and their versions.
//
// gate.evidence v1: one oracle run on one candidate commit: the command and
// marker, state, how the process ended (cause), duration, output sizes and
// sha256; the bounded output tails are payloads stdout.tail and
// stderr.tail. Immutable, at
// evidence/<fanout candidate>/<feature>/<E id>/<stamp>-<id>.
// gate.evidence v2: the oracle ran inside the wall: cause is replaced by
// end (exit, signal, deadline, wall, start-failed), and the record adds
// wall (the refused path and step, when the wall stopped it), survivors,
// and enforced (what the kernel enforced). v1 records are still read.
// gate.evidence v3: v2 with base, the same oracle run at a base commit
// (gate run --base) the same way, in the same wall: its commit and how
// that run ended (the v2 run fields), its tails the payloads
// base.stdout.tail and base.stderr.tail. Only a run with a base writes
// v3; v1 and v2 records read as "no base run" (Proof: unproven).
// gate.latest v1: per feature, where the newest evidence of each E id is
// and for which candidate; at latest/<feature>. Derived from the evidence.
// verify.result v1: one verify verdict over a diff; the printed block is
// the payload report. Immutable, at
// verify/<fanout head>/<feature>/<stamp>-<id>.
const (
	KindEvidence     gitstore.Kind = "gate.evidence"
	KindGateLatest   gitstore.Kind = "gate.latest"
	KindVerifyResult gitstore.Kind = "verify.result"
)

// GateState is an oracle's state for one candidate.
type GateState string

const (
	// GateMet: the command exited 0 and its standard output held the marker.
	GateMet GateState = "MET"
	// GateNotMet: anything else that ran: a non-zero exit, a missing
	// marker, a timeout, a signal, a failure to start.
	GateNotMet GateState = "NOT-MET"
	// GatePending: no evidence for this candidate and this oracle.
	GatePending GateState = "pending"
	// GateAbandoned: the contract abandons the criterion (ABANDON: E<n>
	// reason); its oracle is not run, and it is never a pass.
	GateAbandoned GateState = "ABANDONED"
)

// DefaultGateTimeout is how long one oracle may run.
const DefaultGateTimeout = sandbox.DefaultDeadline

// observationTail bounds each output tail quoted in a draft observation;
// the evidence record keeps the runner's (longer) tail.
const observationTail = 2048

// OutputDigest describes one whole output stream of an oracle.
type OutputDigest struct {
	Bytes     int64  `json:"bytes"`
	SHA256    string `json:"sha256"`
	TailBytes int    `json:"tail_bytes"`
}

// OracleRun is how one run of an oracle ended, at one commit.
type OracleRun struct {
	State          GateState    `json:"state"`
	Cause          string       `json:"cause,omitempty"`
	End            sandbox.End  `json:"end,omitempty"`
	ExitStatus     int          `json:"exit_status"`
	Signal         string       `json:"signal,omitempty"`
	StartError     string       `json:"start_error,omitempty"`
	MarkerFound    bool         `json:"marker_found"`
	MarkerOnStderr bool         `json:"marker_on_stderr,omitempty"`
	StartedAt      string       `json:"started_at"`
	DurationMS     int64        `json:"duration_ms"`
	TimeoutMS      int64        `json:"timeout_ms"`
	Stdout         OutputDigest `json:"stdout"`
	Stderr         OutputDigest `json:"stderr"`
	OutputCut      bool         `json:"output_cut,omitempty"`
	// Wall is the refusal that ended the run as "wall"; Survivors the
	// processes still alive after reaping (0 unless the wall failed);
	// Enforced what the kernel enforced (v2).
	Wall      *sandbox.Refusal  `json:"wall,omitempty"`
	Survivors int               `json:"survivors,omitempty"`
	Enforced  *sandbox.Enforced `json:"enforced,omitempty"`

	StdoutTail []byte `json:"-"`
	StderrTail []byte `json:"-"`
}

// Evidence is what one oracle run showed, recorded for its candidate.
type Evidence struct {
	Feature      string        `json:"feature"`
	Expectation  ExpectationID `json:"expectation"`
	Candidate    string        `json:"candidate"`
	ContractPath string        `json:"contract_path"`
	Check        string        `json:"check"`
	Expect       string        `json:"expect"`
	OracleRun
	// Base is the same oracle run at the base commit (v3), nil when the
	// gate ran without --base.
	Base *BaseRun `json:"base,omitempty"`

	// Path is where the record lives in GateRef (not stored in the body).
	Path string `json:"-"`
	// Signature is the record's SSH signature, nil when unsigned
	// (Gates.Sign); message is what it must cover.
	Signature []byte `json:"-"`
	message   []byte
	// made is the record made when the evidence was named (its content
	// id is in Path), written as it is rather than encoded again.
	made *gitstore.Record
}

// BaseRun is the oracle's run at the base commit a gate run was given.
type BaseRun struct {
	Commit string `json:"commit"`
	OracleRun
}

// Proof is what an oracle's evidence shows of the change: whether the
// oracle was seen to fail at the base before it passed at the candidate
// (RED, then GREEN).
type Proof string

const (
	// ProofProven: NOT-MET at the base, MET at the candidate.
	ProofProven Proof = "proven"
	// ProofVacuous: MET at the base and at the candidate: it does not
	// show that the change made it pass.
	ProofVacuous Proof = "vacuous"
	// ProofUnproven: MET at the candidate, with no base run (gate run
	// without --base, or evidence older than v3).
	ProofUnproven Proof = "unproven"
)

// Proof is the evidence's proof; "" when the oracle is not MET at the
// candidate (there is nothing to prove).
func (e *Evidence) Proof() Proof {
	switch {
	case e.State != GateMet:
		return ""
	case e.Base == nil:
		return ProofUnproven
	case e.Base.State == GateMet:
		return ProofVacuous
	}
	return ProofProven
}

// ProofNote says in a few words what Proof is and why: "" when there is
// nothing to prove.
func (e *Evidence) ProofNote() string {
	switch e.Proof() {
	case ProofProven:
		return fmt.Sprintf("proven: NOT-MET at base %s (%s), MET here", text.Short(e.Base.Commit), e.Base.Summary())
	case ProofVacuous:
		return fmt.Sprintf("vacuous: MET at base %s too, so it does not show the change made it pass", text.Short(e.Base.Commit))
	case ProofUnproven:
		return "unproven: not run at a base (git nwdes gate run --base REV)"
	}
	return ""
}

// Summary says in a few words how the run ended and why that is its state.
func (e *OracleRun) Summary() string {
	var s string
	switch e.End {
	case sandbox.EndStartFailed:
		s = "did not start: " + e.StartError
	case sandbox.EndDeadline:
		s = fmt.Sprintf("deadline of %s reached: ended by TERM, then KILL after the grace", time.Duration(e.TimeoutMS)*time.Millisecond)
	case sandbox.EndSignal:
		s = "ended by " + e.Signal
	case sandbox.EndWall:
		s = "the wall refused " + e.Wall.Path
		if e.Wall.Step != "" {
			s += " at STEP " + e.Wall.Step
		}
		s += fmt.Sprintf(" (then exit %d): a run the wall had to stop never passes", e.ExitStatus)
	case sandbox.EndExit:
		s = fmt.Sprintf("exit %d", e.ExitStatus)
		switch {
		case e.ExitStatus != 0 && e.MarkerFound:
			s += ", marker in stdout, but a non-zero exit never passes"
		case e.MarkerFound:
			s += ", marker in stdout"
		case e.MarkerOnStderr:
			s += ", marker only on stderr, which does not count"
		default:
			s += ", marker not in stdout"
		}
	default:
		s = fmt.Sprintf("ended in an unknown way (%q)", e.End)
	}
	if e.Survivors > 0 {
		s += fmt.Sprintf("; %d processes survived the reaping, which never passes", e.Survivors)
	}
	if e.OutputCut {
		s += "; its output was still held open after the end and was cut, which never passes"
	}
	return s
}

// endOfV1 maps a v1 record's cause to an end.
func endOfV1(cause string) sandbox.End {
	switch cause {
	case "timeout":
		return sandbox.EndDeadline
	case "exit", "signal", "start-failed":
		return sandbox.End(cause)
	}
	return sandbox.End("v1:" + cause)
}

// Location names the record for a reader: ref and path.
func (e *Evidence) Location() string { return string(GateRef) + ":" + e.Path }

func evidenceDir(commit, feature string, id ExpectationID) string {
	return fmt.Sprintf("evidence/%s/%s/%s", fanout(commit), feature, id)
}

func gateLatestPath(feature string) string { return "latest/" + feature }

// stamp names records so that the newest sorts last (fixed width, UTC).
// stamp is a record name's time prefix: fixed width, so names sort in time
// order.
func stamp(t time.Time) string { return t.UTC().Format(stampLayout) }

func (e *Evidence) record() (*gitstore.Record, error) {
	v := 2
	if e.Base != nil {
		v = 3
	}
	rec, err := gitstore.NewRecord(KindEvidence, v, e)
	if err != nil {
		return nil, err
	}
	rec.Payloads = map[string][]byte{"stdout.tail": e.StdoutTail, "stderr.tail": e.StderrTail}
	if e.Base != nil {
		rec.Payloads["base.stdout.tail"], rec.Payloads["base.stderr.tail"] = e.Base.StdoutTail, e.Base.StderrTail
	}
	return rec, nil
}

// toWrite is the record to write: a copy of the one made when the
// evidence was named, with payloads of its own (a signature added to one
// attempt of a write is not carried into the next), else a new one.
func (e *Evidence) toWrite() (*gitstore.Record, error) {
	if e.made == nil {
		return e.record()
	}
	r := *e.made
	r.Payloads = maps.Clone(e.made.Payloads)
	return &r, nil
}

func readEvidence(tx gitstore.View, path string) (*Evidence, error) {
	rec, err := tx.Get(path)
	if err != nil {
		return nil, err
	}
	return evidenceFrom(path, rec)
}

// evidenceFrom decodes and validates a gate evidence record read at path.
func evidenceFrom(path string, rec *gitstore.Record) (*Evidence, error) {
	if rec.Kind != KindEvidence || rec.V < 1 || rec.V > 3 {
		return nil, malformed(path, "a %s v%d record, not gate evidence", rec.Kind, rec.V)
	}
	var e Evidence
	if err := rec.Decode(&e); err != nil {
		return nil, err
	}
	switch {
	case rec.V == 1 && e.Cause != "" && e.End == "" && e.Base == nil:
		e.End = endOfV1(e.Cause)
	case rec.V >= 2 && e.v2Shape() && (rec.V == 3) == (e.Base != nil) && (e.Base == nil || e.Base.v2Shape()):
	default:
		return nil, malformed(path, "gate evidence v%d with cause %q, end %q and base %v", rec.V, e.Cause, e.End, e.Base != nil)
	}
	if err := e.validate(path, rec.Body); err != nil {
		return nil, err
	}
	e.Path, e.StdoutTail, e.StderrTail = path, rec.Payloads["stdout.tail"], rec.Payloads["stderr.tail"]
	if e.Base != nil {
		e.Base.StdoutTail, e.Base.StderrTail = rec.Payloads["base.stdout.tail"], rec.Payloads["base.stderr.tail"]
	}
	var err error
	if e.Signature, e.message, err = signedPayload(rec); err != nil {
		return nil, err
	}
	return &e, nil
}

// v2Shape reports whether the run is recorded as v2 and later record it:
// an end and no cause, and the wall's refusal when the wall ended it.
func (r *OracleRun) v2Shape() bool {
	return r.Cause == "" && r.End != "" && (r.End != sandbox.EndWall || r.Wall != nil)
}

// Signer verifies the evidence's signature and returns the key that made
// it: nil and no error when unsigned, SignatureInvalid when it does not
// hold.
func (e *Evidence) Signer() (ssh.PublicKey, error) {
	if e.Signature == nil {
		return nil, nil
	}
	return trust.Verify(e.message, e.Signature)
}

// latestEvidence is the newest evidence of one criterion at commit, or nil.
func latestEvidence(tx gitstore.View, commit, feature string, id ExpectationID) (*Evidence, error) {
	dir := evidenceDir(commit, feature, id)
	names, err := tx.List(dir)
	if err != nil || len(names) == 0 {
		return nil, err
	}
	return readEvidence(tx, dir+"/"+names[len(names)-1])
}

type gateLatest struct {
	Feature  string                            `json:"feature"`
	Criteria map[ExpectationID]gateLatestEntry `json:"criteria"`
}

type gateLatestEntry struct {
	Candidate string    `json:"candidate"`
	Path      string    `json:"path"`
	State     GateState `json:"state"`
	RanAt     string    `json:"ran_at"`
}

func loadGateLatest(tx gitstore.View, feature string) (*gateLatest, error) {
	rec, err := tx.Get(gateLatestPath(feature))
	if errors.Is(err, gitstore.ErrNotFound) {
		return &gateLatest{Feature: feature, Criteria: map[ExpectationID]gateLatestEntry{}}, nil
	}
	if err != nil {
		return nil, err
	}
	return gateLatestFrom(gateLatestPath(feature), rec)
}

// gateLatestFrom decodes and validates a feature's gate index read at path.
func gateLatestFrom(path string, rec *gitstore.Record) (*gateLatest, error) {
	if rec.Kind != KindGateLatest || rec.V != 1 {
		return nil, malformed(path, "a %s v%d record, not a gate index", rec.Kind, rec.V)
	}
	l := &gateLatest{}
	if err := rec.Decode(l); err != nil {
		return nil, err
	}
	if l.Criteria == nil {
		l.Criteria = map[ExpectationID]gateLatestEntry{}
	}
	if err := l.validate(path); err != nil {
		return nil, err
	}
	return l, nil
}

// GateRow is one oracle's state, as gate run and gate status report it.
type GateRow struct {
	Expectation ExpectationID `json:"expectation"`
	Criterion   string        `json:"criterion"`
	Check       string        `json:"check"`
	Expect      string        `json:"expect"`
	State       GateState     `json:"state"`
	// Note says why the state is what it is.
	Note string `json:"note"`
	// Abandoned is the contract's reason when the criterion is abandoned;
	// such a row is not run, and is never a pass.
	Abandoned string `json:"abandoned,omitempty"`
	// StaleFor is the candidate the newest evidence is for, when that is
	// another commit than this one.
	StaleFor     string `json:"stale_for,omitempty"`
	EvidencePath string `json:"evidence,omitempty"`
	// Proof says, for a MET oracle, whether its evidence saw it fail at a
	// base first (proven), pass there too (vacuous) or was never run at
	// one (unproven); "" when the oracle is not MET.
	Proof Proof `json:"proof,omitempty"`
	// Evidence is the record the state comes from, if any.
	Evidence    *Evidence     `json:"result,omitempty"`
	Observation ObservationID `json:"observation,omitempty"`
}

// GateReport is every oracle of a feature at one candidate.
type GateReport struct {
	Feature      string          `json:"feature"`
	Candidate    string          `json:"candidate"`
	ContractPath string          `json:"contract_path"`
	Rows         []GateRow       `json:"rows"`
	NoOracle     []ExpectationID `json:"without_oracle"`
	// Notices are draft withdrawals and the like, for stderr.
	Notices []string `json:"-"`
}

// Passed reports whether every oracle is MET. An abandoned criterion is
// not a pass: it routes to a person, as verify's ABANDONED(n) does. A
// feature with no oracle passes vacuously.
func (r *GateReport) Passed() bool {
	for _, row := range r.Rows {
		if row.State != GateMet {
			return false
		}
	}
	return true
}

func newGateReport(c *Candidate) *GateReport {
	r := &GateReport{Feature: c.Feature, Candidate: c.Commit.String(), ContractPath: c.ContractPath,
		Rows: []GateRow{}, NoOracle: []ExpectationID{}}
	for _, cr := range c.Contract.Criteria {
		if cr.Oracle == nil {
			r.NoOracle = append(r.NoOracle, cr.ID)
			continue
		}
		r.Rows = append(r.Rows, GateRow{Expectation: cr.ID, Criterion: cr.Text, Check: cr.Oracle.Check,
			Expect: cr.Oracle.Expect, State: GatePending, Abandoned: c.Contract.Abandoned[cr.ID]})
	}
	return r
}

// Gates runs a feature's oracles and records what they showed.
type Gates struct {
	Store Store
	// Wall runs every oracle, in a job directory it makes and owns, with
	// the network denied; nothing else here starts a process.
	Wall sandbox.Jobs
	// WorkTree, when set, is the work tree of the candidate (HEAD): a run
	// says when it differs from the committed tree the gates judged.
	WorkTree string
	// Progress, when set, is told as each oracle starts (done false) and
	// ends (done true, with its row filled in and how long it took).
	Progress func(row *GateRow, done bool, took time.Duration)
	// Sign, when set, signs each evidence record the run writes (as
	// Examiner.Sign signs examinations).
	Sign func(message []byte) ([]byte, error)
	// Base, when set, is a revision (the card's BASE, the protected
	// branch) at which every oracle is also run, the same way, so that
	// the evidence shows whether the change made it pass (Proof).
	Base string
	// Timeout bounds each oracle; DefaultGateTimeout when zero.
	Timeout time.Duration
	// Jobs is how many oracles may run at once, each still in its own
	// export and its own job of the wall; 0 or 1 runs them one after
	// another. Evidence, rows and observations keep the contract's order
	// whatever order the runs end in; Progress is called from one
	// goroutine at a time.
	Jobs int
	// Now stamps the evidence. With Jobs > 1 it is called from the
	// goroutines of the runs, but one call at a time, so a clock that is
	// not safe for concurrent use (a test's stepping clock) may be given;
	// time.Now when nil.
	Now func() time.Time
}

func (g *Gates) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

// Run runs every oracle of the feature's contract at the candidate, each in
// a fresh export of the candidate's committed tree, records every outcome
// as evidence in one update of GateRef, and, when the feature has a draft
// examination, adds each outcome to it as a gate observation.
//
// It always runs: evidence already recorded is never trusted in place of a
// run. A contract that does not parse runs nothing at all. Abandoned
// criteria are not run. With Base, each oracle of the candidate's contract
// also runs in an export of the base's tree, exactly as at the candidate,
// and the evidence records both runs.
func (g *Gates) Run(ctx context.Context, t Target) (*GateReport, error) {
	cand, err := Load(g.Store, t)
	if err != nil {
		return nil, err
	}
	var base oid.ID
	if g.Base != "" {
		if base, err = g.Store.Resolve(g.Base); err != nil {
			return nil, err
		}
		if base == cand.Commit {
			return nil, refusal.New(refusal.PartInvalid, "pass the commit the change started from as --base (the card's BASE, or the protected branch)",
				"--base %s is the candidate %s itself: a run there cannot show that the change made an oracle pass", g.Base, cand.Commit.Short())
		}
	}
	rep := newGateReport(cand)
	if g.WorkTree != "" && len(rep.Rows) > 0 {
		if p, err := WorkTreeDiffers(g.Store, cand.Commit, g.WorkTree); err == nil && p != "" {
			rep.Notices = append(rep.Notices, fmt.Sprintf("the work tree differs from %s (%s, at least): the gates judge the commit, not uncommitted changes", cand.Commit.Short(), p))
		}
	}
	evs, err := g.runAll(ctx, cand, rep, base)
	if err != nil {
		return nil, err
	}
	if len(evs) == 0 {
		return rep, nil
	}
	msg := fmt.Sprintf("gate run %s at %s", cand.Feature, cand.Commit.Short())
	if _, err := g.Store.Change(ctx, GateRef, msg, func(tx gitstore.Edit) error {
		idx, err := loadGateLatest(tx, cand.Feature)
		if err != nil {
			return err
		}
		for _, ev := range evs {
			rec, err := ev.toWrite()
			if err != nil {
				return err
			}
			if ev.Signature, ev.message, err = signRecord(rec, g.Sign); err != nil {
				return err
			}
			if err := tx.Put(ev.Path, rec); err != nil {
				return err
			}
			idx.Criteria[ev.Expectation] = gateLatestEntry{Candidate: ev.Candidate, Path: ev.Path, State: ev.State, RanAt: ev.StartedAt}
		}
		rec, err := gitstore.NewRecord(KindGateLatest, 1, idx)
		if err != nil {
			return err
		}
		return tx.Put(gateLatestPath(cand.Feature), rec)
	}); err != nil {
		return nil, fmt.Errorf("record gate evidence of %s: %w", cand.Feature, err)
	}
	return rep, g.observe(ctx, cand, rep)
}

// runAll runs every oracle of rep not abandoned, at most g.Jobs at once,
// and returns their evidence in the contract's order. The first error
// cancels the runs still going and is returned once all have ended.
//
// With Jobs > 1, where oracles were asked to share the machine, the jobs
// of the next oracle are made and its trees exported while the current
// ones run, and each oracle's jobs are removed while the next runs: the
// directories and the exports are each run's own as before, only no run
// waits for them, and at most Jobs+1 oracles have jobs at any time. With
// one at a time (the default) nothing is made ahead: an oracle's jobs
// are made once the last one's are removed, so it has the machine to
// itself, and no oracle runs while another's export waits on disk (where
// the wall cannot hide the job directories, one could write into it).
// Every job is removed before runAll returns.
func (g *Gates) runAll(ctx context.Context, cand *Candidate, rep *GateReport, base oid.ID) ([]*Evidence, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := max(g.Jobs, 1)
	// held is taken before an oracle's jobs are made and given back once
	// they are removed: it bounds the directories and exports on disk,
	// to the oracles running and, when they share the machine, one ahead.
	ahead := 0
	if jobs > 1 {
		ahead = 1
	}
	held := make(chan struct{}, jobs+ahead)
	var removing sync.WaitGroup
	defer removing.Wait()
	release := func(oj *oracleJobs) {
		removing.Add(1)
		go func() {
			defer removing.Done()
			oj.close()
			<-held
		}()
	}
	var failM sync.Mutex
	var failed error // the first error, not the cancels it caused
	fail := func(row *GateRow, err error) {
		failM.Lock()
		if failed == nil {
			failed = fmt.Errorf("gate %s %s: %w", cand.Feature, row.Expectation, err)
		}
		failM.Unlock()
		cancel()
	}
	// Unbuffered, and received only with a slot taken: the maker waits
	// with one oracle made ahead, not more.
	ready := make(chan *oracleJobs)
	go g.prepareAll(ctx, cand, rep, base, held, ready, release, fail)

	evs := make([]*Evidence, len(rep.Rows))
	slots := make(chan struct{}, jobs)
	// A lane for each run at once, where the wall makes them: one helper
	// runs its oracles in turn, each still in its own job, view and IPC
	// namespace, and nothing of one left when the next starts
	// (sandbox.Lane).
	var lanes chan *sandbox.Lane
	if ls, ok := g.Wall.(sandbox.Lanes); ok {
		lanes = make(chan *sandbox.Lane, jobs)
		for i := range jobs {
			l := ls.NewLane()
			if i < countRun(rep) {
				// Its helper starts while the first oracles are exported.
				l.Warm(true)
			}
			lanes <- l
		}
		defer func() {
			for range jobs {
				(<-lanes).Close()
			}
		}()
	}
	var progress, clock sync.Mutex
	now := func() time.Time {
		clock.Lock()
		defer clock.Unlock()
		return g.now()
	}
	tell := func(row *GateRow, done bool, took time.Duration) {
		if g.Progress != nil {
			progress.Lock()
			defer progress.Unlock()
			g.Progress(row, done, took)
		}
	}
	var wg sync.WaitGroup
	for {
		slots <- struct{}{}
		oj, ok := <-ready
		if !ok {
			<-slots
			break
		}
		if ctx.Err() != nil {
			<-slots
			release(oj) // made before the cancel reached the maker
			continue
		}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			defer release(oj)
			tell(oj.row, false, 0)
			began := time.Now()
			var lane *sandbox.Lane
			if lanes != nil {
				lane = <-lanes
				defer func() { lanes <- lane }()
			}
			ev, err := g.runOne(ctx, cand, oj, base, lane)
			if err == nil {
				err = ev.name(now())
			}
			if err != nil {
				fail(oj.row, err)
				return
			}
			oj.row.setFrom(ev)
			evs[oj.index] = ev
			tell(oj.row, true, time.Since(began))
		}()
	}
	wg.Wait()
	if failed != nil {
		return nil, failed
	}
	var out []*Evidence
	for _, ev := range evs {
		if ev != nil {
			out = append(out, ev)
		}
	}
	if err := ctx.Err(); err != nil && len(out) < countRun(rep) {
		// Canceled by the caller before every oracle ran.
		return nil, err
	}
	return out, nil
}

// oracleJobs are the jobs one oracle runs in, made and filled ahead: at
// the base (when there is one) and at the candidate, each its own job
// with its own export. Only an oracle whose jobs were all made is run.
type oracleJobs struct {
	index    int
	row      *GateRow
	base, at *sandbox.Job
}

// make makes the oracle's jobs: at base, when it is not zero, and at
// the candidate.
func (oj *oracleJobs) make(g *Gates, cand, base oid.ID) error {
	var err error
	if !base.IsZero() {
		if oj.base, err = g.exportJob(base); err != nil {
			return fmt.Errorf("at base %s: %w", base.Short(), err)
		}
	}
	oj.at, err = g.exportJob(cand)
	return err
}

// close removes the oracle's jobs.
func (oj *oracleJobs) close() {
	for _, j := range []*sandbox.Job{oj.base, oj.at} {
		if j != nil {
			j.Close()
		}
	}
}

// prepareAll makes the jobs of every oracle of rep not abandoned, in the
// contract's order, each once it holds a place in held, and sends them on
// ready, which it closes; it stops making them once ctx ends, and hands
// what it made but could not send to release. A job that cannot be made
// is told to fail at once, which ends the runs going: it does not wait
// for its oracle's turn.
func (g *Gates) prepareAll(ctx context.Context, cand *Candidate, rep *GateReport, base oid.ID, held chan<- struct{}, ready chan<- *oracleJobs,
	release func(*oracleJobs), fail func(*GateRow, error)) {
	defer close(ready)
	for i := range rep.Rows {
		row := &rep.Rows[i]
		if row.Abandoned != "" {
			row.State, row.Note = GateAbandoned, "not run: "+row.Abandoned
			continue
		}
		select {
		case held <- struct{}{}:
		case <-ctx.Done():
			return
		}
		oj := &oracleJobs{index: i, row: row}
		if err := oj.make(g, cand.Commit, base); err != nil {
			fail(row, err)
			release(oj)
			return
		}
		select {
		case ready <- oj:
		case <-ctx.Done():
			release(oj)
			return
		}
	}
}

// exportJob makes a fresh job of the wall holding commit's tree in its
// Work directory.
func (g *Gates) exportJob(commit oid.ID) (*sandbox.Job, error) {
	job, err := g.Wall.NewJob()
	if err != nil {
		return nil, err
	}
	if err := ExportTree(g.Store, commit, job.Work); err != nil {
		job.Close()
		return nil, err
	}
	return job, nil
}

// countRun is how many oracles of rep are to run: those not abandoned.
func countRun(rep *GateReport) int {
	n := 0
	for _, r := range rep.Rows {
		if r.Abandoned == "" {
			n++
		}
	}
	return n
}

// observe adds each outcome to the feature's draft, if it has one.
func (g *Gates) observe(ctx context.Context, cand *Candidate, rep *GateReport) error {
	x := &Examiner{Store: g.Store, Now: g.Now}
	// The head alone says whether there is a draft: its observations are
	// not read to add to them.
	dtx, err := g.Store.Records(DraftsRef)
	if err != nil {
		return err
	}
	d, err := loadDraft(g.Store, dtx, cand.Feature)
	if err != nil {
		return err
	}
	if d == nil {
		rep.Notices = append(rep.Notices, fmt.Sprintf("no draft of %s is open: the evidence is recorded, not added to one (git nwdes examine open --feature %s, then run the gates again)", cand.Feature, cand.Feature))
		return nil
	}
	t := Target{Feature: cand.Feature, Candidate: cand.Commit.String(), Contract: cand.ContractPath}
	for i := range rep.Rows {
		row := &rep.Rows[i]
		if row.Evidence == nil {
			continue
		}
		res, err := x.addGateObservation(ctx, t, row.Evidence)
		if errors.Is(err, ErrNoDraft) {
			return nil // the draft went away meanwhile
		}
		if r, ok := refusal.As(err); ok && r.Name == refusal.CandidateMoved {
			rep.Notices = append(rep.Notices, "evidence recorded, but not added to the draft: "+r.Detail+" ("+r.Remedy+")")
			return nil
		}
		if err != nil {
			return fmt.Errorf("evidence recorded, but adding it to the draft of %s failed: %w", cand.Feature, err)
		}
		row.Observation = ObservationID(res.Message)
		rep.Notices = append(rep.Notices, res.Notices...)
	}
	return nil
}

// runOne runs one oracle in its jobs: at base (first, the same way), when
// base is not zero, then at the candidate, through lane when it is not
// nil, and returns the evidence, not yet named. Its caller removes the
// jobs.
func (g *Gates) runOne(ctx context.Context, cand *Candidate, oj *oracleJobs, base oid.ID, lane *sandbox.Lane) (*Evidence, error) {
	row := oj.row
	ev := &Evidence{Feature: cand.Feature, Expectation: row.Expectation, Candidate: cand.Commit.String(),
		ContractPath: cand.ContractPath, Check: row.Check, Expect: row.Expect}
	if !base.IsZero() {
		run, err := g.runAt(ctx, lane, oj.base, row)
		if err != nil {
			return nil, fmt.Errorf("at base %s: %w", base.Short(), err)
		}
		ev.Base = &BaseRun{Commit: base.String(), OracleRun: *run}
	}
	run, err := g.runAt(ctx, lane, oj.at, row)
	if err != nil {
		return nil, err
	}
	ev.OracleRun = *run
	return ev, nil
}

// name makes the evidence's record and names it: its path is stamped
// with at and holds the record's content id.
func (e *Evidence) name(at time.Time) error {
	rec, err := e.record()
	if err != nil {
		return err
	}
	e.made = rec
	e.Path = evidenceDir(e.Candidate, e.Feature, e.Expectation) + "/" + stamp(at) + "-" + contentID(rec.Body)
	return nil
}

// runAt runs one oracle in job, which holds the export of a commit's
// tree, through lane when it is not nil: the candidate and the base are
// run by this one path.
func (g *Gates) runAt(ctx context.Context, lane *sandbox.Lane, job *sandbox.Job, row *GateRow) (*OracleRun, error) {
	timeout := g.Timeout
	if timeout <= 0 {
		timeout = DefaultGateTimeout
	}
	out, errOut := newMarkerWatch(row.Expect), newMarkerWatch(row.Expect)
	cmd := sandbox.Command{
		Args: sandbox.Shell(row.Check), Dir: job.Work, JobAt: sandbox.FixedJobDir, NoNetwork: true, Deadline: timeout, Stdout: out, Stderr: errOut,
	}
	var res sandbox.Result
	var err error
	if lane != nil {
		res, err = lane.Run(ctx, job, cmd)
	} else {
		res, err = job.Run(ctx, cmd)
	}
	if err != nil {
		return nil, err
	}
	enforced := res.Enforced
	run := &OracleRun{
		State: GateNotMet, End: res.End, ExitStatus: res.ExitCode, Signal: res.Signal, StartError: res.Err,
		MarkerFound: out.found, MarkerOnStderr: errOut.found && !out.found,
		StartedAt: res.Started.UTC().Format(time.RFC3339Nano), DurationMS: res.Duration.Milliseconds(),
		TimeoutMS: timeout.Milliseconds(), OutputCut: res.OutputCut,
		Stdout: OutputDigest{Bytes: res.Stdout.Bytes, SHA256: res.Stdout.SHA256, TailBytes: len(res.Stdout.Tail)},
		Stderr: OutputDigest{Bytes: res.Stderr.Bytes, SHA256: res.Stderr.SHA256, TailBytes: len(res.Stderr.Tail)},
		Wall:   res.Refused, Survivors: res.Survivors, Enforced: &enforced,
		StdoutTail: res.Stdout.Tail, StderrTail: res.Stderr.Tail,
	}
	// A run is clean only if nothing outlived it and its whole output was
	// read: otherwise the marker may not be the whole story.
	if res.End == sandbox.EndExit && res.ExitCode == 0 && out.found && res.Survivors == 0 && !res.OutputCut {
		run.State = GateMet
	}
	return run, nil
}

// FailureTail is the end of a run's output, at most n lines of each of
// them cut at 160 characters and made safe for a terminal: the standard
// error's when it wrote any, else the standard output's.
func (e *Evidence) FailureTail(n int) []string {
	for _, b := range [][]byte{e.StderrTail, e.StdoutTail} {
		lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		if len(lines) == 1 && lines[0] == "" {
			continue
		}
		if len(lines) > n {
			lines = lines[len(lines)-n:]
		}
		for i, l := range lines {
			lines[i] = text.TerminalLine(text.Truncate(l, 160))
		}
		return lines
	}
	return nil
}

// ObservationText renders the evidence as a draft observation: what ran,
// how it ended, where the record is, and the end of each stream.
func (e *Evidence) ObservationText() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "gate %s %s: %s\n", e.Expectation, e.State, e.Summary())
	fmt.Fprintf(&b, "check: %s\nexpect: %s\ncandidate: %s\n", e.Check, e.Expect, e.Candidate)
	fmt.Fprintf(&b, "duration: %s (timeout %s)\n", time.Duration(e.DurationMS)*time.Millisecond, time.Duration(e.TimeoutMS)*time.Millisecond)
	fmt.Fprintf(&b, "stdout: %d bytes, sha256 %s\nstderr: %d bytes, sha256 %s\n", e.Stdout.Bytes, e.Stdout.SHA256, e.Stderr.Bytes, e.Stderr.SHA256)
	if e.Enforced != nil {
		fmt.Fprintf(&b, "wall: %s\n", e.Enforced.Summary())
	} else {
		b.WriteString("wall: none (recorded before nwdes ran oracles inside the wall)\n")
	}
	if e.Base != nil {
		fmt.Fprintf(&b, "base: %s %s: %s\n", e.Base.Commit, e.Base.State, e.Base.Summary())
		if p := e.Proof(); p != "" {
			fmt.Fprintf(&b, "proof: %s\n", p)
		}
	}
	fmt.Fprintf(&b, "evidence: %s\n", e.Location())
	for _, s := range []struct {
		name string
		tail []byte
		all  int64
	}{{"stdout", e.StdoutTail, e.Stdout.Bytes}, {"stderr", e.StderrTail, e.Stderr.Bytes}} {
		if len(s.tail) == 0 {
			continue
		}
		t := s.tail
		if len(t) > observationTail {
			t = t[len(t)-observationTail:]
		}
		if int64(len(t)) < s.all {
			fmt.Fprintf(&b, "%s, last %d bytes:\n", s.name, len(t))
		} else {
			fmt.Fprintf(&b, "%s:\n", s.name)
		}
		b.Write(t)
		if t[len(t)-1] != '\n' {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// markerWatch reports whether a marker occurs anywhere in a stream written
// to it in chunks of any size, keeping only the last len(marker)-1 bytes.
type markerWatch struct {
	marker []byte
	carry  []byte
	found  bool
}

func newMarkerWatch(marker string) *markerWatch { return &markerWatch{marker: []byte(marker)} }

func (m *markerWatch) Write(p []byte) (int, error) {
	if m.found || len(m.marker) == 0 {
		m.found = m.found || len(m.marker) == 0
		return len(p), nil
	}
	buf := append(m.carry, p...)
	if bytes.Contains(buf, m.marker) {
		m.found, m.carry = true, nil
		return len(p), nil
	}
	keep := len(m.marker) - 1
	if len(buf) > keep {
		buf = buf[len(buf)-keep:]
	}
	m.carry = append(m.carry[:0:0], buf...)
	return len(p), nil
}

// GateStatus reports, without running anything and without writing, the
// state of every oracle of the feature at the candidate, from the newest
// evidence recorded for that commit and that exact oracle. Evidence only
// for another commit (or for another command or marker) leaves the state
// pending, and the note says why.
func GateStatus(st Reading, t Target) (*GateReport, error) {
	return GateStatusAt(st, t, oid.Zero)
}

// GateStatusAt is GateStatus with the evidence as it is at commit tip of
// GateRef (zero: the ref's tip, its history checked as
// gitstore.CheckHistory checks it): a server judges the evidence pushed
// alongside a branch before either ref moves, having checked that history
// itself.
func GateStatusAt(st Reading, t Target, tip oid.ID) (*GateReport, error) {
	cand, err := Load(st, t)
	if err != nil {
		return nil, err
	}
	return gateStatusOf(cand, func() (gitstore.View, error) { return gateView(st, tip) })
}

// gateView is GateRef at tip (zero: the ref's tip, its history verified).
func gateView(st Records, tip oid.ID) (gitstore.View, error) {
	if tip.IsZero() {
		// The evidence judged is a history this clone verified.
		return st.VerifiedRecords(GateRef)
	}
	return st.RecordsAt(GateRef, tip)
}

// gateStatusOf is GateStatus of a loaded candidate, reading the evidence
// from view only when the contract has an oracle.
func gateStatusOf(cand *Candidate, view func() (gitstore.View, error)) (*GateReport, error) {
	rep := newGateReport(cand)
	if len(rep.Rows) == 0 {
		return rep, nil
	}
	tx, err := view()
	if err != nil {
		return nil, err
	}
	idx, err := loadGateLatest(tx, cand.Feature)
	if err != nil {
		return nil, err
	}
	for i := range rep.Rows {
		row := &rep.Rows[i]
		ev, err := latestEvidence(tx, rep.Candidate, cand.Feature, row.Expectation)
		if err != nil {
			return nil, err
		}
		judgeRow(row, ev, idx.Criteria[row.Expectation], rep.Candidate)
		if row.Abandoned != "" {
			row.State, row.Note = GateAbandoned, "not run: "+row.Abandoned
		}
	}
	return rep, nil
}

// setFrom sets the row from evidence of its very oracle at the candidate.
func (row *GateRow) setFrom(ev *Evidence) {
	row.State, row.Note, row.Evidence, row.EvidencePath, row.Proof = ev.State, ev.Summary(), ev, ev.Location(), ev.Proof()
}

// judgeRow sets a row's state from the newest evidence at the candidate,
// falling back on the feature's index to say that evidence is stale.
func judgeRow(row *GateRow, ev *Evidence, latest gateLatestEntry, candidate string) {
	switch {
	case ev != nil && ev.Check == row.Check && ev.Expect == row.Expect:
		row.setFrom(ev)
	case ev != nil:
		row.State, row.EvidencePath = GatePending, ev.Location()
		row.Note = fmt.Sprintf("the newest evidence at this candidate ran another oracle (%q expecting %q); run git nwdes gate run", ev.Check, ev.Expect)
	case latest.Candidate != "" && latest.Candidate != candidate:
		row.State, row.StaleFor = GatePending, latest.Candidate
		row.Note = fmt.Sprintf("stale: evidence is for %s, not this candidate; run git nwdes gate run", text.Short(latest.Candidate))
	default:
		row.State, row.Note = GatePending, "never run at this candidate; run git nwdes gate run"
	}
}
