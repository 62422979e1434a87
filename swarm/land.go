package swarm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/oid"
	gitremote "github.com/nwdes/nwdes/gitstore/remote"
	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/judge"
	"github.com/nwdes/nwdes/refusal"
)

// Landing is a landing record (refs/nwdes/swarm/landings,
// landings/<label>/<candidate>): what became of one candidate of a card
// that swarm land took. A candidate is a harvested head, or a commit land
// made by rebasing an earlier candidate onto its branch's new tip. Each
// candidate has at most one landing record, written once: it landed, or
// it was rebased into the next candidate. So a card's candidates form a
// chain from its harvested head, which ends at the candidate that landed
// or at the one still to be judged; nothing is landed twice.
type Landing struct {
	Label     string    `json:"label"`
	Candidate string    `json:"candidate"`
	Event     LandEvent `json:"event"`
	// Branch is the card's BRANCH (refs/heads/…), Remote where it lives.
	Branch string `json:"branch"`
	Remote string `json:"remote"`
	// Onto is the branch's tip the event was decided against: the tip
	// the candidate fast-forwarded (landed; "" when it made the branch),
	// or the tip it was rebased onto (rebased).
	Onto string `json:"onto,omitempty"`
	// Rebased and RebasedRef name the new candidate (rebased only): a
	// commit on Onto, kept by RebasedRef(label, rebased).
	Rebased    string `json:"rebased,omitempty"`
	RebasedRef string `json:"rebased_ref,omitempty"`
	At         string `json:"at"`
	By         string `json:"by"`
}

// LandEvent is what became of a candidate.
type LandEvent string

// The landing events.
const (
	// LandLanded: the candidate was pushed to the branch, a fast-forward.
	LandLanded LandEvent = "landed"
	// LandRebased: the branch had moved; the candidate's change was made
	// again on its tip as a new candidate, which must be judged as it is.
	LandRebased LandEvent = "rebased"
)

// landingVersion is the version of the landing records written now
// (swarm.landing, register.go). v1: label, candidate, event, branch,
// remote, onto, rebased, rebased_ref, at, by.
const landingVersion = 1

// RebasedRef is the ref that keeps a candidate land made by rebasing:
// beside the card's harvested heads, written once, travelling with them.
func RebasedRef(label string, commit oid.ID) gitstore.RefName {
	return gitstore.RefName(fmt.Sprintf("%s%s/rebased-%s", Heads, label, commit))
}

func landingPath(label, candidate string) string { return "landings/" + label + "/" + candidate }

func landingMalformed(path, format string, args ...any) error {
	return refusal.NewUnreadable(refusal.RecordMalformed, "run git nwdes fsck; a landing record is written by git nwdes swarm land alone",
		"%s: %s", path, fmt.Sprintf(format, args...))
}

// landingFrom decodes and checks a landing record read at path.
func landingFrom(path string, rec *gitstore.Record) (*Landing, error) {
	if rec.Kind != KindLanding || rec.V != landingVersion {
		return nil, landingMalformed(path, "a %s v%d record, not a landing", rec.Kind, rec.V)
	}
	if len(rec.Payloads) != 0 {
		return nil, landingMalformed(path, "a landing record holds no payload")
	}
	var l Landing
	if err := rec.Decode(&l); err != nil {
		return nil, err
	}
	if why := l.problem(); why != "" {
		return nil, landingMalformed(path, "%s", why)
	}
	if path != landingPath(l.Label, l.Candidate) {
		return nil, landingMalformed(path, "a landing of %s's candidate %s belongs under %s", l.Label, text.Short(l.Candidate), landingPath(l.Label, l.Candidate))
	}
	return &l, nil
}

// problem says what is wrong with l, or "".
func (l *Landing) problem() string {
	switch {
	case !validCard(l.Label):
		return fmt.Sprintf("label %q is not a card label", l.Label)
	case !isCommitID(l.Candidate):
		return "its candidate is not a full commit id"
	case !validBranch(l.Branch):
		return fmt.Sprintf("branch %q is not refs/heads/…", l.Branch)
	case gitremote.ValidRemoteName(l.Remote) != nil:
		return fmt.Sprintf("remote %q is not a remote name", l.Remote)
	case l.Onto != "" && !isCommitID(l.Onto):
		return "its onto is not a full commit id"
	}
	if _, err := time.Parse(stamp, l.At); err != nil {
		return fmt.Sprintf("at %q is not a time", l.At)
	}
	switch l.Event {
	case LandLanded:
		if l.Rebased != "" || l.RebasedRef != "" {
			return "a landed candidate names no rebased commit"
		}
	case LandRebased:
		id, err := oid.Parse(l.Rebased)
		switch {
		case err != nil || !isCommitID(l.Rebased) || l.Onto == "":
			return "a rebased candidate names the commit it became (a full commit id) and the tip it was rebased onto"
		case l.Rebased == l.Candidate:
			return "a candidate is not rebased into itself"
		case l.RebasedRef != string(RebasedRef(l.Label, id)):
			return fmt.Sprintf("a rebased candidate is kept by %s", RebasedRef(l.Label, id))
		}
	default:
		return fmt.Sprintf("event %q is not landed or rebased", l.Event)
	}
	return ""
}

