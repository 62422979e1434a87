package examine

import (
	"fmt"
	"strings"
	"time"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/refusal"
	"github.com/nwdes/nwdes/sandbox"
)

// Records are input: anyone with push access wrote them. Every reader
// checks, right after decoding, the shape of every field it will use (ids
// of the right length, names, times, enumerations) and that the record is
// where its own content says it belongs, so that no later slice, lookup or
// ordering acts on a value it did not check. CheckRecord runs the same
// checks for fsck.

// malformed is the one refusal for a record whose content is not what its
// kind says.
func malformed(path, format string, args ...any) error {
	return refusal.NewUnreadable(refusal.RecordMalformed, "run git nwdes fsck; restore the ref from a clone that has it whole",
		"%s: %s", path, fmt.Sprintf(format, args...))
}

// isFullID reports whether s is a full lower-case object id: 40 digits
// (SHA-1) or 64 (SHA-256). Which format the repository uses is the git
// layer's to check when the id is read: it refuses the other by name.
func isFullID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !(s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
			return false
		}
	}
	return true
}

func validExpectation(id ExpectationID) bool { return idRef.MatchString(string(id)) }

func validVerdict(v Verdict) bool { return v == Met || v == Unmet || v == NotExamined }

func validOutcome(o Outcome) bool { return o == Accepted || o == Rejected || o == Indeterminate }

// recordName checks that the last element of path is the
// "<stamp>-<content id>" that the record's own time and body give: a
// record renamed (to sort first or last) or edited in place is refused.
func recordName(path string, at time.Time, body []byte) error {
	name := path[strings.LastIndexByte(path, '/')+1:]
	if want := stamp(at) + "-" + contentID(body); name != want {
		return malformed(path, "the record's name is %q, but its time and content name it %q", name, want)
	}
	return nil
}

func (ex *Examination) validate(path string, body []byte) error {
	if err := ValidFeature(ex.Feature); err != nil {
		return malformed(path, "feature %q is not a feature name", ex.Feature)
	}
	if !isFullID(ex.Candidate) || !isFullID(ex.ContractBlob) {
		return malformed(path, "candidate %q or contract_blob %q is not an object id", ex.Candidate, ex.ContractBlob)
	}
	if !validOutcome(ex.Outcome) {
		return malformed(path, "outcome %q is not accepted, rejected or indeterminate", ex.Outcome)
	}
	closed, err := time.Parse(closedLayout, ex.ClosedAt)
	if err != nil {
		return malformed(path, "closed_at %q is not a time", ex.ClosedAt)
	}
	if dir := publishedDir(ex.Candidate, ex.Feature) + "/"; !strings.HasPrefix(path, dir) || strings.Contains(path[len(dir):], "/") {
		return malformed(path, "an examination of %s at %s belongs under %s", ex.Feature, ex.Candidate, dir)
	}
	if err := recordName(path, closed, body); err != nil {
		return err
	}
	seen := map[ExpectationID]bool{}
	for _, r := range ex.Rows {
		if !validExpectation(r.Expectation) || seen[r.Expectation] {
			return malformed(path, "row %q is not a criterion id, or appears twice", r.Expectation)
		}
		seen[r.Expectation] = true
		if !validVerdict(r.Verdict) {
			return malformed(path, "%s has verdict %q", r.Expectation, r.Verdict)
		}
		for _, c := range r.Cites {
			if c < 0 || c >= len(ex.Texts) {
				return malformed(path, "%s cites text %d of %d", r.Expectation, c, len(ex.Texts))
			}
		}
	}
	// Whether the outcome is the one the rows derive is a question of the
	// examination's standing (an invalid examination, reported per
	// feature), not of the record's shape.
	for i, t := range ex.Texts {
		if t.Source != SourceExaminer && t.Source != SourceGate {
			return malformed(path, "text %d has source %q", i+1, t.Source)
		}
		if _, ok := observationNumber(t.ID); t.ID != "" && !ok {
			return malformed(path, "text %d has observation id %q", i+1, t.ID)
		}
		if t.Commit != "" && (!isFullID(t.Commit) || t.Commit == ex.Candidate) {
			return malformed(path, "text %d was carried from %q, which is not another commit", i+1, t.Commit)
		}
	}
	return nil
}

