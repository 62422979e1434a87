package examine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/refusal"
	"github.com/nwdes/nwdes/trust"
)

// CitedText is one observation text cited by a published examination.
// Identical texts are stored once and cited by index.
type CitedText struct {
	// ID is the observation ID the text had in the draft it was cited from
	// (v2), so that a draft rebuilt from this examination keeps it.
	ID     ObservationID `json:"id,omitempty"`
	Source Source        `json:"source"`
	// Commit is set when the text was observed at another commit and the
	// examiner carried it over (v2).
	Commit string `json:"commit,omitempty"`
	Text   []byte `json:"-"`
}

// PublishedRow is one expectation's judgment in a published examination.
type PublishedRow struct {
	Expectation ExpectationID `json:"expectation"`
	Criterion   string        `json:"criterion"`
	Verdict     Verdict       `json:"verdict"`
	Class       Class         `json:"class,omitempty"`
	Reason      string        `json:"reason,omitempty"`
	Cites       []int         `json:"cites"`
	// Proof is what the gate evidence showed of a met expectation's
	// oracle at close, when the gates had run it at a base (v5): proven
	// or vacuous, with that base; "" when they had not.
	Proof     Proof  `json:"proof,omitempty"`
	ProofBase string `json:"proof_base,omitempty"`
}

// Examination is a published, immutable examination of one feature at one
// candidate commit.
type Examination struct {
	Feature      string         `json:"feature"`
	Candidate    string         `json:"candidate"`
	ContractPath string         `json:"contract_path"`
	ContractBlob string         `json:"contract_blob"`
	Outcome      Outcome        `json:"outcome"`
	Diagnostic   string         `json:"diagnostic"`
	ClosedAt     string         `json:"closed_at"`
	Rows         []PublishedRow `json:"rows"`
	Texts        []CitedText    `json:"texts"`
	// Projection is the tree of the public projection the examiner's
	// workspace showed (v3), "" when the examination used none.
	Projection string `json:"projection,omitempty"`
	// Gates is "advisory" when the examiner's repository set
	// nwdes.gates=advisory at close (v4): its met verdicts then stand
	// whatever the oracles showed, and the brief says so. "" is binding.
	Gates GatesMode `json:"gates,omitempty"`
	// By names the examiner when it is a swarm worker (v6): the worker,
	// its git identity and the job whose journal was replayed; nil for an
	// examination a person closed.
	By *ExaminedBy `json:"examiner,omitempty"`
	// Path is where the record lives in Ref (not stored in the body).
	Path string `json:"-"`
	// Signature is the record's SSH signature (payload "signature"), nil
	// when unsigned; message is what it must cover (see Signer).
	Signature []byte `json:"-"`
	message   []byte
}

// Signer verifies the examination's signature and returns the key that
// made it: nil and no error when the record is unsigned, SignatureInvalid
// when the signature does not hold. Whether that key may accept the
// feature is a policy's question, not this one's.
func (ex *Examination) Signer() (ssh.PublicKey, error) {
	if ex.Signature == nil {
		return nil, nil
	}
	return trust.Verify(ex.message, ex.Signature)
}

// SignedAsRequired is a signing policy's verdict on the examination: signed,
// validly, by a key the policy allows for its feature at time now, the time
// of verification, as ssh-keygen -Y verify checks validity windows (the
// record's own closed_at is the signer's word, so it decides nothing). Nil
// when it is.
func (ex *Examination) SignedAsRequired(policy *trust.Policy, now time.Time) error {
	pub, sigErr := ex.Signer()
	return policy.Check(ex.Feature, pub, sigErr, now)
}

// sign signs the examination record rec with signer (nil: unsigned).
func sign(rec *gitstore.Record, ex *Examination, signer func([]byte) ([]byte, error)) error {
	sig, msg, err := signRecord(rec, signer)
	ex.Signature, ex.message = sig, msg
	return err
}

// signRecord adds the signature payload to rec, signed by signer over the
// record's trust.Message (nothing when signer is nil), and returns the
// signature and the message it covers.
func signRecord(rec *gitstore.Record, signer func([]byte) ([]byte, error)) ([]byte, []byte, error) {
	if signer == nil {
		return nil, nil, nil
	}
	j, err := rec.JSON()
	if err != nil {
		return nil, nil, err
	}
	msg := trust.Message(j, rec.Payloads)
	sig, err := signer(msg)
	if err != nil {
		return nil, nil, err
	}
	rec.Payloads[trust.SignaturePayload] = sig
	return sig, msg, nil
}

