package examine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nwdes/nwdes/gitstore/oid"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/refusal"
)

// CriterionStatus is verify's judgment of one criterion.
type CriterionStatus string

const (
	StatusMet          CriterionStatus = "MET"
	StatusNotMet       CriterionStatus = "NOT-MET"
	StatusUnverifiable CriterionStatus = "UNVERIFIABLE"
	StatusAbandoned    CriterionStatus = "ABANDONED"
)

// VerifyVerdict is verify's verdict kind; the count or reason goes beside.
type VerifyVerdict string

const (
	VerdictConforme  VerifyVerdict = "CONFORME"
	VerdictEcarts    VerifyVerdict = "ECARTS"
	VerdictAbandoned VerifyVerdict = "ABANDONED"
	VerdictError     VerifyVerdict = "ERROR"
)

// VerifyRow is one criterion's line in the verify block.
type VerifyRow struct {
	Expectation ExpectationID   `json:"expectation"`
	Criterion   string          `json:"criterion"`
	Status      CriterionStatus `json:"status"`
	// Detail is everything the line says after its status: the evidence
	// of a MET, "expected … / actual … — location" of a NOT-MET, the reason
	// of an UNVERIFIABLE or an ABANDONED.
	Detail string `json:"detail"`
	// Record is the evidence or examination judged from ("ref:path").
	Record string `json:"record,omitempty"`
}

// VerifyResult is one verify: the verdict over a diff, judged from recorded
// evidence and published examinations only.
type VerifyResult struct {
	Feature string `json:"feature"`
	Range   string `json:"range"`
	// Base is the commit the diff starts from: BASE for BASE..HEAD, the
	// merge base of BASE and HEAD for BASE...HEAD.
	Base         string        `json:"base"`
	Head         string        `json:"head"`
	ContractPath string        `json:"contract_path"`
	ContractBlob string        `json:"contract_blob,omitempty"`
	Verdict      VerifyVerdict `json:"verdict"`
	// Count is n of ECARTS(n) and ABANDONED(n).
	Count int `json:"count"`
	// Reason is the reason of ERROR(reason).
	Reason     string      `json:"reason,omitempty"`
	Rows       []VerifyRow `json:"rows"`
	InScope    int         `json:"in_scope"`
	OutOfScope []string    `json:"out_of_scope"`
	FilesRead  int         `json:"files_read"`
	At         string      `json:"at"`

	// Path is where the record lives in GateRef (not stored in the body).
	Path string `json:"-"`
}

// Token is the verdict as the VERDICT line spells it: CONFORME,
// ECARTS(n), ABANDONED(n) or ERROR(reason).
func (r *VerifyResult) Token() string {
	switch r.Verdict {
	case VerdictEcarts, VerdictAbandoned:
		return fmt.Sprintf("%s(%d)", r.Verdict, r.Count)
	case VerdictError:
		// The reason sits inside the token's parentheses: brackets stand in
		// for its own, so a reader can take everything up to the first ")".
		return fmt.Sprintf("ERROR(%s)", strings.NewReplacer("(", "[", ")", "]").Replace(r.Reason))
	}
	return string(r.Verdict)
}

// Render prints the verify block in the verifier's grammar. An ERROR block
// stops after the CONTRACT line.
func (r *VerifyResult) Render() string {
	var b strings.Builder
	fmt.Fprintf(&b, "VERIFY — VERDICT: %s\n", r.Token())
	fmt.Fprintf(&b, "CONTRACT: %s\n", r.ContractPath)
	if r.Verdict == VerdictError {
		return b.String()
	}
	b.WriteString("CRITERIA:\n")
	for _, row := range r.Rows {
		fmt.Fprintf(&b, "  %s. %s — %s — %s\n", row.Expectation, text.OneLine(row.Criterion), row.Status, row.Detail)
	}
	out := "none"
	if len(r.OutOfScope) > 0 {
		names := make([]string, len(r.OutOfScope))
		for i, p := range r.OutOfScope {
			names[i] = quotePath(p)
		}
		out = strings.Join(names, ", ")
	}
	fmt.Fprintf(&b, "SCOPE: in-scope %d files; out-of-scope: %s\n", r.InScope, out)
	fmt.Fprintf(&b, "PROOF: read %d files, ran nothing, checked %d/%d criteria\n", r.FilesRead, len(r.Rows), len(r.Rows))
	return b.String()
}

// quotePath quotes a path only when it could be misread in a list.
func quotePath(p string) string {
	if strings.ContainsAny(p, ", \"\\") || strconv.Quote(p) != `"`+p+`"` {
		return strconv.Quote(p)
	}
	return p
}