func (l *latestBody) validate(path, feature string) error {
	if !isFullID(l.Candidate) || !validOutcome(l.Outcome) {
		return malformed(path, "candidate %q or outcome %q is malformed", l.Candidate, l.Outcome)
	}
	if _, err := time.Parse(closedLayout, l.ClosedAt); err != nil {
		return malformed(path, "closed_at %q is not a time", l.ClosedAt)
	}
	if dir := publishedDir(l.Candidate, feature) + "/"; !strings.HasPrefix(l.Path, dir) || strings.Contains(l.Path[len(dir):], "/") {
		return malformed(path, "names %q, which is not an examination of %s at %s", l.Path, feature, l.Candidate)
	}
	return nil
}

func (d *Draft) validate(path string) error {
	if err := ValidFeature(d.Feature); err != nil || path != draftPath(d.Feature) {
		return malformed(path, "a draft of %q belongs at %s", d.Feature, draftPath(d.Feature))
	}
	if d.Candidate != "" && !isFullID(d.Candidate) {
		return malformed(path, "candidate %q is not an object id", d.Candidate)
	}
	issued := map[ObservationID]bool{}
	for _, o := range d.Observations {
		n, ok := observationNumber(o.ID)
		if !ok || issued[o.ID] {
			return malformed(path, "observation id %q is malformed or appears twice", o.ID)
		}
		if n >= d.NextID {
			// The next add would issue this id again, and overwrite cited
			// evidence.
			return malformed(path, "next_id %d is not above issued observation %s", d.NextID, o.ID)
		}
		if p := o.problem(); p != "" {
			return malformed(path, "%s", p)
		}
		issued[o.ID] = true
	}
	if d.NextID < 1 {
		return malformed(path, "next_id %d is below 1", d.NextID)
	}
	seen := map[ExpectationID]bool{}
	for _, v := range d.Verdicts {
		if !validExpectation(v.Expectation) || seen[v.Expectation] || !validVerdict(v.Verdict) {
			return malformed(path, "verdict row %q (%q) is malformed or appears twice", v.Expectation, v.Verdict)
		}
		seen[v.Expectation] = true
		for _, o := range v.Observations {
			if _, ok := observationNumber(o); !ok {
				return malformed(path, "%s cites %q, which is not an observation id", v.Expectation, o)
			}
		}
	}
	for _, r := range d.Rows {
		if !validExpectation(r) {
			return malformed(path, "row %q is not a criterion id", r)
		}
	}
	return nil
}

