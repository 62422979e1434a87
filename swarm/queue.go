package swarm

import (
	"context"
	"errors"
	"sort"
	"time"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/refusal"
)

// Queued is one card in the queue.
type Queued struct {
	Card *Card
	// Deadline is the card's own (DEADLINE: or swarm add --deadline), zero
	// for the worker's.
	Deadline time.Duration
	Added    time.Time
	By       string
}

type cardBody struct {
	Label    string `json:"label"`
	Base     string `json:"base"`
	Contract string `json:"contract"`
	Deadline string `json:"deadline,omitempty"`
	Added    string `json:"added"`
	By       string `json:"by"`
}

const cardPayload = "card"

func cardPath(label string) string { return "cards/" + label }

// Queuer is what queueing asks of the store: the queue's records, and the
// card's base commit, which must be one the repository has.
type Queuer interface {
	gitstore.RecordWriter
	gitstore.Ancestry
}

// Add queues card (its text parsed by ParseCard; its base must be a commit
// this repository has). A label already queued is refused (CardExists).
func Add(ctx context.Context, st Queuer, c *Card, deadline time.Duration, by string, now time.Time) error {
	base, err := oid.Parse(c.Base)
	if err == nil {
		_, _, err = st.Parents(base)
	}
	if err != nil {
		return refusal.New(refusal.CardInvalid, "fetch the base commit, or name one this repository has in BASE:",
			"card %s: its base %s is not a commit of this repository", c.Label, c.Base)
	}
	if deadline == 0 {
		deadline = c.Deadline
	}
	body := cardBody{Label: c.Label, Base: c.Base, Contract: c.ContractLine, Added: now.UTC().Format(stamp), By: by}
	if deadline > 0 {
		body.Deadline = deadline.String()
	}
	rec, err := gitstore.NewRecord(KindCard, 1, body)
	if err != nil {
		return err
	}
	rec.Payloads = map[string][]byte{cardPayload: c.Text}
	_, err = st.Change(ctx, QueueRef, "queue "+c.Label, func(tx gitstore.Edit) error {
		if _, err := tx.Get(cardPath(c.Label)); err == nil {
			return refusal.New(refusal.CardExists, "give the card another label (line 1: RESULT: <label> sha=<sha12>), or run the queued one again once it has finished: git nwdes swarm requeue "+c.Label,
				"card %s is already queued", c.Label)
		} else if !errors.Is(err, gitstore.ErrNotFound) {
			return err
		}
		return tx.Put(cardPath(c.Label), rec)
	})
	return err
}

// Queue lists the queued cards, oldest first (then by label); a card
// record that does not parse is left out (fsck names it).
func Queue(st gitstore.RecordReader) ([]Queued, error) {
	tx, err := st.Records(QueueRef)
	if err != nil {
		return nil, err
	}
	return queueIn(tx, nil)
}

// queueIn is Queue of the view v, each card parsed once per record tree
// through m (nil: every one parsed).
func queueIn(v gitstore.View, m *memo) ([]Queued, error) {
	entries, err := v.ReadDir("cards")
	if err != nil {
		return nil, err
	}
	var out []Queued
	for _, e := range entries {
		q, err := memoized(m, cardPath(e.Name), e.Hash, func() (*Queued, error) { return queuedFrom(cardPath(e.Name), v) })
		if _, ok := refusal.As(err); ok {
			continue // a card record that does not parse is fsck's to name, not a stop for every card
		}
		if err != nil {
			return nil, err
		}
		out = append(out, *q)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].Added.Equal(out[j].Added) {
			return out[i].Added.Before(out[j].Added)
		}
		return out[i].Card.Label < out[j].Card.Label
	})
	return out, nil
}

func queuedFrom(path string, tx gitstore.View) (*Queued, error) {
	rec, err := tx.Get(path)
	if err != nil {
		return nil, err
	}
	return cardRecord(path, rec)
}

// cardRecord decodes a queued card and checks it against its own text:
// the stored label, base and contract line are what the text says.
func cardRecord(path string, rec *gitstore.Record) (*Queued, error) {
	if rec.Kind != KindCard || rec.V != 1 {
		return nil, malformed(path, "a %s v%d record, not a card", rec.Kind, rec.V)
	}
	var b cardBody
	if err := rec.Decode(&b); err != nil {
		return nil, err
	}
	text, ok := rec.Payloads[cardPayload]
	if !ok || len(rec.Payloads) != 1 {
		return nil, malformed(path, "a card record holds exactly its text")
	}
	c, err := ParseCard(text)
	if err != nil {
		return nil, malformed(path, "its text is not a card: %v", err)
	}
	if c.Label != b.Label || c.Base != b.Base || c.ContractLine != b.Contract || path != cardPath(c.Label) {
		return nil, malformed(path, "the record does not say what its card says")
	}
	q := &Queued{Card: c, By: b.By}
	if q.Added, err = time.Parse(stamp, b.Added); err != nil {
		return nil, malformed(path, "added %q is not a time", b.Added)
	}
	if b.Deadline != "" {
		if q.Deadline, err = time.ParseDuration(b.Deadline); err != nil || q.Deadline <= 0 {
			return nil, malformed(path, "deadline %q is not a duration", b.Deadline)
		}
	}
	return q, nil
}

// checkRecord is fsck's check of every swarm record.
func checkRecord(tx gitstore.View, path string, rec *gitstore.Record) error {
	switch rec.Kind {
	case KindCard:
		_, err := cardRecord(path, rec)
		return err
	case KindLease:
		_, err := leaseFrom(rec)
		return err
	case KindJob:
		_, err := jobFrom(path, rec)
		return err
	case KindStop:
		_, err := stopFrom(path, rec)
		return err
	case KindRequeue:
		_, err := requeueFrom(path, rec)
		return err
	case KindDrop:
		_, err := dropFrom(path, rec)
		return err
	case KindLanding:
		_, err := landingFrom(path, rec)
		return err
	}
	return nil
}
