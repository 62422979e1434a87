package ledger

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/internal/names"
	"github.com/nwdes/nwdes/refusal"
)

// Family is where ledgers live: refs/nwdes/ledgers/<name>.
const Family gitstore.RefName = "refs/nwdes/ledgers/"

// Kinds: ledger.entry v1 (Entry) and ledger.seal v1 (Seal).
const (
	KindEntry gitstore.Kind = "ledger.entry"
	KindSeal  gitstore.Kind = "ledger.seal"
)

// MaxEvent bounds one event's canonical JSON.
const MaxEvent = 64 << 10

// MaxEventDepth bounds how deeply an event's JSON nests (objects and
// arrays): an event nested deeper is refused by that name.
const MaxEventDepth = 64

// Register declares the ledgers' kinds and ref family.
func Register(r *gitstore.Registry) error {
	for _, k := range []gitstore.KindSpec{{Kind: KindEntry, Version: 1, Check: check}, {Kind: KindSeal, Version: 1, Check: check}} {
		if err := r.DeclareKind(k); err != nil {
			return err
		}
	}
	return r.DeclareRef(gitstore.RefSpec{Ref: Family, Policy: gitstore.PolicyFastForward, Layout: []string{"entries", "seal"},
		Immutable: []string{"entries", "seal"}, Kinds: []gitstore.Kind{KindEntry, KindSeal}})
}

// Ref is the ref of ledger name, or a refusal of a name git could not hold.
func Ref(name string) (gitstore.RefName, error) {
	if !names.Component(name, 100) || strings.HasSuffix(name, ".lock") {
		return "", refusal.New(refusal.RefNameInvalid, "name the ledger with letters, digits, '.', '_' and '-'",
			"%q is not a ledger name", name)
	}
	return gitstore.RefName(string(Family) + name), nil
}

// Entry is one ledger entry.
type Entry struct {
	Seq    int             `json:"seq"`
	Prev   string          `json:"prev"`
	Event  json.RawMessage `json:"event"`
	Digest string          `json:"digest"`
}

// Genesis is the Prev of the first entry.
var Genesis = strings.Repeat("0", 64)

// digestOf is the SHA-256 of an entry's canonical {event, prev, seq}.
func digestOf(seq int, prev string, event json.RawMessage) (string, error) {
	b, err := gitstore.Canonical(struct {
		Event json.RawMessage `json:"event"`
		Prev  string          `json:"prev"`
		Seq   int             `json:"seq"`
	}{event, prev, seq})
	if err != nil {
		return "", err
	}
	d := sha256.Sum256(b)
	return hex.EncodeToString(d[:]), nil
}

// Seal closes a ledger: its count and final digest.
type Seal struct {
	Count int    `json:"count"`
	Final string `json:"final"`
	At    string `json:"at"`
}

func entryPath(seq int) string {
	return fmt.Sprintf("entries/%06x/%010d", seq>>8, seq)
}

const sealPath = "seal"

// CanonicalEvent parses an event (one JSON object) and returns its
// canonical JSON, refusing anything else: text that is not UTF-8 or holds
// an unpaired surrogate escape (InputNotUTF8), JSON nested deeper than
// MaxEventDepth, or anything but one object (InputUnreadable).
func CanonicalEvent(b []byte) (json.RawMessage, error) {
	bad := func(format string, args ...any) error {
		return refusal.NewUnreadable(refusal.InputUnreadable, "give the event as one JSON object",
			"event: %s", fmt.Sprintf(format, args...))
	}
	if err := soundText(b); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil || v == nil {
		return nil, bad("not a JSON object")
	}
	if dec.More() {
		return nil, bad("data after the object")
	}
	if err := noDuplicates(b); err != nil {
		return nil, bad("%v", err)
	}
	c, err := gitstore.Canonical(v)
	if err != nil {
		return nil, bad("%v", err)
	}
	if len(c) > MaxEvent {
		return nil, refusal.New(refusal.RecordTooLarge, "record less in one event", "the event is %d bytes, over %d", len(c), MaxEvent)
	}
	return c, nil
}

