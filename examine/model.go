package examine

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/internal/lazyre"
	"github.com/nwdes/nwdes/internal/names"
	"github.com/nwdes/nwdes/refusal"
)

// Ref holds every examination record: drafts, published examinations and
// the per-feature index. One ref, however many examinations: every push
// lists every ref, so records must not each get one.
const Ref gitstore.RefName = "refs/nwdes/examine"

// DraftsRef holds each feature's draft examination. It is this clone's own
// (outside refs/nwdes/, so push, fetch and remote setup never carry it):
// only published examinations travel, and they are immutable records under
// unique names, so clones merge them by union and lose nothing, and an O
// ID a clone printed only ever denotes the text that clone recorded.
const DraftsRef gitstore.RefName = "refs/nwdes-local/drafts"

// ReplayDrafts is the family of private draft refs, one per replay of a
// swarm worker's journal (Examiner.Drafts): local, and removed once the
// replay published or was refused, so a person's drafts are never read
// or touched by a worker's.
const ReplayDrafts gitstore.RefName = "refs/nwdes-local/replays/"

// Record kinds and their versions.
//
// examine.draft v1: a feature's working draft (observations, verdicts, the
// contract rows it last saw); observation texts are payloads O<n>.
// examine.draft v2: adds the candidate the draft examines, and per
// observation the commit it was made at, whether the examiner carried it
// over from another commit, and for a gate observation its evidence and
// state. A v1 draft is read, and must be bound (examine open --retarget)
// before anything is added to it or closed from it.
// examine.draft v3: the head alone (feature, candidate, next_id,
// verdicts, rows), each observation an examine.observation record of its
// own (draftobs.go), so that an add costs the same however many
// observations the draft holds. A v1 or v2 draft is read whole and
// written as v3 by the next verb that saves it.
// examine.observation v1: one observation of a v3 draft (id, source,
// commit, carried, gate), its text the payload "text", at
// draftobs/<feature>/<n/100>/O<n>.
// examine.examination v1: one published, immutable examination; cited
// texts are payloads t<n>.
// examine.examination v2: a cited text made at another commit than the
// candidate (carried over by the examiner) names that commit.
// examine.examination v4: the gates mode the examiner closed under
// ("advisory" when nwdes.gates=advisory; absent: binding).
// examine.examination v5: a met row records the proof of its oracle
// (proven or vacuous) and the base it was run at.
// examine.examination v6: the examiner, when a swarm worker examined
// (worker, identity, job: ExaminedBy).
// examine.latest v1: per feature, where its newest examination is.
const (
	KindDraft       gitstore.Kind = "examine.draft"
	KindExamination gitstore.Kind = "examine.examination"
	KindLatest      gitstore.Kind = "examine.latest"
)

// Verdict is an examiner's judgment of one expectation.
type Verdict string

const (
	Met         Verdict = "met"
	Unmet       Verdict = "unmet"
	NotExamined Verdict = "not_examined"
)

// Class says why an unmet expectation is unmet.
type Class string

// The classes an unmet verdict may carry.
var Classes = []Class{"oracle_gap", "product_violation", "expectation_defect", "observation_gap", "unstable"}

// Outcome is what the verdicts of a closed examination derive.
type Outcome string

const (
	Accepted      Outcome = "accepted"
	Rejected      Outcome = "rejected"
	Indeterminate Outcome = "indeterminate"
	// None is reported for a feature with no published examination.
	None Outcome = "none"
)

// Source says who recorded an observation.
type Source string

const (
	SourceExaminer Source = "examiner"
	SourceGate     Source = "gate"
)

// ObservationID is a draft-local label O<n>, issued by nwdes, never reused
// within a draft.
type ObservationID string

func observationID(n int) ObservationID { return ObservationID("O" + strconv.Itoa(n)) }

var (
	obsID = lazyre.New(`^O[1-9][0-9]*$`)
)

// ValidFeature refuses feature names that cannot be a path component.
func ValidFeature(f string) error {
	if !names.Component(f, 100) {
		return refusal.New(refusal.MissingFact, "name the feature with letters, digits, '.', '_' and '-' (--feature NAME)",
			"feature name %q is not valid", f)
	}
	return nil
}

// DeriveOutcome applies the rule: any unmet row rejects; otherwise any
// not_examined row is indeterminate; only an all-met set is accepted.
func DeriveOutcome(verdicts []Verdict) Outcome {
	out := Accepted
	for _, v := range verdicts {
		switch v {
		case Unmet:
			return Rejected
		case NotExamined:
			out = Indeterminate
		}
	}
	return out
}

func validClass(c Class) bool {
	for _, k := range Classes {
		if k == c {
			return true
		}
	}
	return false
}

func classList() string {
	s := make([]string, len(Classes))
	for i, c := range Classes {
		s[i] = string(c)
	}
	return strings.Join(s, ", ")
}

func fanout(commit string) string { return commit[:2] + "/" + commit[2:] }

func publishedDir(commit, feature string) string {
	return fmt.Sprintf("published/%s/%s", fanout(commit), feature)
}