// signedPayload reads a stored record's signature and the message it must
// cover (nil, nil when the record is unsigned).
func signedPayload(rec *gitstore.Record) ([]byte, []byte, error) {
	sig, ok := rec.Payloads[trust.SignaturePayload]
	if !ok {
		return nil, nil, nil
	}
	j, err := rec.JSON()
	if err != nil {
		return nil, nil, err
	}
	return sig, trust.Message(j, rec.Payloads), nil
}

type latestBody struct {
	Path      string  `json:"path"`
	Candidate string  `json:"candidate"`
	Outcome   Outcome `json:"outcome"`
	ClosedAt  string  `json:"closed_at"`
}

// Layouts of the close time: in the record (fixed width, so that names sort
// in time order) and in the record's path.
const (
	closedLayout = "2006-01-02T15:04:05.000000000Z07:00"
	stampLayout  = "20060102T150405.000000000Z0700"
)

// publish writes ex under published/<fanout commit>/<feature>/<stamp>-<id>:
// a new name per close, so examinations are never overwritten and two
// clones' records union without conflict; the newest sorts last.
//
// The stamp is the close time, made later than the newest examination
// already there when the clock says otherwise (a clock set back, or a
// record from a clone whose clock runs ahead): within one history the
// newest is always the last closed, so a later rejection can never hide
// behind an earlier acceptance.
func publish(tx gitstore.Edit, ex *Examination, signer func([]byte) ([]byte, error)) error {
	dir := publishedDir(ex.Candidate, ex.Feature)
	names, err := tx.List(dir)
	if err != nil {
		return err
	}
	if len(names) > 0 {
		last, _, _ := strings.Cut(names[len(names)-1], "-")
		prev, err := time.Parse(stampLayout, last)
		now, err2 := time.Parse(closedLayout, ex.ClosedAt)
		if err == nil && err2 == nil && !now.After(prev) {
			next := prev.Add(time.Nanosecond)
			if len(stamp(next)) != len(last) || stamp(next) <= last {
				// A record dated at the end of time (forged) leaves no
				// later stamp that sorts after it: refuse rather than
				// publish a close that would sort first and be invisible.
				return refusal.NewUnreadable(refusal.RecordMalformed, "run git nwdes fsck; remove the examination dated at the end of time by restoring the ref from a good clone",
					"the newest examination of %s at %s is dated %s: no later close could sort after it", ex.Feature, ex.Candidate[:12], prev.Format(time.RFC3339Nano))
			}
			ex.ClosedAt = next.Format(closedLayout)
		}
	}
	version := 2
	if ex.Projection != "" {
		version = 3 // an older nwdes refuses the field it does not know
	}
	if ex.Gates != "" {
		version = 4
	}
	for _, r := range ex.Rows {
		if r.Proof != "" {
			version = 5
		}
	}
	if ex.By != nil {
		version = 6
	}
	rec, err := gitstore.NewRecord(KindExamination, version, ex)
	if err != nil {
		return err
	}
	rec.Payloads = map[string][]byte{}
	for i, t := range ex.Texts {
		rec.Payloads["t"+strconv.Itoa(i+1)] = t.Text
	}
	closed, err := time.Parse(closedLayout, ex.ClosedAt)
	if err != nil {
		return fmt.Errorf("close time %q: %w", ex.ClosedAt, err)
	}
	if err := sign(rec, ex, signer); err != nil {
		return err
	}
	ex.Path = dir + "/" + stamp(closed) + "-" + contentID(rec.Body)
	if err := tx.Put(ex.Path, rec); err != nil {
		return err
	}
	idx, err := gitstore.NewRecord(KindLatest, 1, latestBody{Path: ex.Path, Candidate: ex.Candidate, Outcome: ex.Outcome, ClosedAt: ex.ClosedAt})
	if err != nil {
		return err
	}
	return tx.Put("features/"+ex.Feature, idx)
}

func readExamination(tx gitstore.View, path string) (*Examination, error) {
	rec, err := tx.Get(path)
	if err != nil {
		return nil, err
	}
	return examinationFrom(path, rec)
}

