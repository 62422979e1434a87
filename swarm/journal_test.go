package swarm_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nwdes/nwdes/examine"
	"github.com/nwdes/nwdes/gitstore"
	"github.com/nwdes/nwdes/gitstore/memstore"
	"github.com/nwdes/nwdes/refusal"
	"github.com/nwdes/nwdes/swarm"
)

const goodJournal = `{"op":"observation add","id":"O1","text":"seen","public":["docs/guide.md"]}
{"op":"observation add","id":"O2","text":"also seen"}
{"op":"verdict set","expectation":"E1","verdict":"met","observations":["O1"]}
{"op":"verdict set","expectation":"E2","verdict":"unmet","class":"product_violation","observations":["O1","O2"]}
{"op":"close","outcome":"accepted","diagnostic":"judged"}
`

func TestAJournalIsCheckedWholeEveryProblemNamingItsLine(t *testing.T) {
	t.Parallel()
	public := func(p string) bool { return p == "docs/guide.md" }
	for _, tc := range []struct {
		name, journal string
		want          []string
	}{
		{"a good journal", goodJournal, nil},
		{"an empty one", "\n", []string{"the journal is empty"}},
		{"one that is not UTF-8", "{\"op\":\"close\",\"text\":\"\xff\"}\n", []string{"not valid UTF-8"}},
		{"a blank line", "\n" + goodJournal, []string{"line 1: is empty"}},
		{"two objects on a line", `{"op":"close","outcome":"accepted","diagnostic":"d"} {}` + "\n", []string{"line 1: holds more than one JSON object"}},
		{"an unknown field", `{"op":"close","outcome":"accepted","diagnostic":"d","signed":true}` + "\n", []string{`line 1: is not a journal entry: json: unknown field "signed"`}},
		{"an unknown op", `{"op":"observe","id":"O1","text":"x"}` + "\n", []string{`line 1: op "observe" is not`, "has no close"}},
		{"ids out of order", `{"op":"observation add","id":"O2","text":"x"}` + "\n" + `{"op":"close","outcome":"accepted","diagnostic":"d"}`, []string{`line 1: observation add: id "O2" is not O1`}},
		{"a path that is not public", `{"op":"observation add","id":"O1","text":"x","public":["src/a.go"]}` + "\n", []string{`line 1: observation add: "src/a.go" is not a file`, "has no close"}},
		{"a path out of the tree", `{"op":"observation add","id":"O1","text":"x","public":["../docs/guide.md"]}` + "\n", []string{`"../docs/guide.md" is not a file`}},
		{"a citation of what is not issued yet", `{"op":"verdict set","expectation":"E1","verdict":"met","observations":["O1"]}` + "\n", []string{`line 1: verdict set: cites "O1", which no observation add before it issued`}},
		{"a field of another verb", `{"op":"verdict set","expectation":"E1","verdict":"not_examined","reason":"r","diagnostic":"d"}` + "\n", []string{"line 1: verdict set takes no diagnostic"}},
		{"a close before the end", `{"op":"close","outcome":"accepted","diagnostic":"d"}` + "\n" + `{"op":"close","outcome":"accepted","diagnostic":"d"}`, []string{"line 1: close is not the last entry", "closes 2 times"}},
		{"a close with nothing", `{"op":"close"}`, []string{"line 1: close: names an outcome (accepted) and a diagnostic"}},
		{"too many lines", strings.Repeat(`{"op":"close"}`+"\n", swarm.MaxJournalEntries+1), []string{"more than 1000"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, problems := swarm.ParseJournal([]byte(tc.journal), public)
			if len(tc.want) == 0 && len(problems) > 0 {
				t.Fatalf("problems %q, want none", problems)
			}
			all := strings.Join(problems, "\n")
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("problems %q do not name %q", problems, w)
				}
			}
		})
	}
}