func validBranch(ref string) bool {
	return strings.HasPrefix(ref, "refs/heads/") && ref != "refs/heads/" && gitstore.RefName(ref).Validate() == nil
}

// Landings reads the landing records of label (every card's when label
// is ""), by candidate. A record that does not parse is left out (fsck
// names it): a landing it would have recorded is still seen, because land
// also asks whether the branch already contains the candidate.
func Landings(st gitstore.RecordReader, label string) (map[string]Landing, error) {
	tx, err := st.Records(LandingsRef)
	if err != nil {
		return nil, err
	}
	labels := []string{label}
	if label == "" {
		if labels, err = tx.List("landings"); err != nil {
			return nil, err
		}
	}
	out := map[string]Landing{}
	for _, l := range labels {
		names, err := tx.List("landings/" + l)
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			path := landingPath(l, n)
			rec, err := tx.Get(path)
			var got *Landing
			if err == nil {
				got, err = landingFrom(path, rec)
			}
			if _, ok := refusal.As(err); ok {
				continue
			}
			if err != nil {
				return nil, err
			}
			out[got.Candidate] = *got
		}
	}
	return out, nil
}

// LandOptions is what Land needs besides the card's label.
type LandOptions struct {
	// Store is the git store: land fetches and pushes through git, reads
	// commits and writes the rebased one.
	Store  *gitstore.Store
	Label  string
	Remote string
	// Attempt picks the harvested head of that attempt; 0 takes the
	// newest attempt that harvested one.
	Attempt int
	// Gates and Proof are this side's nwdes.gates and nwdes.gates.proof,
	// as status and the hooks read them.
	Gates examine.GatesMode
	Proof examine.ProofMode
	// Sync is how git is run (the caller's environment) and what runs
	// after records merge.
	Sync gitstore.SyncOptions
	// Stderr gets what git and the hooks say while the branch is pushed.
	Stderr io.Writer
	By     string
	Now    func() time.Time
}

// LandResult is what Land did.
type LandResult struct {
	Label  string `json:"label"`
	Branch string `json:"branch"`
	Remote string `json:"remote"`
	// Head is the card's harvested head; Candidate the commit judged (the
	// head, or the newest candidate rebased from it).
	Head      string `json:"head"`
	Candidate string `json:"candidate"`
	// Event is landed, or rebased: then the candidate did not land, and
	// Rebased (kept by RebasedRef) must be gated and examined as it is.
	Event      LandEvent `json:"event"`
	Onto       string    `json:"onto,omitempty"`
	Rebased    string    `json:"rebased,omitempty"`
	RebasedRef string    `json:"rebased_ref,omitempty"`
	// Features are the judgment of Candidate, feature by feature.
	Features []LandFeature `json:"features"`
	// Notice says what could not be done after the event (the records
	// not sent), "" when everything was.
	Notice string `json:"notice,omitempty"`
}

// LandFeature is one feature's outcome in the judgment land asked.
type LandFeature struct {
	Feature string          `json:"feature"`
	Outcome examine.Outcome `json:"outcome"`
	Refusal string          `json:"refusal,omitempty"`
}

// The bounds of a landing.
const (
	// MaxRebasePaths bounds the paths changed on either side of a rebase
	// land makes in-product.
	MaxRebasePaths = 100_000
	// maxChain bounds the candidates a card's chain is followed through.
	maxChain = 1000
)