// examinationFrom decodes and validates an examination record read at path.
func examinationFrom(path string, rec *gitstore.Record) (*Examination, error) {
	if rec.Kind != KindExamination || rec.V < 1 || rec.V > 6 {
		return nil, malformed(path, "a %s v%d record, not an examination", rec.Kind, rec.V)
	}
	var ex Examination
	if err := rec.Decode(&ex); err != nil {
		return nil, err
	}
	if err := ex.validate(path, rec.Body); err != nil {
		return nil, err
	}
	if ex.Projection != "" && (rec.V < 3 || !isFullID(ex.Projection)) {
		return nil, malformed(path, "projection %q in a v%d examination", ex.Projection, rec.V)
	}
	if ex.Gates != "" && (rec.V < 4 || ex.Gates != GatesAdvisory) {
		return nil, malformed(path, "gates %q in a v%d examination (only \"advisory\", from v4)", ex.Gates, rec.V)
	}
	if ex.By != nil {
		if rec.V < 6 {
			return nil, malformed(path, "an examiner in a v%d examination (from v6)", rec.V)
		}
		if p := ex.By.problem(); p != "" {
			return nil, malformed(path, "examiner: %s", p)
		}
	}
	for _, r := range ex.Rows {
		switch {
		case r.Proof == "" && r.ProofBase == "":
		case rec.V >= 5 && r.Verdict == Met && (r.Proof == ProofProven || r.Proof == ProofVacuous) && isFullID(r.ProofBase) && r.ProofBase != ex.Candidate:
		default:
			return nil, malformed(path, "row %s: proof %q at base %q in a v%d examination (only proven or vacuous, at a base, on a met row, from v5)", r.Expectation, r.Proof, r.ProofBase, rec.V)
		}
	}
	for i := range ex.Texts {
		t, ok := rec.Payloads["t"+strconv.Itoa(i+1)]
		if !ok {
			return nil, malformed(path, "cited text %d is missing", i+1)
		}
		ex.Texts[i].Text = t
	}
	// Exactly t1..tN and an optional signature: a record is pushed by
	// anyone, and a payload nothing reads is refused, not carried along.
	if extra := len(rec.Payloads) - len(ex.Texts); extra > 1 || extra == 1 && rec.Payloads[trust.SignaturePayload] == nil {
		return nil, malformed(path, "it holds payloads other than its %d cited texts and a signature", len(ex.Texts))
	}
	var err error
	if ex.Signature, ex.message, err = signedPayload(rec); err != nil {
		return nil, err
	}
	ex.Path = path
	return &ex, nil
}