// observationNumber reads O<n> (obsID), by hand: fsck reads one for
// every name of a draft's highest group at every version of the draft.
func observationNumber(id ObservationID) (int, bool) {
	if len(id) < 2 || len(id) > 19 || id[0] != 'O' || id[1] == '0' {
		return 0, false
	}
	n := 0
	for _, c := range []byte(id[1:]) {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func (e *Evidence) validate(path string, body []byte) error {
	if err := ValidFeature(e.Feature); err != nil || !validExpectation(e.Expectation) || !isFullID(e.Candidate) {
		return malformed(path, "feature %q, expectation %q or candidate %q is malformed", e.Feature, e.Expectation, e.Candidate)
	}
	if p := e.OracleRun.problem(); p != "" {
		return malformed(path, "%s", p)
	}
	if b := e.Base; b != nil {
		if !isFullID(b.Commit) || b.Commit == e.Candidate {
			return malformed(path, "base %q is not an object id other than the candidate's", b.Commit)
		}
		if p := b.OracleRun.problem(); p != "" {
			return malformed(path, "base: %s", p)
		}
	}
	if dir := evidenceDir(e.Candidate, e.Feature, e.Expectation) + "/"; !strings.HasPrefix(path, dir) || strings.Contains(path[len(dir):], "/") {
		return malformed(path, "evidence of %s %s at %s belongs under %s", e.Feature, e.Expectation, e.Candidate, dir)
	}
	name := path[strings.LastIndexByte(path, '/')+1:]
	if _, id, ok := strings.Cut(name, "-"); !ok || id != contentID(body) {
		return malformed(path, "the record's name does not end in its content id %s", contentID(body))
	}
	return nil
}

// problem says what is wrong with a recorded run, or "".
func (r *OracleRun) problem() string {
	if r.State != GateMet && r.State != GateNotMet {
		return fmt.Sprintf("state %q is not MET or NOT-MET", r.State)
	}
	switch r.End {
	case sandbox.EndExit, sandbox.EndSignal, sandbox.EndDeadline, sandbox.EndWall, sandbox.EndStartFailed:
	default:
		return fmt.Sprintf("end %q is not a way a run ends", r.End)
	}
	if r.State == GateMet && (r.End != sandbox.EndExit || r.ExitStatus != 0 || !r.MarkerFound || r.Survivors != 0 || r.OutputCut) {
		return fmt.Sprintf("state MET, but the run it records (end %s, exit %d, marker %v) is not a pass", r.End, r.ExitStatus, r.MarkerFound)
	}
	if _, err := time.Parse(time.RFC3339Nano, r.StartedAt); err != nil {
		return fmt.Sprintf("started_at %q is not a time", r.StartedAt)
	}
	return ""
}

func (l *gateLatest) validate(path string) error {
	if err := ValidFeature(l.Feature); err != nil || path != gateLatestPath(l.Feature) {
		return malformed(path, "a gate index of %q belongs at %s", l.Feature, gateLatestPath(l.Feature))
	}
	for id, e := range l.Criteria {
		if !validExpectation(id) || !isFullID(e.Candidate) || (e.State != GateMet && e.State != GateNotMet) {
			return malformed(path, "entry %q is malformed", id)
		}
	}
	return nil
}

func (r *VerifyResult) validate(path string, body []byte) error {
	if err := ValidFeature(r.Feature); err != nil || !isFullID(r.Head) || (r.Base != "" && !isFullID(r.Base)) {
		return malformed(path, "feature %q, head %q or base %q is malformed", r.Feature, r.Head, r.Base)
	}
	if r.ContractBlob != "" && !isFullID(r.ContractBlob) {
		return malformed(path, "contract_blob %q is not an object id", r.ContractBlob)
	}
	switch r.Verdict {
	case VerdictConforme, VerdictEcarts, VerdictAbandoned, VerdictError:
	default:
		return malformed(path, "verdict %q is unknown", r.Verdict)
	}
	if dir := verifyDir(r.Head, r.Feature) + "/"; !strings.HasPrefix(path, dir) || strings.Contains(path[len(dir):], "/") {
		return malformed(path, "a verify of %s at %s belongs under %s", r.Feature, r.Head, dir)
	}
	name := path[strings.LastIndexByte(path, '/')+1:]
	if _, id, ok := strings.Cut(name, "-"); !ok || id != contentID(body) {
		return malformed(path, "the record's name does not end in its content id %s", contentID(body))
	}
	return nil
}

// CheckRecord is fsck's check of one record of this package's kinds: it
// decodes it as its reader would and runs the same validation, so that
// fsck names every record a reader would refuse.
func CheckRecord(tx gitstore.View, path string, rec *gitstore.Record) error {
	switch rec.Kind {
	case KindExamination:
		ex, err := examinationFrom(path, rec)
		if err != nil {
			return err
		}
		if p := checkVerdicts(ex); p != "" {
			return malformed(path, "%s", p)
		}
		_, err = ex.Signer()
		return err
	case KindLatest:
		l, err := latestFrom(path, rec)
		if err != nil {
			return err
		}
		if _, err := readExamination(tx, l.Path); err != nil {
			return malformed(path, "names %s, which cannot be read: %v", l.Path, err)
		}
		return nil
	case KindDraft:
		d, err := draftFrom(path, rec, tx)
		if err != nil || rec.V < 3 {
			return err
		}
		return checkDraftHead(tx, path, d)
	case KindObservation:
		return checkObservation(tx, path, rec)
	case KindProjection:
		_, err := projectionFrom(path, rec)
		return err
	case KindWorkspace:
		_, err := workspaceFrom(path, rec)
		return err
	case KindEvidence:
		ev, err := evidenceFrom(path, rec)
		if err != nil {
			return err
		}
		_, err = ev.Signer()
		return err
	case KindGateLatest:
		l, err := gateLatestFrom(path, rec)
		if err != nil {
			return err
		}
		for id, e := range l.Criteria {
			if _, err := readEvidence(tx, e.Path); err != nil {
				return malformed(path, "%s names %s, which cannot be read: %v", id, e.Path, err)
			}
		}
		return nil
	case KindVerifyResult:
		_, err := verifyFrom(path, rec)
		return err
	}
	return nil
}