// Land pushes the accepted candidate of card label to the branch its card
// names (BRANCH), on remote, through git push and every hook. It first
// fetches the remote's records (so a landing made from another clone is
// seen) and reads where the branch stands. The candidate is the card's
// harvested head, or the newest candidate a landing record rebased it
// into. It must be accepted by the one judgment (judge.Judge), asked as
// the hooks ask it: the candidate, for the branch, against its tip.
//
// Landing is fast-forward only: when the branch's tip is an ancestor of
// the candidate, git push moves the branch to exactly that commit and a
// landing record says so. When the branch moved elsewhere, nothing is
// pushed: the candidate's change is merged onto the new tip in-product
// (per path, ThreeWay) into a new commit, kept under RebasedRef, recorded
// as the candidate's successor, and that new candidate must be gated and
// examined before land takes it. A path both sides changed is refused
// NeedsPerson. A card with no BRANCH (BranchMissing), no harvested head
// (HeadMissing), a candidate not accepted (NotAccepted) or one landed
// already or already on the branch (AlreadyLanded) is refused.
func Land(ctx context.Context, o LandOptions) (*LandResult, error) {
	st := o.Store
	rep := gitremote.New(st)
	if _, err := rep.Fetch(ctx, o.Remote, o.Sync); err != nil {
		return nil, err
	}
	card, err := queuedCardOf(st, o.Label)
	if err != nil {
		return nil, err
	}
	if card.Branch == "" {
		return nil, refusal.New(refusal.BranchMissing, "queue the card's work under a card that names BRANCH: <branch> (swarm add --card), or push the head yourself with git push",
			"card %s names no BRANCH: land does not know where its head goes", card.Label)
	}
	head, err := harvestedHead(st, card.Label, o.Attempt)
	if err != nil {
		return nil, err
	}
	landings, err := Landings(st, card.Label)
	if err != nil {
		return nil, err
	}
	cand, err := followChain(card, head, landings)
	if err != nil {
		return nil, err
	}
	branch := gitstore.RefName(card.Branch)
	tip, err := rep.BranchTip(ctx, o.Remote, branch, o.Sync)
	if err != nil {
		return nil, err
	}
	res := &LandResult{Label: card.Label, Branch: card.Branch, Remote: o.Remote, Head: head.String(), Candidate: cand.String(), Features: []LandFeature{}}
	if !tip.IsZero() {
		if on, err := st.IsAncestor(cand, tip); err != nil {
			return nil, err
		} else if on {
			return nil, refusal.New(refusal.AlreadyLanded, "nothing to do: git log "+o.Remote+"/"+strings.TrimPrefix(card.Branch, "refs/heads/")+" shows it",
				"card %s's candidate %s is already on %s's %s (at %s)", card.Label, cand.Short(), o.Remote, card.Branch, tip.Short())
		}
	}
	forward := tip.IsZero()
	if !forward {
		if forward, err = st.IsAncestor(tip, cand); err != nil {
			return nil, err
		}
	}
	against := tip
	if !forward {
		// The change was made, and judged, on the branch as it stood
		// where the candidate left it: its contracts and signing policy.
		if against, err = mergeBase(st, card.Label, cand, tip, branch); err != nil {
			return nil, err
		}
	}
	j, err := judge.Judge(st, judge.Question{Commit: cand, Ref: card.Branch, Against: against, AgainstName: o.Remote + " " + card.Branch,
		Now: now(o.Now), Gates: o.Gates, Proof: o.Proof})
	if err != nil {
		return nil, err
	}
	for _, f := range j.Features {
		res.Features = append(res.Features, LandFeature{Feature: f.Feature, Outcome: f.Outcome, Refusal: f.Refusal})
	}
	if err := acceptedForLanding(card.Label, cand, tip, o.Remote, j); err != nil {
		return nil, err
	}
	if forward {
		return res, land(ctx, rep, o, card, cand, tip, res)
	}
	return res, rebase(ctx, rep, o, card, cand, tip, against, res)
}

// land pushes cand (accepted, a fast-forward of tip) and records it.
func land(ctx context.Context, rep *gitremote.Replicator, o LandOptions, card *Card, cand, tip oid.ID, res *LandResult) error {
	if _, err := rep.PushBranch(ctx, o.Remote, cand, gitstore.RefName(card.Branch), o.Stderr, o.Sync); err != nil {
		return err
	}
	res.Event, res.Onto = LandLanded, hexOrEmpty(tip)
	l := Landing{Label: card.Label, Candidate: cand.String(), Event: LandLanded, Branch: card.Branch, Remote: o.Remote, Onto: res.Onto,
		At: now(o.Now).UTC().Format(stamp), By: o.By}
	res.Notice = recordLanding(ctx, rep, o, l)
	return nil
}