// Verifier judges a diff against a feature's contract. It never runs a
// command: oracles are judged from the evidence gate run recorded, the
// other criteria from the published examination.
type Verifier struct {
	Store Store
	// Now stamps the recorded result.
	Now func() time.Time
	// Rules hold the examination to what the judgment holds it to (the
	// signing policy of the protected branch, with --against), so that
	// verify never takes the word of an examination the judgment refuses.
	Rules Rules
}

// VerifyInput names what to verify: a feature, a range BASE...HEAD (files
// touched since the merge base) or BASE..HEAD (since BASE), and the
// contract path at HEAD (the default when empty).
type VerifyInput struct {
	Feature  string
	Diff     string
	Contract string
}

// Verify judges the diff, records the result in GateRef and returns it.
// A missing or malformed contract is the verdict ERROR, recorded like any
// other; a range that does not resolve is refused.
func (v *Verifier) Verify(ctx context.Context, in VerifyInput) (*VerifyResult, error) {
	if err := ValidFeature(in.Feature); err != nil {
		return nil, err
	}
	base, head, err := v.resolveRange(in.Diff)
	if err != nil {
		return nil, err
	}
	now := time.Now
	if v.Now != nil {
		now = v.Now
	}
	r := &VerifyResult{Feature: in.Feature, Range: in.Diff, Base: base.String(), Head: head.String(),
		ContractPath: in.Contract, Rows: []VerifyRow{}, OutOfScope: []string{}, At: now().UTC().Format(time.RFC3339)}
	if r.ContractPath == "" {
		r.ContractPath = DefaultContractPath(in.Feature)
	}
	c, err := v.judge(r, base, head)
	if err != nil {
		return nil, err
	}
	if c == nil {
		r.Verdict = VerdictError
	}
	if err := v.record(ctx, r, now()); err != nil {
		return nil, err
	}
	return r, nil
}