// soundText refuses, before encoding/json reads b, what it would change
// without a word or report as something else: bytes that are not UTF-8 and
// a \u escape of half a surrogate pair are both decoded as U+FFFD, so two
// different events would get one canonical form and one digest; and JSON
// nested past MaxEventDepth, which the decoder reports as malformed.
func soundText(b []byte) error {
	if !utf8.Valid(b) {
		return refusal.New(refusal.InputNotUTF8, "give the event as UTF-8",
			"event: holds bytes that are not UTF-8; a ledger keeps an event exactly or not at all")
	}
	depth, inStr := 0, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inStr && c == '"':
			inStr = false
		case inStr && c == '\\' && i+1 < len(b) && b[i+1] == 'u':
			r, ok := hex4(b, i+2)
			switch {
			case !ok:
				i++ // not an escape: the decoder refuses it
				continue
			case utf16.IsSurrogate(r) && r < 0xdc00:
				if lo, ok := escapedRune(b, i+6); ok && lo >= 0xdc00 && lo <= 0xdfff {
					i += 11
					continue
				}
				fallthrough
			case utf16.IsSurrogate(r):
				return refusal.New(refusal.InputNotUTF8, "give the event as UTF-8: a character beyond U+FFFF is escaped as a pair (\\ud83d\\ude00), never half of one",
					"event: the escape %s at byte %d is half of a surrogate pair, which no UTF-8 text holds; a ledger keeps an event exactly or not at all", b[i:i+6], i)
			}
			i += 5
		case inStr && c == '\\':
			i++
		case inStr:
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			if depth++; depth > MaxEventDepth {
				return refusal.NewUnreadable(refusal.InputUnreadable, fmt.Sprintf("nest the event at most %d levels deep", MaxEventDepth),
					"event: nests deeper than %d levels (objects and arrays)", MaxEventDepth)
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return nil
}

// escapedRune reads a \uXXXX escape at b[i:].
func escapedRune(b []byte, i int) (rune, bool) {
	if i+1 >= len(b) || b[i] != '\\' || b[i+1] != 'u' {
		return 0, false
	}
	return hex4(b, i+2)
}

// hex4 reads four hexadecimal digits at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// noDuplicates refuses a JSON text with a key twice in one object.
func noDuplicates(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	var walk func() error
	walk = func() error {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		switch t {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				ks := k.(string)
				if seen[ks] {
					return fmt.Errorf("key %q appears twice", ks)
				}
				seen[ks] = true
				if err := walk(); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		case json.Delim('['):
			for dec.More() {
				if err := walk(); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		}
		return nil
	}
	return walk()
}

// Store is what appending asks of the store: the ledger's records, the
// check that its last commit kept every earlier entry, and that commit's
// parent. The git store plays it, and memstore in tests.
type Store interface {
	gitstore.RecordWriter
	gitstore.AppendOnly
	gitstore.Ancestry
}

// Verifier is what verifying a ledger whole reads: its history, each
// commit's changes and the checkpoint.
type Verifier interface {
	gitstore.RecordReader
	gitstore.AppendOnly
}

// Append adds event (any JSON object; stored canonical) as the ledger's
// next entry by one compare-and-swap. A sealed ledger refuses
// (LedgerSealed); a ledger that does not verify at its tip's last entry is
// never written on.
func Append(ctx context.Context, st Store, name string, event []byte) (*Entry, error) {
	ref, err := Ref(name)
	if err != nil {
		return nil, err
	}
	ev, err := CanonicalEvent(event)
	if err != nil {
		return nil, err
	}
	var e *Entry
	_, err = st.Change(ctx, ref, "append", func(tx gitstore.Edit) error {
		// The commit the append builds on must not have removed or changed
		// what its own parent held (a seal dropped, an entry rewritten by
		// a commit on top): the cost is what that commit changed.
		if tip := tx.Base(); !tip.IsZero() {
			parents, _, err := st.Parents(tip)
			if err != nil {
				return err
			}
			if len(parents) > 1 {
				return broken(ref, "its tip %s merges %d parents: a ledger is one line", tip.Short(), len(parents))
			}
			if len(parents) == 1 {
				if what, err := st.Altered(parents[0], tip, []string{"entries", "seal"}); err != nil {
					return err
				} else if what != "" {
					return broken(ref, "its tip %s removes or changes %s, which its parent held: history rewritten", tip.Short(), what)
				}
			}
		}
		if _, err := tx.Get(sealPath); err == nil {
			return refusal.New(refusal.LedgerSealed, "start another ledger", "ledger %s is sealed", name)
		} else if !errors.Is(err, gitstore.ErrNotFound) {
			return err
		}
		last, err := lastEntry(tx)
		if err != nil {
			return err
		}
		if last != nil {
			if err := checkTail(tx, last); err != nil {
				return err
			}
		}
		seq, prev := 1, Genesis
		if last != nil {
			seq, prev = last.Seq+1, last.Digest
		}
		d, err := digestOf(seq, prev, ev)
		if err != nil {
			return err
		}
		e = &Entry{Seq: seq, Prev: prev, Event: ev, Digest: d}
		rec, err := gitstore.NewRecord(KindEntry, 1, e)
		if err != nil {
			return err
		}
		return tx.Put(entryPath(seq), rec)
	})
	return e, asBroken(err)
}

// lastEntry is the ledger's last entry (nil when empty), checked: its
// digest holds. Finding it reads the last bucket only.
func lastEntry(tx gitstore.View) (*Entry, error) {
	buckets, err := tx.List("entries")
	if err != nil || len(buckets) == 0 {
		return nil, err
	}
	b := buckets[len(buckets)-1]
	names, err := tx.List("entries/" + b)
	if err != nil || len(names) == 0 {
		return nil, err
	}
	path := "entries/" + b + "/" + names[len(names)-1]
	rec, err := tx.Get(path)
	if err != nil {
		return nil, err
	}
	e, err := entryFrom(path, rec)
	if err != nil {
		return nil, broken(tx.Ref(), "%v", err)
	}
	return e, nil
}

// checkTail checks, before an append, the entry the append builds on and
// its link to the one before it: two reads, whatever the ledger's length.
// Verify (and fsck) check the whole chain.
func checkTail(tx gitstore.View, last *Entry) error {
	if last.Seq == 1 {
		if last.Prev != Genesis {
			return broken(tx.Ref(), "entry 1 names an entry before it")
		}
		return nil
	}
	rec, err := tx.Get(entryPath(last.Seq - 1))
	if errors.Is(err, gitstore.ErrNotFound) {
		return broken(tx.Ref(), "entry %d is missing: dropped", last.Seq-1)
	}
	if err != nil {
		return err
	}
	p, err := entryFrom(entryPath(last.Seq-1), rec)
	if err != nil {
		return broken(tx.Ref(), "%v", err)
	}
	if p.Digest != last.Prev {
		return broken(tx.Ref(), "entry %d does not follow entry %d: reordered or edited", last.Seq, p.Seq)
	}
	return nil
}

func entryFrom(path string, rec *gitstore.Record) (*Entry, error) {
	if rec.Kind != KindEntry || rec.V != 1 {
		return nil, fmt.Errorf("%s: a %s v%d record, not a ledger entry", path, rec.Kind, rec.V)
	}
	var e Entry
	if err := rec.Decode(&e); err != nil {
		return nil, err
	}
	if len(rec.Payloads) != 0 {
		return nil, fmt.Errorf("%s: an entry holds no payloads", path)
	}
	if e.Seq < 1 || path != entryPath(e.Seq) {
		return nil, fmt.Errorf("%s: entry %d is stored out of its place", path, e.Seq)
	}
	c, err := CanonicalEvent(e.Event)
	if err != nil || !bytes.Equal(c, e.Event) {
		return nil, fmt.Errorf("%s: its event is not canonical JSON of an object", path)
	}
	d, err := digestOf(e.Seq, e.Prev, e.Event)
	if err != nil {
		return nil, err
	}
	if d != e.Digest {
		return nil, fmt.Errorf("entry %d: its digest %s is not what its content gives (%s): edited", e.Seq, short(e.Digest), short(d))
	}
	return &e, nil
}

func short(d string) string {
	if len(d) > 12 {
		return d[:12]
	}
	return d
}

// asBroken names a ledger whose history the store's check refuses
// (HistoryRewritten: a commit dropped or changed an entry or the seal, or
// the ref no longer contains the tip this clone verified) as broken, with
// the store's detail and remedy; the store's refusal stays inside it.
func asBroken(err error) error {
	if r, ok := refusal.As(err); ok && r.Name == refusal.HistoryRewritten {
		return refusal.NewUnreadable(refusal.LedgerBroken, r.Remedy, "%s", r.Detail).Wrap(err)
	}
	return err
}

func broken(ref gitstore.RefName, format string, args ...any) error {
	return refusal.NewUnreadable(refusal.LedgerBroken, "restore the ledger from a clone that holds it intact (git nwdes fetch), or start another",
		"%s: %s", ref, fmt.Sprintf(format, args...))
}

// Entries reads every entry of the ledger at its tip, in order, checking
// each digest and link (LedgerBroken at the first break).
func Entries(st gitstore.AppendOnly, name string) ([]Entry, *Seal, error) {
	ref, err := Ref(name)
	if err != nil {
		return nil, nil, err
	}
	tx, err := st.VerifiedRecords(ref)
	if err != nil {
		return nil, nil, asBroken(err)
	}
	return chain(tx)
}

// chain reads and checks a view's entries and seal.
func chain(tx gitstore.View) ([]Entry, *Seal, error) {
	buckets, err := tx.List("entries")
	if err != nil {
		return nil, nil, err
	}
	var out []Entry
	prev := Genesis
	for _, b := range buckets {
		names, err := tx.List("entries/" + b)
		if err != nil {
			return nil, nil, err
		}
		for _, n := range names {
			path := "entries/" + b + "/" + n
			rec, err := tx.Get(path)
			if err != nil {
				return nil, nil, err
			}
			e, err := entryFrom(path, rec)
			if err != nil {
				return nil, nil, broken(tx.Ref(), "%v", err)
			}
			want := len(out) + 1
			switch {
			case e.Seq != want:
				return nil, nil, broken(tx.Ref(), "entry %d comes where entry %d belongs: dropped or reordered", e.Seq, want)
			case e.Prev != prev:
				return nil, nil, broken(tx.Ref(), "entry %d names %s as the entry before it, which is %s: dropped, reordered or edited", e.Seq, short(e.Prev), short(prev))
			}
			prev = e.Digest
			out = append(out, *e)
		}
	}
	rec, err := tx.Get(sealPath)
	if errors.Is(err, gitstore.ErrNotFound) {
		return out, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	s, err := sealFrom(rec)
	if err != nil {
		return nil, nil, broken(tx.Ref(), "%v", err)
	}
	if s.Count != len(out) || (len(out) > 0 && s.Final != out[len(out)-1].Digest) || (len(out) == 0 && s.Final != Genesis) {
		return nil, nil, broken(tx.Ref(), "the seal says %d entries ending %s, the ledger holds %d: truncated or extended after sealing", s.Count, short(s.Final), len(out))
	}
	return out, s, nil
}

func sealFrom(rec *gitstore.Record) (*Seal, error) {
	if rec.Kind != KindSeal || rec.V != 1 {
		return nil, fmt.Errorf("seal: a %s v%d record", rec.Kind, rec.V)
	}
	var s Seal
	if err := rec.Decode(&s); err != nil {
		return nil, err
	}
	if _, err := time.Parse(time.RFC3339Nano, s.At); err != nil {
		return nil, fmt.Errorf("seal: at %q is not a time", s.At)
	}
	return &s, nil
}

// SealLedger records the ledger's count and final digest; later appends
// are refused. Sealing a ledger that does not verify is refused.
func SealLedger(ctx context.Context, st gitstore.RecordWriter, name string, now time.Time) (*Seal, error) {
	ref, err := Ref(name)
	if err != nil {
		return nil, err
	}
	var s *Seal
	_, err = st.Change(ctx, ref, "seal", func(tx gitstore.Edit) error {
		entries, old, err := chain(tx)
		if err != nil {
			return err
		}
		if old != nil {
			return refusal.New(refusal.LedgerSealed, "start another ledger", "ledger %s is already sealed", name)
		}
		s = &Seal{Count: len(entries), Final: Genesis, At: now.UTC().Format(time.RFC3339Nano)}
		if len(entries) > 0 {
			s.Final = entries[len(entries)-1].Digest
		}
		rec, err := gitstore.NewRecord(KindSeal, 1, s)
		if err != nil {
			return err
		}
		return tx.Put(sealPath, rec)
	})
	return s, asBroken(err)
}

// Report is what Verify found.
type Report struct {
	Ledger  string `json:"ledger"`
	Entries int    `json:"entries"`
	Final   string `json:"final"`
	Sealed  bool   `json:"sealed"`
	Commits int    `json:"commits"`
	Tip     string `json:"tip"`
}

// Verify re-derives every digest of the ledger at its tip and walks its
// history: one linear chain from a first commit that holds exactly entry 1
// (anything else is a foreign parent), no commit removing or changing what
// its parent held, as many commits as entries (and the seal). The first
// break is a LedgerBroken refusal.
func Verify(st Verifier, name string) (*Report, error) {
	ref, err := Ref(name)
	if err != nil {
		return nil, err
	}
	tip, err := st.Tip(ref)
	if err != nil {
		return nil, err
	}
	if tip.IsZero() {
		return nil, refusal.New(refusal.MissingFact, "append to it first (git nwdes ledger append)", "there is no ledger %s", name)
	}
	tx, err := st.RecordsAt(ref, tip)
	if err != nil {
		return nil, err
	}
	entries, seal, err := chain(tx)
	if err != nil {
		return nil, err
	}
	rep := &Report{Ledger: name, Entries: len(entries), Final: Genesis, Sealed: seal != nil, Tip: tip.String()}
	if len(entries) > 0 {
		rep.Final = entries[len(entries)-1].Digest
	}
	var commits []gitstore.Entry
	if err := st.Log(ref, func(e gitstore.Entry) bool { commits = append(commits, e); return true }); err != nil {
		return nil, err
	}
	rep.Commits = len(commits)
	for _, c := range commits {
		if len(c.Parents) > 1 {
			return nil, broken(ref, "commit %s merges %d parents: a ledger is one line", c.Commit.Short(), len(c.Parents))
		}
		if len(c.Parents) == 1 {
			if what, err := st.Altered(c.Parents[0], c.Commit, []string{"entries", "seal"}); err != nil {
				return nil, err
			} else if what != "" {
				return nil, broken(ref, "commit %s removes or changes %s, which its parent held: history rewritten", c.Commit.Short(), what)
			}
		}
	}
	root := commits[len(commits)-1]
	rtx, err := st.RecordsAt(ref, root.Commit)
	if err != nil {
		return nil, err
	}
	first, firstSeal, err := chain(rtx)
	emptySealed := err == nil && len(first) == 0 && firstSeal != nil && firstSeal.Count == 0 && len(commits) == 1
	if !emptySealed && (err != nil || len(first) != 1 || firstSeal != nil) {
		return nil, broken(ref, "its first commit %s does not hold exactly entry 1: a foreign parent", root.Commit.Short())
	}
	want := len(entries)
	if seal != nil {
		want++
	}
	if len(commits) != want {
		return nil, broken(ref, "%d commits for %d entries%s: entries were appended or removed outside nwdes", len(commits), len(entries), map[bool]string{true: " and a seal"}[seal != nil])
	}
	// What this clone verified before must still be in the chain: a ref
	// moved back past its seal, or rebuilt from entry 1, verifies whole by
	// itself.
	if err := st.CheckHistory(ref, tip); err != nil {
		return nil, asBroken(err)
	}
	return rep, nil
}

// check is fsck's check of each entry and the seal: the entry's digest,
// and its link to the entry before it.
func check(tx gitstore.View, path string, rec *gitstore.Record) error {
	if rec.Kind == KindSeal {
		_, _, err := chain(tx)
		return err
	}
	e, err := entryFrom(path, rec)
	if err != nil {
		return err
	}
	if e.Seq == 1 {
		if e.Prev != Genesis {
			return fmt.Errorf("entry 1 names a previous entry")
		}
		return nil
	}
	prec, err := tx.Get(entryPath(e.Seq - 1))
	if err != nil {
		return fmt.Errorf("entry %d: the entry before it is missing: dropped", e.Seq)
	}
	p, err := entryFrom(entryPath(e.Seq-1), prec)
	if err != nil {
		return err
	}
	if p.Digest != e.Prev {
		return fmt.Errorf("entry %d does not follow entry %d: reordered or edited", e.Seq, p.Seq)
	}
	return nil
}