// rebase makes the candidate's change again on tip, as a new candidate.
func rebase(ctx context.Context, rep *gitremote.Replicator, o LandOptions, card *Card, cand, tip, base oid.ID, res *LandResult) error {
	st := o.Store
	tree, conflicts, err := rep.ThreeWay(base, tip, cand, MaxRebasePaths)
	if err != nil {
		return err
	}
	if len(conflicts) > 0 {
		return refusal.New(refusal.NeedsPerson, "a person rebases it (git switch --detach "+cand.Short()+"; git rebase "+tip.Short()+", resolving those paths) and queues the work as a new card with BASE: "+tip.String(),
			"%s's %s moved since card %s's candidate %s was made, and both changed %s: land merges no text",
			o.Remote, card.Branch, card.Label, cand.Short(), text.Truncate(strings.Join(conflicts, ", "), 400))
	}
	tc, err := st.Git().ReadCommit(tip)
	if err != nil {
		return err
	}
	if tree == tc.Tree {
		return refusal.New(refusal.AlreadyLanded, "nothing to do: the branch holds the change already",
			"card %s's candidate %s changes nothing %s's %s (at %s) does not already hold", card.Label, cand.Short(), o.Remote, card.Branch, tip.Short())
	}
	cc, err := st.Git().ReadCommit(cand)
	if err != nil {
		return err
	}
	subject, _, _ := strings.Cut(strings.TrimSpace(cc.Message), "\n")
	msg := fmt.Sprintf("%s\n\nnwdes swarm land: card %s's candidate %s, rebased onto %s at %s.\nA new candidate: it is judged as it is, by its own gates and examination.\n",
		subject, card.Label, cand, card.Branch, tip)
	next, err := rep.WriteCommit(tree, []oid.ID{tip}, msg)
	if err != nil {
		return err
	}
	ref := RebasedRef(card.Label, next)
	if err := st.Refs().CompareAndSwap(ref, oid.Zero, next); err != nil && !errors.Is(err, gitstore.ErrConflict) {
		return fmt.Errorf("keep the rebased candidate under %s: %w", ref, err)
	}
	res.Event, res.Onto, res.Rebased, res.RebasedRef = LandRebased, tip.String(), next.String(), string(ref)
	l := Landing{Label: card.Label, Candidate: cand.String(), Event: LandRebased, Branch: card.Branch, Remote: o.Remote, Onto: tip.String(),
		Rebased: next.String(), RebasedRef: string(ref), At: now(o.Now).UTC().Format(stamp), By: o.By}
	res.Notice = recordLanding(ctx, rep, o, l)
	return nil
}

// recordLanding writes l (a record already there is left as it is) and
// sends the records to the remote, so that every clone sees what became
// of the candidate. The event happened either way: what could not be
// done is returned as a notice, with its remedy.
func recordLanding(ctx context.Context, rep *gitremote.Replicator, o LandOptions, l Landing) string {
	rec, err := gitstore.NewRecord(KindLanding, landingVersion, l)
	if err == nil {
		path := landingPath(l.Label, l.Candidate)
		_, err = o.Store.Change(ctx, LandingsRef, fmt.Sprintf("%s %s %s", l.Event, l.Label, text.Short(l.Candidate)), func(tx gitstore.Edit) error {
			if _, err := tx.Get(path); err == nil {
				return nil
			} else if !errors.Is(err, gitstore.ErrNotFound) {
				return err
			}
			return tx.Put(path, rec)
		})
	}
	if err != nil {
		return fmt.Sprintf("the candidate was %s, but its landing record could not be written (%s); the branch itself shows it", l.Event, text.OneLine(err.Error()))
	}
	if _, err := rep.Push(ctx, o.Remote, o.Sync); err != nil {
		return fmt.Sprintf("the landing record was not sent to %s (%s): send it with git nwdes push %s", o.Remote, text.OneLine(err.Error()), o.Remote)
	}
	return ""
}

// acceptedForLanding refuses a judgment that does not accept cand, naming
// each feature's outcome; one with no feature contract says nothing was
// asked of the candidate, and is refused too.
func acceptedForLanding(label string, cand, tip oid.ID, remote string, j *judge.Judgment) error {
	status := "git nwdes status --commit " + cand.String()
	if !tip.IsZero() {
		status += " --against " + tip.String()
	}
	if len(j.Features) == 0 {
		return refusal.New(refusal.NotAccepted, "commit the feature's contract (.nwave/features/<F>.md) with the work, examine it, then land again; or push it yourself",
			"card %s's candidate %s holds no feature contract: nothing says what it must do, so nothing accepted it", label, cand.Short())
	}
	if j.Accepted {
		return nil
	}
	var parts []string
	feature := ""
	for _, f := range j.Features {
		if f.OK() {
			continue
		}
		what := string(f.Outcome)
		if f.Outcome == examine.None {
			what = "not examined"
		}
		if f.Refusal != "" {
			what += " (" + f.Refusal + ")"
		}
		if feature == "" {
			feature = f.Feature
		}
		parts = append(parts, f.Feature+": "+what)
	}
	return refusal.New(refusal.NotAccepted,
		fmt.Sprintf("gate and examine it as it is (git nwdes gate run --feature %s --candidate %s --base <its base>; git nwdes examine open --feature %s --candidate %s …) until accepted, then land again; %s names each feature's remedy",
			feature, cand, feature, cand, status),
		"card %s's candidate %s is not accepted for %s: %s", label, cand.Short(), remote, strings.Join(parts, "; "))
}