// judge fills r; it returns a nil contract (and r.Reason) for ERROR.
func (v *Verifier) judge(r *VerifyResult, base, head oid.ID) (*Contract, error) {
	f, err := v.Store.ReadFile(head, r.ContractPath)
	if errors.Is(err, gitstore.ErrNotFound) {
		r.Reason = fmt.Sprintf("contract %s is missing at %s", r.ContractPath, text.Short(r.Head))
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	r.ContractBlob = f.Blob.String()
	c, err := ParseContract(r.ContractPath, f.Data)
	if err != nil {
		if rf, ok := refusal.As(err); ok {
			r.Reason = "contract unreadable: " + rf.Detail
			return nil, nil
		}
		return nil, err
	}
	r.FilesRead = 1
	// The commit's contracts are read as the judgment reads them: what
	// cannot be enforced there (a look-alike directory, a symbolic link)
	// fails verify as it fails status and the hooks.
	if _, err := Features(v.Store, head); err != nil {
		return nil, err
	}

	tx, err := v.Store.VerifiedRecords(GateRef)
	if err != nil {
		return nil, err
	}
	idx, err := loadGateLatest(tx, r.Feature)
	if err != nil {
		return nil, err
	}
	reader, err := NewVerifiedReader(v.Store)
	if err != nil {
		return nil, err
	}
	var held *Holding
	examination := func() (*Holding, error) {
		if held == nil {
			h, err := reader.Holds(head, r.Feature, v.Rules)
			if err != nil {
				return nil, err
			}
			held = &h
			if h.Examination != nil {
				r.FilesRead++
			}
		}
		return held, nil
	}

	notMet, unverifiable, abandoned := 0, 0, 0
	for _, cr := range c.Criteria {
		row := VerifyRow{Expectation: cr.ID, Criterion: cr.Text}
		where := fmt.Sprintf("%s:%d", r.ContractPath, cr.Line)
		switch {
		case c.Abandoned[cr.ID] != "":
			row.Status, row.Detail = StatusAbandoned, c.Abandoned[cr.ID]
		case cr.Oracle != nil:
			ev, err := latestEvidence(tx, r.Head, r.Feature, cr.ID)
			if err != nil {
				return nil, err
			}
			if ev != nil {
				r.FilesRead++
			}
			judgeOracle(&row, cr, ev, idx.Criteria[cr.ID], r.Head, where, v.Rules.Proof)
			h, err := examination()
			if err != nil {
				return nil, err
			}
			examinedUnmet(&row, h, r)
		default:
			h, err := examination()
			if err != nil {
				return nil, err
			}
			judgeExamined(&row, h, r)
		}
		switch row.Status {
		case StatusNotMet:
			notMet++
		case StatusUnverifiable:
			unverifiable++
		case StatusAbandoned:
			abandoned++
		}
		r.Rows = append(r.Rows, row)
	}

	touched, err := TouchedFiles(v.Store, base, head)
	if err != nil {
		return nil, err
	}
	scope := CompileScope(c.FileScope)
	for _, p := range touched {
		if scope.Match(p) {
			r.InScope++
		} else {
			r.OutOfScope = append(r.OutOfScope, p)
		}
	}

	switch gaps := notMet + unverifiable + len(r.OutOfScope); {
	case gaps > 0:
		r.Verdict, r.Count = VerdictEcarts, gaps
	case abandoned > 0:
		r.Verdict, r.Count = VerdictAbandoned, abandoned
	default:
		r.Verdict = VerdictConforme
	}
	return c, nil
}

// judgeOracle judges a criterion with an oracle from the head's newest
// evidence of it: MET only for MET evidence of this very oracle (and,
// under proof, proven: ProofRule); pending, stale or another oracle's
// evidence is NOT-MET. A MET says whether it is proven or vacuous.
func judgeOracle(row *VerifyRow, cr Criterion, ev *Evidence, latest gateLatestEntry, head, where string, proof ProofMode) {
	want := fmt.Sprintf("exit 0 and %q in stdout", cr.Oracle.Expect)
	row.Status = StatusNotMet
	switch {
	case ev != nil && (ev.Check != cr.Oracle.Check || ev.Expect != cr.Oracle.Expect):
		row.Record = ev.Location()
		row.Detail = fmt.Sprintf("expected evidence of %q expecting %q / actual evidence of %q expecting %q — %s",
			cr.Oracle.Check, cr.Oracle.Expect, ev.Check, ev.Expect, ev.Location())
	case ev != nil && ev.State == GateMet && proof == ProofRequired && ev.Proof() != ProofProven:
		name, _ := ProofRule(cr.ID, ev)
		row.Record = ev.Location()
		row.Detail = fmt.Sprintf("expected a proven oracle (NOT-MET at a base, MET here; nwdes.gates.proof=required) / actual %s (%s) — %s", ev.ProofNote(), name, ev.Location())
	case ev != nil && ev.State == GateMet:
		row.Status, row.Record = StatusMet, ev.Location()
		row.Detail = fmt.Sprintf("gate evidence %s: %q %s", ev.Location(), ev.Check, ev.Summary())
		if ev.Base != nil {
			row.Detail += "; " + ev.ProofNote()
		}
	case ev != nil:
		row.Record = ev.Location()
		row.Detail = fmt.Sprintf("expected %s / actual %s — %s", want, ev.Summary(), ev.Location())
	case latest.Candidate != "" && latest.Candidate != head:
		row.Detail = fmt.Sprintf("expected gate evidence at %s / actual evidence only for %s (stale; run git nwdes gate run) — %s",
			text.Short(head), text.Short(latest.Candidate), where)
	default:
		row.Detail = fmt.Sprintf("expected gate evidence at %s / actual none recorded (pending; run git nwdes gate run) — %s",
			text.Short(head), where)
	}
}

// heldRow is the examination's row for the criterion when the examination
// speaks for it: it judged this very contract, and no rule of the judgment
// set its word aside (invalid, unsigned as the policy asks, signed by the
// candidate's producer). Otherwise why it does not, for the detail.
func heldRow(h *Holding, id ExpectationID, r *VerifyResult) (*PublishedRow, string, string) {
	ex := h.Examination
	if ex == nil {
		return nil, "", fmt.Sprintf("no published examination of %s", text.Short(r.Head))
	}
	loc := string(Ref) + ":" + ex.Path
	if ex.ContractPath != r.ContractPath || ex.ContractBlob != r.ContractBlob {
		return nil, loc, fmt.Sprintf("the examination of %s judged another contract (%s blob %s)",
			text.Short(r.Head), ex.ContractPath, text.Short(ex.ContractBlob))
	}
	switch h.Refusal {
	case "", refusal.GateNotMet, refusal.GateVacuous, refusal.GateUnproven, refusal.CriterionAbandoned:
		// Rules about rows: each row still says what it says.
		if h.Outcome == Invalid && h.Refusal == "" {
			return nil, loc, "the examination " + loc + " does not hold up: " + text.OneLine(h.Problem)
		}
	default:
		return nil, loc, "the examination " + loc + " does not hold up: " + text.OneLine(h.Problem)
	}
	for i := range ex.Rows {
		if ex.Rows[i].Expectation == id {
			return &ex.Rows[i], loc, ""
		}
	}
	return nil, loc, fmt.Sprintf("the examination %s has no verdict on %s", loc, id)
}

// examinedUnmet makes an oracle's MET a NOT-MET where the examination
// judged the expectation unmet: an oracle that passes without testing what
// the sentence asks (oracle_gap) does not make it met.
func examinedUnmet(row *VerifyRow, h *Holding, r *VerifyResult) {
	pr, loc, _ := heldRow(h, row.Expectation, r)
	if row.Status != StatusMet || pr == nil || pr.Verdict != Unmet {
		return
	}
	row.Status, row.Record = StatusNotMet, loc
	row.Detail = fmt.Sprintf("expected met / actual unmet (%s) by the examination, though the oracle passed — %s", pr.Class, loc)
}

// judgeExamined judges a criterion without an oracle from the published
// examination of the head, when it speaks for it (heldRow).
func judgeExamined(row *VerifyRow, h *Holding, r *VerifyResult) {
	row.Status = StatusUnverifiable
	pr, loc, why := heldRow(h, row.Expectation, r)
	switch {
	case pr == nil:
		row.Record = loc
		row.Detail = "no oracle, and " + why
	case pr.Verdict == Met:
		row.Status, row.Record = StatusMet, loc
		row.Detail = fmt.Sprintf("examination %s: met, citing %d observation(s)", loc, len(pr.Cites))
	case pr.Verdict == Unmet:
		row.Status, row.Record = StatusNotMet, loc
		row.Detail = fmt.Sprintf("expected met / actual unmet (%s) — %s", pr.Class, loc)
	default:
		row.Record = loc
		row.Detail = fmt.Sprintf("the examination %s did not examine it: %s", loc, text.OneLine(pr.Reason))
	}
}

func (v *Verifier) record(ctx context.Context, r *VerifyResult, at time.Time) error {
	rec, err := gitstore.NewRecord(KindVerifyResult, 1, r)
	if err != nil {
		return err
	}
	rec.Payloads = map[string][]byte{"report": []byte(r.Render())}
	r.Path = verifyDir(r.Head, r.Feature) + "/" + stamp(at) + "-" + contentID(rec.Body)
	msg := fmt.Sprintf("verify %s at %s: %s", r.Feature, text.Short(r.Head), r.Verdict)
	_, err = v.Store.Change(ctx, GateRef, msg, func(tx gitstore.Edit) error { return tx.Put(r.Path, rec) })
	if err != nil {
		return fmt.Errorf("record verify of %s: %w", r.Feature, err)
	}
	return nil
}

// LatestVerify returns the newest verify result recorded for feature with
// head as its HEAD, or nil.
func LatestVerify(st gitstore.RecordReader, head oid.ID, feature string) (*VerifyResult, error) {
	tx, err := st.Records(GateRef)
	if err != nil {
		return nil, err
	}
	dir := verifyDir(head.String(), feature)
	names, err := tx.List(dir)
	if err != nil || len(names) == 0 {
		return nil, err
	}
	path := dir + "/" + names[len(names)-1]
	rec, err := tx.Get(path)
	if err != nil {
		return nil, err
	}
	return verifyFrom(path, rec)
}

// verifyFrom decodes and validates a verify result read at path.
func verifyFrom(path string, rec *gitstore.Record) (*VerifyResult, error) {
	if rec.Kind != KindVerifyResult || rec.V != 1 {
		return nil, malformed(path, "a %s v%d record, not a verify result", rec.Kind, rec.V)
	}
	var r VerifyResult
	if err := rec.Decode(&r); err != nil {
		return nil, err
	}
	if err := r.validate(path, rec.Body); err != nil {
		return nil, err
	}
	r.Path = path
	return &r, nil
}

// resolveRange resolves BASE...HEAD (from their merge base) or BASE..HEAD
// (from BASE); an empty side means HEAD, as in git.
func (v *Verifier) resolveRange(diff string) (base, head oid.ID, err error) {
	a, b, symmetric := "", "", false
	if i := strings.Index(diff, "..."); i >= 0 {
		a, b, symmetric = diff[:i], diff[i+3:], true
	} else if i := strings.Index(diff, ".."); i >= 0 {
		a, b = diff[:i], diff[i+2:]
	} else {
		return base, head, refusal.New(refusal.PartInvalid, "pass --diff BASE...HEAD (or BASE..HEAD), e.g. --diff main...HEAD",
			"--diff %q is not a range", diff)
	}
	if a == "" && b == "" {
		return base, head, refusal.New(refusal.PartInvalid, "name at least one side: --diff main...HEAD", "--diff %q names no commit", diff)
	}
	if base, err = v.Store.Resolve(orHead(a)); err != nil {
		return base, head, err
	}
	if head, err = v.Store.Resolve(orHead(b)); err != nil {
		return base, head, err
	}
	if symmetric {
		base, err = MergeBase(v.Store, base, head)
	}
	return base, head, err
}

func verifyDir(head, feature string) string {
	return fmt.Sprintf("verify/%s/%s", fanout(head), feature)
}

// Location names the record for a reader: ref and path.
func (r *VerifyResult) Location() string { return string(GateRef) + ":" + r.Path }

func orHead(rev string) string {
	if rev == "" {
		return "HEAD"
	}
	return rev
}