func TestAJournalIsReadBoundedAndNeverThroughALink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := swarm.ReadJournal(dir); !errors.Is(err, swarm.ErrNoJournal) {
		t.Fatalf("no journal: %v, want ErrNoJournal", err)
	}
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte(goodJournal), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, plant := range map[string]func(p string) error{
		"a symbolic link": func(p string) error { return os.Symlink(secret, p) },
		"a FIFO":          func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"a directory":     func(p string) error { return os.Mkdir(p, 0o700) },
		"a file too large": func(p string) error {
			return os.WriteFile(p, []byte(strings.Repeat("x", swarm.MaxJournalSize+1)), 0o600)
		},
	} {
		t.Run(name, func(t *testing.T) {
			d := t.TempDir()
			if err := plant(filepath.Join(d, swarm.JournalName)); err != nil {
				t.Fatal(err)
			}
			_, err := swarm.ReadJournal(d)
			if rf, ok := refusal.As(err); !ok || rf.Name != refusal.JournalInvalid {
				t.Fatalf("ReadJournal = %v, want JournalInvalid", err)
			}
		})
	}
}

const twoRows = "# REQUEST\nr\n\n# ACCEPTANCE CRITERIA\nE1. one\nE2. two\n\n# FILE SCOPE\nx\n"

func replayer(t *testing.T) (*examine.Examiner, examine.Target) {
	t.Helper()
	st, err := memstore.New(memstore.Options{Registry: gitstore.MustRegistry(examine.Register)})
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.AddCommit(memstore.Commit{Files: map[string][]byte{".nwave/features/f.md": []byte(twoRows)}, Message: "contract"})
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	x := &examine.Examiner{Store: st, Now: func() time.Time { clock = clock.Add(time.Second); return clock },
		Drafts: examine.ReplayDrafts + "exam/1-0123456789abcdef",
		By:     &examine.ExaminedBy{Worker: "w", Identity: "w <w@nwdes.invalid>", Job: "exam/1-0123456789abcdef"}}
	return x, examine.Target{Feature: "f", Candidate: c.String()}
}

func TestAJournalReplaysThroughTheExamineVerbsIntoAnExaminationByTheWorker(t *testing.T) {
	t.Parallel()
	x, tgt := replayer(t)
	entries, problems := swarm.ParseJournal([]byte(goodJournal), nil)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	ex, err := swarm.Replay(context.Background(), x, tgt, entries)
	if err != nil {
		t.Fatal(err)
	}
	if ex.Outcome != examine.Rejected || ex.By == nil || ex.By.Worker != "w" || string(ex.Texts[0].Text) != "seen\npublic evidence: docs/guide.md\n" {
		t.Fatalf("examination = %+v", ex)
	}
	if d, _, err := (&examine.Examiner{Store: x.Store}).Show("f"); err != nil || d != nil {
		t.Fatalf("the clone's own draft: %+v, %v; want none", d, err)
	}
}

func TestAJournalTheVerbsRefuseIsRefusedWholeAndPublishesNothing(t *testing.T) {
	t.Parallel()
	x, tgt := replayer(t)
	j := `{"op":"observation add","id":"O1","text":"seen"}
{"op":"verdict set","expectation":"E9","verdict":"met","observations":["O1"]}
{"op":"verdict set","expectation":"E1","verdict":"unmet","observations":["O1"]}
{"op":"close","outcome":"accepted","diagnostic":"d"}
`
	entries, problems := swarm.ParseJournal([]byte(j), nil)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	ex, err := swarm.Replay(context.Background(), x, tgt, entries)
	rf, ok := refusal.As(err)
	if ex != nil || !ok || rf.Name != refusal.JournalInvalid {
		t.Fatalf("Replay = %v, %v; want JournalInvalid", ex, err)
	}
	for _, w := range []string{"line 2: verdict set: MissingFact", "line 3: verdict set: PartInvalid", "line 4: close: not made"} {
		if !strings.Contains(rf.Detail, w) {
			t.Errorf("refusal %q does not name %q", rf.Detail, w)
		}
	}
	var je *swarm.JournalError
	if !errors.As(err, &je) || len(je.Problems) != 3 {
		t.Fatalf("JournalError = %+v", je)
	}
	if _, pub, _ := x.Show("f"); pub != nil {
		t.Fatalf("published %+v", pub)
	}
}