// queuedCardOf reads card label from the queue.
func queuedCardOf(st gitstore.RecordReader, label string) (*Card, error) {
	if err := queuedCard(st, label); err != nil {
		return nil, err
	}
	queue, err := Queue(st)
	if err != nil {
		return nil, err
	}
	for _, q := range queue {
		if q.Card.Label == label {
			return q.Card, nil
		}
	}
	return nil, refusal.New(refusal.CardInvalid, "name a queued card (git nwdes swarm status lists them)", "card %s is not queued", label)
}

// harvestedHead is the head of the card's newest attempt that harvested
// one (descends or diverged from its base), or of attempt when given.
func harvestedHead(st gitstore.RecordReader, label string, attempt int) (oid.ID, error) {
	jobs, err := Jobs(st)
	if err != nil {
		return oid.Zero, err
	}
	var best *Job
	for i := range jobs {
		j := &jobs[i]
		if j.Label != label || j.Head == "" || (j.Harvest != HarvestDescends && j.Harvest != HarvestDiverged) {
			continue
		}
		if (attempt == 0 && (best == nil || j.Attempt > best.Attempt)) || j.Attempt == attempt {
			best = j
		}
	}
	if best == nil {
		what := "no attempt of it harvested a head"
		if attempt > 0 {
			what = fmt.Sprintf("its attempt %d harvested no head", attempt)
		}
		return oid.Zero, refusal.New(refusal.HeadMissing, "run the card (git nwdes swarm run) until a job commits its work, or fetch its jobs from the remote (git nwdes fetch); git nwdes swarm show "+label+" says what each attempt did",
			"card %s has nothing to land: %s", label, what)
	}
	return oid.Parse(best.Head)
}

// followChain follows the card's landing records from head to the
// candidate still to land; one that landed already is refused.
func followChain(card *Card, head oid.ID, landings map[string]Landing) (oid.ID, error) {
	cur := head.String()
	for n := 0; n < maxChain; n++ {
		l, ok := landings[cur]
		if !ok {
			return oid.Parse(cur)
		}
		if l.Branch != card.Branch {
			return oid.Zero, refusal.New(refusal.NeedsPerson, "a person decides where the card's work goes: queue it again under a card naming one branch",
				"card %s's candidate %s was %s for %s, but the card names %s", card.Label, text.Short(cur), l.Event, l.Branch, card.Branch)
		}
		if l.Event == LandLanded {
			return oid.Zero, refusal.New(refusal.AlreadyLanded, "nothing to do: an accepted head lands once (git nwdes swarm land never lands a candidate twice)",
				"card %s's candidate %s landed on %s's %s (over %s) at %s by %s", card.Label, text.Short(cur), l.Remote, l.Branch, orNew(l.Onto), l.At, l.By)
		}
		cur = l.Rebased
	}
	return oid.Zero, refusal.NewUnreadable(refusal.RecordMalformed, "run git nwdes fsck",
		"card %s's landing records chain more than %d candidates (a loop)", card.Label, maxChain)
}

func orNew(onto string) string {
	if onto == "" {
		return "no tip: it made the branch"
	}
	return text.Short(onto)
}

func hexOrEmpty(id oid.ID) string {
	if id.IsZero() {
		return ""
	}
	return id.String()
}

// mergeBase is the one commit where the candidate left the branch: none
// or several (criss-cross histories) are a person's to decide.
func mergeBase(st *gitstore.Store, label string, cand, tip oid.ID, branch gitstore.RefName) (oid.ID, error) {
	bases, err := st.MergeBases(cand, tip)
	if err != nil {
		return oid.Zero, err
	}
	if len(bases) != 1 {
		sort.Slice(bases, func(i, k int) bool { return oid.Compare(bases[i], bases[k]) < 0 })
		return oid.Zero, refusal.New(refusal.NeedsPerson, "a person rebases it onto the branch by hand and queues the result as a new card",
			"card %s's candidate %s and %s's tip %s have %d merge bases, not one: land rebases only a candidate that left the branch at one commit",
			label, cand.Short(), branch, tip.Short(), len(bases))
	}
	return bases[0], nil
}