// latestExamination is the feature's newest examination on any candidate.
func latestExamination(tx gitstore.View, feature string) (*Examination, error) {
	rec, err := tx.Get("features/" + feature)
	if errors.Is(err, gitstore.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	l, err := latestFrom("features/"+feature, rec)
	if err != nil {
		return nil, err
	}
	return readExamination(tx, l.Path)
}

// latestFrom decodes and validates a feature's index record read at path
// (features/<feature>).
func latestFrom(path string, rec *gitstore.Record) (*latestBody, error) {
	if rec.Kind != KindLatest || rec.V != 1 {
		return nil, malformed(path, "a %s v%d record, not a feature index", rec.Kind, rec.V)
	}
	feature, ok := strings.CutPrefix(path, "features/")
	if !ok || ValidFeature(feature) != nil {
		return nil, malformed(path, "a feature index belongs at features/<feature>")
	}
	var l latestBody
	if err := rec.Decode(&l); err != nil {
		return nil, err
	}
	if err := l.validate(path, feature); err != nil {
		return nil, err
	}
	return &l, nil
}

// readableAt reads the newest examination of every feature at commit, and
// fails with the first that cannot be read.
func readableAt(tx gitstore.View, commit string) error {
	features, err := tx.List("published/" + fanout(commit))
	if err != nil {
		return err
	}
	for _, f := range features {
		if _, err := latestAt(tx, commit, f); err != nil {
			return err
		}
	}
	return nil
}

// latestAt is the feature's newest examination of one commit, or nil.
func latestAt(tx gitstore.View, commit, feature string) (*Examination, error) {
	dir := publishedDir(commit, feature)
	names, err := tx.List(dir)
	if err != nil || len(names) == 0 {
		return nil, err
	}
	return readExamination(tx, dir+"/"+names[len(names)-1])
}

// Reader answers questions about published examinations; the hook, status,
// verify and the exports use it. It reads one snapshot of Ref.
type Reader struct {
	st Reading
	tx gitstore.View
	// gates is GateRef as of gatesTip, read at the first judgment that
	// needs evidence (Holds).
	gates    gitstore.View
	gatesTip oid.ID
}

// NewReader takes a snapshot of the examination records.
func NewReader(st Reading) (*Reader, error) {
	tx, err := st.Records(Ref)
	if err != nil {
		return nil, err
	}
	return &Reader{st: st, tx: tx}, nil
}

// NewVerifiedReader is NewReader of a history this clone verified: every
// commit since the last tip it verified (gitstore.CheckHistory) kept every
// published examination as it was, or HistoryRewritten refuses. Every
// reader that judges takes this one.
func NewVerifiedReader(st Reading) (*Reader, error) {
	tx, err := st.VerifiedRecords(Ref)
	if err != nil {
		return nil, err
	}
	return &Reader{st: st, tx: tx}, nil
}

// NewReaderAt takes the snapshot of the examination records as they are at
// commit of Ref (a server's pre-receive check reads the records pushed
// alongside the commit they accept, before the ref moves).
func NewReaderAt(st Reading, commit oid.ID) (*Reader, error) {
	tx, err := st.RecordsAt(Ref, commit)
	if err != nil {
		return nil, err
	}
	return &Reader{st: st, tx: tx}, nil
}

// At returns the newest examination of feature at commit, or nil.
func (r *Reader) At(commit oid.ID, feature string) (*Examination, error) {
	return latestAt(r.tx, commit.String(), feature)
}

// Examined returns the features examined at commit, sorted.
func (r *Reader) Examined(commit oid.ID) ([]string, error) {
	return r.tx.List("published/" + fanout(commit.String()))
}

// Features returns the features whose contract exists, at the default
// path, in commit's tree, sorted. It fails closed on anything there that
// looks meant as a contract but cannot be enforced as one (a directory, a
// symbolic link, an invalid feature name, a .nwave/features that is not a
// directory), rather than letting the hook skip it; other files are ignored.
func Features(st gitstore.CommitReader, commit oid.ID) ([]string, error) {
	bad := func(path, why string) error {
		return refusal.New(refusal.ConfigurationMalformed,
			"keep each contract as a plain committed file .nwave/features/<feature>.md",
			"%s at %s %s", path, text.Short(commit.String()), why)
	}
	tx, err := st.Files(commit)
	if err != nil {
		return nil, err
	}
	for _, dir := range []string{".nwave", ".nwave/features"} {
		// A case variant (.nwave/Features, .NWAVE) is a look-alike that
		// no reader would tell apart and nothing would enforce.
		parent, base := path.Split(dir)
		if entries, err := tx.ReadDir(strings.TrimSuffix(parent, "/")); err == nil {
			for _, e := range entries {
				if e.Name != base && strings.EqualFold(e.Name, base) {
					return nil, bad(parent+e.Name, "is a look-alike of "+dir+": contracts live in "+dir+" exactly")
				}
			}
		}
		e, found, err := tx.Lookup(dir)
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, nil
		}
		if e.Mode != gitstore.ModeTree {
			return nil, bad(dir, "is not a directory")
		}
	}
	entries, err := tx.ReadDir(".nwave/features")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if p := featureProblem(e.Name, e.Mode); p != "" {
			return nil, bad(".nwave/features/"+e.Name, p)
		}
		if f, ok := strings.CutSuffix(e.Name, ".md"); ok {
			out = append(out, f)
		}
	}
	return out, nil
}

// writeBrief re-renders the note on a commit from every feature's newest
// examination of it. Rebuilding from the records, rather than appending,
// makes the note converge: a crash between publishing and noting is
// repaired by the next close, and concurrent closes cannot drop a feature.
func (x *Examiner) writeBrief(ctx context.Context, commit string) error {
	h, err := oid.Parse(commit)
	if err != nil {
		return fmt.Errorf("brief of %q: %w", commit, err)
	}
	_, err = x.Store.UpdateNote(ctx, h, "brief "+commit[:12], func(old []byte, found bool) ([]byte, error) {
		r, err := NewReader(x.Store)
		if err != nil {
			return nil, err
		}
		return r.Brief(h)
	})
	return err
}

// Brief renders the note a commit should carry: the brief of every
// feature's newest examination of it, or nil when none judged it.
func (r *Reader) Brief(h oid.ID) ([]byte, error) {
	features, err := r.Examined(h)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	for i, f := range features {
		ex, err := r.At(h, f)
		if err != nil {
			return nil, err
		}
		if ex == nil {
			continue
		}
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(RenderBrief(ex))
	}
	if b.Len() == 0 {
		return nil, nil
	}
	return []byte(b.String()), nil
}

