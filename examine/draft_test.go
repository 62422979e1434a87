package examine_test

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/refusal"
)

// draftFiles lists every file of the drafts ref's records under the
// feature f, with the blob each holds: what a verb wrote is the difference
// between two listings.
func draftFiles(t *testing.T, x *examine.Examiner) map[string]gitstore.DirEntry {
	t.Helper()
	v, err := x.Store.Records(examine.DraftsRef)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]gitstore.DirEntry{}
	var walk func(dir string)
	walk = func(dir string) {
		es, err := v.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			if e.Mode == gitstore.ModeTree {
				walk(dir + "/" + e.Name)
				continue
			}
			out[dir+"/"+e.Name] = e
		}
	}
	walk("drafts/f")
	walk("draftobs/f")
	return out
}

// written lists the files of after that are new or changed since before,
// and those gone.
func written(before, after map[string]gitstore.DirEntry) (changed, gone []string) {
	for p, e := range after {
		if b, ok := before[p]; !ok || b.Hash != e.Hash {
			changed = append(changed, p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			gone = append(gone, p)
		}
	}
	sort.Strings(changed)
	sort.Strings(gone)
	return changed, gone
}

// TestADraftIsAHeadAndOneRecordPerObservation: each verb writes the head
// and the observation records it changed, and nothing else, however many
// observations the draft holds; observations are grouped by hundreds.
func TestADraftIsAHeadAndOneRecordPerObservation(t *testing.T) {
	must := okFor(t)
	x := memSetup(t, threeRows)
	ctx := context.Background()
	must(x.Open(ctx, tg, false))
	for range 120 {
		must(x.AddObservation(ctx, tg, examine.SourceExaminer, []byte("seen")))
	}
	head := []string{"drafts/f/record.json"}
	obs := func(group, id string) []string {
		return []string{"draftobs/f/" + group + "/" + id + "/payload/text", "draftobs/f/" + group + "/" + id + "/record.json"}
	}
	cases := []struct {
		name          string
		do            func() (*examine.Result, error)
		changed, gone []string
	}{
		{"an add writes the head and one new record, in the group of its hundred",
			func() (*examine.Result, error) {
				return x.AddObservation(ctx, tg, examine.SourceExaminer, []byte("the 121st"))
			}, append(head, obs("1", "O121")...), nil},
		{"a set rewrites that observation",
			func() (*examine.Result, error) {
				return x.SetObservation(ctx, tg, examine.Selector{ID: "O7"}, []byte("seen again"))
			}, obs("0", "O7")[:1], nil},
		{"a set by position rewrites the observation at that position, by ID",
			func() (*examine.Result, error) {
				return x.SetObservation(ctx, tg, examine.Selector{At: 100}, []byte("the hundredth"))
			}, obs("1", "O100")[:1], nil},
		{"a remove removes that record and keeps next_id",
			func() (*examine.Result, error) {
				return x.RemoveObservation(ctx, tg, examine.Selector{ID: "O50"})
			}, nil, obs("0", "O50")},
		{"a verdict writes the head alone",
			func() (*examine.Result, error) {
				return x.SetVerdict(ctx, tg, examine.VerdictInput{Expectation: "E1", Verdict: examine.Met, Observations: []examine.ObservationID{"O99", "O121"}})
			}, head, nil},
		{"the next add is not given a removed ID",
			func() (*examine.Result, error) {
				return x.AddObservation(ctx, tg, examine.SourceExaminer, []byte("the 122nd"))
			}, append(head, obs("1", "O122")...), nil},
	}
	for _, c := range cases {
		before := draftFiles(t, x)
		if _, err := c.do(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		changed, gone := written(before, draftFiles(t, x))
		sort.Strings(c.changed)
		if strings.Join(changed, " ") != strings.Join(c.changed, " ") || strings.Join(gone, " ") != strings.Join(c.gone, " ") {
			t.Errorf("%s: wrote %v and removed %v; want %v and %v", c.name, changed, gone, c.changed, c.gone)
		}
	}
	v, err := x.Store.Records(examine.DraftsRef)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := v.Get("drafts/f")
	if err != nil || rec.V != 3 || len(rec.Payloads) != 0 || strings.Contains(string(rec.Body), `"source"`) {
		t.Fatalf("head: %+v, %v", rec, err)
	}
	d, _, err := x.Show("f")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Observations) != 121 || d.Observations[0].ID != "O1" || d.Observations[99].ID != "O101" || d.NextID != 123 {
		t.Fatalf("show read %d observations, the first %s, the 100th %s, next_id %d", len(d.Observations), d.Observations[0].ID, d.Observations[99].ID, d.NextID)
	}
	if string(d.Observations[6].Text) != "seen again" {
		t.Fatalf("O7 reads %q", d.Observations[6].Text)
	}
}

// v2draft is a draft as nwdes wrote it before v3: every observation in
// one record, its text a payload named for its ID.
func v2draft(t *testing.T, candidate string) *gitstore.Record {
	t.Helper()
	body := map[string]any{
		"feature": "f", "candidate": candidate, "next_id": 4, "rows": []string{"E1", "E2", "E3"},
		"observations": []map[string]any{
			{"id": "O1", "source": "examiner", "commit": candidate},
			{"id": "O3", "source": "examiner", "commit": candidate},
		},
		"verdicts": []map[string]any{{"expectation": "E1", "verdict": "met", "observations": []string{"O3"}}},
	}
	rec, err := gitstore.NewRecord(examine.KindDraft, 2, body)
	if err != nil {
		t.Fatal(err)
	}
	rec.Payloads = map[string][]byte{"O1": []byte("first\r\n"), "O3": []byte("third")}
	return rec
}

// TestAV2DraftIsReadAndWrittenBackAsV3: a draft of an earlier nwdes, kept
// in this clone's drafts ref or (older still) in the examinations ref, is
// read whole; its next save writes it as a head and one record per
// observation, IDs, texts, verdicts and next_id kept.
func TestAV2DraftIsReadAndWrittenBackAsV3(t *testing.T) {
	for _, ref := range []gitstore.RefName{examine.DraftsRef, examine.Ref} {
		t.Run(string(ref), func(t *testing.T) {
			must := okFor(t)
			x := memSetup(t, threeRows)
			ctx := context.Background()
			head, err := x.Store.Resolve("HEAD")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := x.Store.Change(ctx, ref, "an earlier nwdes", func(tx gitstore.Edit) error {
				return tx.Put("drafts/f", v2draft(t, head.String()))
			}); err != nil {
				t.Fatal(err)
			}
			d, _, err := x.Show("f")
			if err != nil || len(d.Observations) != 2 || string(d.Observations[0].Text) != "first\r\n" {
				t.Fatalf("show of a v2 draft: %+v, %v", d, err)
			}
			if id := must(x.AddObservation(ctx, tg, examine.SourceExaminer, []byte("fourth"))).Message; id != "O4" {
				t.Fatalf("add issued %s, want O4", id)
			}
			v, err := x.Store.Records(examine.DraftsRef)
			if err != nil {
				t.Fatal(err)
			}
			rec, err := v.Get("drafts/f")
			if err != nil || rec.V != 3 || len(rec.Payloads) != 0 {
				t.Fatalf("the head after an add: %+v, %v", rec, err)
			}
			got := map[string]string{}
			for _, id := range []string{"O1", "O2", "O3", "O4"} {
				rec, err := v.Get("draftobs/f/0/" + id)
				if err == nil {
					got[id] = string(rec.Payloads["text"])
				}
			}
			if len(got) != 3 || got["O1"] != "first\r\n" || got["O3"] != "third" || got["O4"] != "fourth" {
				t.Fatalf("observation records: %q", got)
			}
			d, _, err = x.Show("f")
			if err != nil || len(d.Verdicts) != 1 || d.Verdicts[0].Observations[0] != "O3" || d.NextID != 5 {
				t.Fatalf("show after the upgrade: %+v, %v", d, err)
			}
		})
	}
}

// TestAMalformedObservationIsRefusedAndNamedByFsck: an observation record
// a reader cannot trust is refused by the verbs that read it, by name,
// and fsck names the record, as it does one that belongs to no draft or
// sits where its ID does not put it.
func TestAMalformedObservationIsRefusedAndNamedByFsck(t *testing.T) {
	cases := []struct {
		name  string
		edit  func(tx gitstore.Edit) error
		read  func(x *examine.Examiner) error // a verb that reads the record, or nil
		fsck  string
		where string
	}{
		{"a source no one records as", func(tx gitstore.Edit) error {
			return reput(tx, "draftobs/f/0/O1", "draftobs/f/0/O1", `"examiner"`, `"robot"`)
		}, func(x *examine.Examiner) error {
			_, err := x.SetVerdict(context.Background(), tg, examine.VerdictInput{Expectation: "E1", Verdict: examine.Met, Observations: []examine.ObservationID{"O1"}})
			return err
		}, `O1 has source "robot"`, "draftobs/f/0/O1/record.json"},
		{"an observation filed under another ID", func(tx gitstore.Edit) error {
			return reput(tx, "draftobs/f/0/O2", "draftobs/f/0/O5", "", "")
		}, func(x *examine.Examiner) error {
			_, _, err := x.Show("f")
			return err
		}, `observation "O2" belongs at draftobs/f/0/O2`, "draftobs/f/0/O5/record.json"},
		{"an observation in another hundred", func(tx gitstore.Edit) error {
			return reput(tx, "draftobs/f/0/O2", "draftobs/f/1/O2", "", "")
		}, func(x *examine.Examiner) error {
			_, _, err := x.Show("f")
			return err
		}, `observation "O2" belongs at draftobs/f/0/O2`, "draftobs/f/1/O2/record.json"},
		{"an observation of no draft", func(tx gitstore.Edit) error {
			return reput(tx, "draftobs/f/0/O2", "draftobs/g/0/O2", "", "")
		}, nil, "is an observation of no draft (drafts/g is absent)", "draftobs/g/0/O2/record.json"},
		{"a head whose next_id would reissue an observation", func(tx gitstore.Edit) error {
			return reput(tx, "drafts/f", "drafts/f", `"next_id":3`, `"next_id":2`)
		}, func(x *examine.Examiner) error {
			_, err := x.AddObservation(context.Background(), tg, examine.SourceExaminer, []byte("three"))
			return err
		}, "next_id 2 is not above issued observation O2", "drafts/f/record.json"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			must := okFor(t)
			_, x := setup(t, threeRows)
			ctx := context.Background()
			must(x.Open(ctx, tg, false))
			must(x.AddObservation(ctx, tg, examine.SourceExaminer, []byte("one")))
			must(x.AddObservation(ctx, tg, examine.SourceExaminer, []byte("two")))
			if _, err := x.Store.Change(ctx, examine.DraftsRef, "tamper", c.edit); err != nil {
				t.Fatal(err)
			}
			if c.read != nil {
				if err := c.read(x); !refusal.Named(err, "RecordMalformed") {
					t.Fatalf("read: %v", err)
				}
			}
			st, err := gitstore.Open(x.Store.(*gitstore.Store).Location(), gitstore.Options{Registry: gitstore.MustRegistry(examine.Register)})
			if err != nil {
				t.Fatal(err)
			}
			rep, err := st.Fsck()
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range rep.Problems {
				if p.Path == c.where && strings.Contains(p.What, c.fsck) {
					return
				}
			}
			t.Fatalf("fsck did not name %s (%q): %+v", c.where, c.fsck, rep.Problems)
		})
	}
}

// reput moves the record at from to to, its body edited (old replaced
// by new).
func reput(tx gitstore.Edit, from, to, old, new string) error {
	rec, err := tx.Get(from)
	if err != nil {
		return err
	}
	rec.Body = []byte(strings.Replace(string(rec.Body), old, new, 1))
	if err := tx.Remove(from); err != nil {
		return err
	}
	return tx.Put(to, rec)
}