// CheckNote is fsck's check of the notes at the notes ref's tip: each note
// must be safe to print (git log --notes=nwdes shows it as it is) and
// exactly the brief its examinations render. A note on a commit no
// examination judged, or one edited by hand, is a forgery a reviewer would
// believe.
func CheckNote(st Reading) func(commit oid.ID, note []byte) error {
	return withBriefs(st, func(brief func(oid.ID) ([]byte, error), commit oid.ID, note []byte) error {
		if err := printable("the note on "+commit.Short(), note); err != nil {
			return err
		}
		want, err := brief(commit)
		if err != nil {
			return err
		}
		switch {
		case want == nil:
			return fmt.Errorf("a note on %s, which no examination judged (forged, or its records are gone)", commit.Short())
		case !bytes.Equal(want, note):
			return fmt.Errorf("the note on %s is not what its examinations render (edited or forged; git nwdes examine close rewrites it)", commit.Short())
		}
		return nil
	})
}

// withBriefs binds a check of notes to one snapshot of the examinations,
// which renders the brief of every note fsck checks (a fresh one per note
// re-read the records for each). When they cannot be read, every note's
// brief fails with why.
func withBriefs(st Reading, check func(brief func(oid.ID) ([]byte, error), commit oid.ID, note []byte) error) func(oid.ID, []byte) error {
	r, readErr := NewReader(st)
	brief := func(commit oid.ID) ([]byte, error) {
		if readErr != nil {
			return nil, readErr
		}
		return r.Brief(commit)
	}
	return func(commit oid.ID, note []byte) error { return check(brief, commit, note) }
}

// printable refuses a note git would print with characters that act on a
// terminal or reorder text: every brief nwdes renders holds them escaped.
func printable(what string, note []byte) error {
	if at, c := text.Unsafe(string(note)); at >= 0 {
		return fmt.Errorf("%s is not safe to print: it holds %s at byte %d (git log --notes would show it raw; nwdes writes such characters escaped)", what, c, at)
	}
	return nil
}

// BriefOf is the brief commit's note should hold now (nil when no
// examination judged it), read from the store's current records.
func BriefOf(st Reading, commit oid.ID) ([]byte, error) {
	r, err := NewReader(st)
	if err != nil {
		return nil, err
	}
	return r.Brief(commit)
}

// RenderBrief renders an examination as the Markdown a reviewer reads in
// git log --notes=nwdes: feature, outcome, candidate, every row with its
// verdict, class or reason and cited text, then the diagnostic. git prints
// a note as it is, so the brief is escaped as nwdes escapes terminal
// output (text.Terminal): newlines and tabs stay, and with them the
// Markdown structure; every other control, bidirectional control and
// byte that is not UTF-8 in the texts it quotes is shown escaped. The
// records keep the exact bytes.
func RenderBrief(ex *Examination) string { return text.Terminal(renderBrief(ex)) }

func renderBrief(ex *Examination) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## nwdes acceptance brief: %s: %s\n\n", ex.Feature, ex.Outcome)
	fmt.Fprintf(&b, "- candidate: %s\n- contract: %s (blob %s)\n- closed: %s\n", ex.Candidate, ex.ContractPath, ex.ContractBlob[:12], ex.ClosedAt)
	if ex.Projection != "" {
		fmt.Fprintf(&b, "- public projection examined: tree %s\n", ex.Projection)
	}
	if ex.Gates == GatesAdvisory {
		b.WriteString("- gates: advisory (nwdes.gates=advisory: a met verdict stands whatever its oracle showed)\n")
	}
	if ex.By != nil {
		fmt.Fprintf(&b, "- examiner: swarm worker %s (%s), job %s\n", ex.By.Worker, ex.By.Identity, ex.By.Job)
	}
	if s := SignedBy(ex); s != "" {
		fmt.Fprintf(&b, "- %s\n", s)
	}
	for _, r := range ex.Rows {
		fmt.Fprintf(&b, "\n### %s: %s", r.Expectation, r.Verdict)
		switch {
		case r.Class != "":
			fmt.Fprintf(&b, " (%s)", r.Class)
		case r.Reason != "":
			fmt.Fprintf(&b, " (reason: %s)", text.OneLine(r.Reason))
		}
		fmt.Fprintf(&b, "\n\n%s\n", text.OneLine(r.Criterion))
		switch r.Proof {
		case ProofProven:
			fmt.Fprintf(&b, "\noracle proven: NOT-MET at base %s, MET at the candidate\n", r.ProofBase)
		case ProofVacuous:
			fmt.Fprintf(&b, "\noracle vacuous: MET at base %s as well as at the candidate, so it does not show that the change made it pass\n", r.ProofBase)
		}
		for _, c := range r.Cites {
			t := ex.Texts[c]
			fence := Fence(t.Text)
			fmt.Fprintf(&b, "\nobserved (%s)%s:\n\n%stext\n%s", t.Source, CarriedFrom(t), fence, t.Text)
			// The fence must start on its own line. Where the text has no
			// final newline, the one added for it is named after the fence,
			// so the brief still tells "a" from "a\n".
			noFinalNewline := len(t.Text) > 0 && t.Text[len(t.Text)-1] != '\n'
			if noFinalNewline {
				b.WriteString("\n")
			}
			b.WriteString(fence + "\n")
			if noFinalNewline {
				b.WriteString("(no newline at end of text)\n")
			}
		}
	}
	fmt.Fprintf(&b, "\n### diagnostic\n\n%s\n", strings.TrimRight(ex.Diagnostic, "\n"))
	return b.String()
}

// SignedBy says who signed the examination, for briefs and reports: ""
// when it is unsigned, "signed by <fingerprint> (<key type>)", or
// "signature INVALID: …" when the signature does not hold.
func SignedBy(ex *Examination) string {
	pub, err := ex.Signer()
	switch {
	case err != nil:
		return "signature INVALID: " + text.OneLine(err.Error())
	case pub == nil:
		return ""
	}
	return fmt.Sprintf("signed by %s (%s)", trust.Fingerprint(pub), pub.Type())
}

// Fence returns a backtick fence longer than any backtick run in text (and
// at least three), so cited text can never close its own fence.
func Fence(text []byte) string {
	longest, run := 0, 0
	for _, c := range text {
		if c == '`' {
			run++
			if run > longest {
				longest = run
			}
		} else {
			run = 0
		}
	}
	n := 3
	if longest >= n {
		n = longest + 1
	}
	return strings.Repeat("`", n)
}

// CarriedFrom says, for a cited text observed at another commit, where it
// was observed: " at <commit>, carried over", or "".
func CarriedFrom(t CitedText) string {
	if t.Commit == "" {
		return ""
	}
	return " at " + t.Commit + ", carried over"
}

// sameJudgment reports whether two examinations of one commit say the
// same: contract, outcome, diagnostic, rows and cited texts.
func sameJudgment(a, b *Examination) bool {
	if a.Candidate != b.Candidate || a.ContractPath != b.ContractPath || a.ContractBlob != b.ContractBlob || a.Projection != b.Projection ||
		a.Outcome != b.Outcome || a.Diagnostic != b.Diagnostic || len(a.Rows) != len(b.Rows) || len(a.Texts) != len(b.Texts) ||
		(a.By == nil) != (b.By == nil) || a.By != nil && *a.By != *b.By {
		return false
	}
	for i := range a.Rows {
		ra, rb := a.Rows[i], b.Rows[i]
		if ra.Expectation != rb.Expectation || ra.Criterion != rb.Criterion || ra.Verdict != rb.Verdict ||
			ra.Class != rb.Class || ra.Reason != rb.Reason || fmt.Sprint(ra.Cites) != fmt.Sprint(rb.Cites) ||
			ra.Proof != rb.Proof || ra.ProofBase != rb.ProofBase {
			return false
		}
	}
	for i := range a.Texts {
		if a.Texts[i].Source != b.Texts[i].Source || a.Texts[i].Commit != b.Texts[i].Commit || !bytes.Equal(a.Texts[i].Text, b.Texts[i].Text) {
			return false
		}
	}
	return true
}

// RefreshBriefs rewrites every note that is not what its examinations
// render: after a merge of two clones' records, a note rendered from one
// side's examinations of a commit is brought up to both. A note on a
// commit no examination judged is left for fsck to name.
func (x *Examiner) RefreshBriefs(ctx context.Context) error {
	commits, err := x.Store.NotedCommits()
	if err != nil {
		return err
	}
	r, err := NewReader(x.Store)
	if err != nil {
		return err
	}
	for _, h := range commits {
		want, err := r.Brief(h)
		if err != nil || want == nil {
			continue // unreadable or unjudged: fsck names it
		}
		if note, err := x.Store.Note(h); err == nil && bytes.Equal(note, want) {
			continue
		}
		if err := x.writeBrief(ctx, h.String()); err != nil {
			return err
		}
	}
	return nil
}
