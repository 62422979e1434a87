package swarm

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/nwdes/nwdes/refusal"
)

// FuzzParseWorker feeds the worker reader any description: it must not
// panic; a refusal is WorkerInvalid with at least one problem; an accepted
// worker validates, renders as JSON that reads back to an equal worker, and
// its Args hold no placeholder left unexpanded — with the prompt path and
// the model both a NUL, which no argument holds, every placeholder-shaped
// text left would come from the description itself.
func FuzzParseWorker(f *testing.F) {
	for _, s := range []string{
		`{"name": "coder", "harness": "/usr/local/bin/agent", "harness_args": ["--prompt-file", "{prompt}", "--model={model}", "{}", "{{prompt}}"], "model": "m", "deadline": "30m", "slots": 2, "read_roots": ["/usr/share"], "env": ["API_KEY"]}`,
		`{"name": "w", "harness": "agent", "deadline": "24h"}`,
		`{"name": "coder", "harness": "bin/agent", "deadline": "48h", "env": ["API_KEY", "HOME"]}`,
		`{"name": "w", "harness": "agent", "deadline": "1m", "harness_args": ["{promt}", "{x{model}y}", 3]}`,
		`{"name": "w", "name": "v", "harness": "agent", "deadline": "1m", "slots": 1.5, "x": null}`,
		`{"name": "w\ud800", "harness": "/a/../b", "deadline": "-1s", "read_roots": ["/", "/a", "/a"]}`,
		`{"name": "w", "harness": "agent", "deadline": "1m"} {}`,
		`[]`,
		``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		w, err := ParseWorker(b)
		if err != nil {
			if w != nil {
				t.Fatal("a refusal returned a worker")
			}
			var werr *WorkerError
			if !refusal.Named(err, refusal.WorkerInvalid) || !errors.As(err, &werr) || len(werr.Problems) == 0 {
				t.Fatalf("err = %v, want WorkerInvalid with problems", err)
			}
			return
		}
		if err := w.Validate(); err != nil {
			t.Fatalf("an accepted worker does not validate: %v", err)
		}
		j, err := json.Marshal(w)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseWorker(j)
		if err != nil {
			t.Fatalf("%s does not read back: %v", j, err)
		}
		norm := func(w Worker) Worker {
			for _, l := range []*[]string{&w.HarnessArgs, &w.ReadRoots, &w.Env} {
				if *l == nil {
					*l = []string{}
				}
			}
			return w
		}
		if !reflect.DeepEqual(norm(*back), norm(*w)) {
			t.Fatalf("read back %+v, want %+v", *back, *w)
		}
		marked := *w
		marked.Model = "\x00"
		for _, a := range marked.Args("\x00") {
			if ph := placeholder.FindString(a); ph != "" {
				t.Fatalf("Args left %s in %q", ph, a)
			}
		}
		if got := w.Args("/job/prompt.md"); len(got) != len(w.HarnessArgs) {
			t.Fatalf("Args = %q for %q", got, w.HarnessArgs)
		}
	})
}

// FuzzParseCard feeds the card reader any file: it must not panic; a
// refusal is CardInvalid with at least one problem; an accepted card's
// ContractLine is its line 1, Base begins with Sha12, its text is the file,
// and line 1 is exactly "RESULT: " + Label + " sha=" + Sha12.
func FuzzParseCard(f *testing.F) {
	for _, s := range []string{
		testCard,
		testLine1 + "\nBASE: " + testBase,
		testLine1 + "\r\nBASE: " + testBase + "\r\n",
		"RESULT: a..b sha=XYZ \nBASE: 0123\nbad line\nX: 1\nX: 2\nDEADLINE: 0s\n\nprompt\x00\n",
		"RESULT: fix sha=aaaaaaaaaaaa\nBASE: " + testBase + "\nDEADLINE: 25h\n",
		"",
		"\xff",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseCard(b)
		if err != nil {
			if c != nil {
				t.Fatal("a refusal returned a card")
			}
			var cerr *CardError
			if !refusal.Named(err, refusal.CardInvalid) || !errors.As(err, &cerr) || len(cerr.Problems) == 0 {
				t.Fatalf("err = %v, want CardInvalid with problems", err)
			}
			return
		}
		line1, _, _ := strings.Cut(string(b), "\n")
		switch {
		case c.ContractLine != line1:
			t.Fatalf("ContractLine = %q, line 1 = %q", c.ContractLine, line1)
		case c.ContractLine != ContractPrefix+c.Label+" sha="+c.Sha12:
			t.Fatalf("ContractLine = %q for label %q and sha %q", c.ContractLine, c.Label, c.Sha12)
		case len(c.Base) != 40 || c.Base[:12] != c.Sha12:
			t.Fatalf("Base = %q, Sha12 = %q", c.Base, c.Sha12)
		case string(c.Text) != string(b):
			t.Fatal("Text is not the file")
		case len(b) > MaxCardSize || !utf8.Valid(b) || strings.ContainsRune(string(b), 0):
			t.Fatal("an unbounded, invalid or NUL-holding card was accepted")
		case c.Deadline < 0 || c.Deadline > MaxDeadline:
			t.Fatalf("Deadline = %v", c.Deadline)
		}
		if v, ok := c.Lookup(BaseHeader); !ok || v != c.Base {
			t.Fatalf("Lookup(BASE) = %q, %v", v, ok)
		}
		if r := CheckResult(c, MachineryResult(c, "fuzz")); r.Verdict == VerdictOK {
			t.Fatalf("the machinery's report counted ok: %+v", r)
		}
		if r := CheckResult(c, []byte(c.ContractLine+"\nDONE\n")); r.Verdict != VerdictOK {
			t.Fatalf("the minimal report was not ok: %+v", r)
		}
	})
}

// FuzzCheckResult checks any report against a card: it must not panic; an
// ok report has the card's contract line as line 1 and DONE opening line 2;
// a verdict other than ok or blocked names a reason; the machinery's report
// is never ok.
func FuzzCheckResult(f *testing.F) {
	for _, s := range []string{
		testLine1 + "\nDONE\n",
		testLine1 + "\nDONE all green\nfindings\n",
		testLine1 + "\nBLOCKED the base does not build\n",
		testLine1 + "\nABSTAIN",
		testLine1 + "\r\nDONE\r\n",
		testLine1 + "\nDONE \n",
		"RESULT: BLOCKED no-result fix-lease.1\nwritten-by: nwdes swarm\n",
		"",
	} {
		f.Add([]byte(s))
	}
	c, err := ParseCard([]byte(testCard))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r := CheckResult(c, b)
		switch r.Verdict {
		case VerdictOK:
			line1, rest, _ := strings.Cut(string(b), "\n")
			if line1 != c.ContractLine || !strings.HasPrefix(rest, "DONE") || r.Status != StatusDone || r.Reason != "" {
				t.Fatalf("%q counted ok: %+v", b, r)
			}
			if IsMachineryResult(b) {
				t.Fatalf("the machinery's report %q counted ok", b)
			}
		case VerdictBlocked:
			if r.Status != StatusBlocked && r.Status != StatusAbstain || r.Reason != "" {
				t.Fatalf("%q: %+v", b, r)
			}
		case VerdictRefused:
			if r.Reason == "" || r.Status != "" {
				t.Fatalf("%q refused without a reason: %+v", b, r)
			}
		default:
			t.Fatalf("verdict %q", r.Verdict)
		}
		if IsMachineryResult(b) && r.Verdict == VerdictOK {
			t.Fatal("a machinery report counted ok")
		}
	})
}

// FuzzParseSpent feeds the spent.json reader any bytes: it must not
// panic; a reading it accepts is non-negative, within its bounds, and
// reads back from its own rendering; a refusal names what is wrong.
func FuzzParseSpent(f *testing.F) {
	for _, s := range []string{
		`{"tokens": 1200, "cost_usd": 0.0305, "turns": 3}`,
		`{"cost_usd": 1000000000}`,
		`{"tokens": 1, "tokens": 2}`,
		`{"tokens": -1}`, `{"cost_usd": 1e3}`, `{"turns": 1.0}`, `{}`, `[]`, `{"x": 1}`, `{"turns": 1} x`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, why := ParseSpent(b)
		if why != "" {
			if s != (Spent{}) {
				t.Fatalf("a refused reading %q returned %+v", why, s)
			}
			return
		}
		if s.Tokens < 0 || s.Turns < 0 || s.CostMicros < 0 || s.Tokens > maxSpentCount || s.Turns > maxSpentCount || s.CostMicros > maxCostMicros {
			t.Fatalf("%s read as %+v", b, s)
		}
		again, why := ParseSpent(fmt.Appendf(nil, `{"tokens": %d, "cost_usd": %s, "turns": %d}`, s.Tokens, formatMicros(s.CostMicros), s.Turns))
		if why != "" || again != s {
			t.Fatalf("%+v renders to a reading of %+v (%s)", s, again, why)
		}
	})
}

// FuzzParseBudget feeds the BUDGET reader any value: it must not panic,
// and a budget read without problems renders (String) to the same
// budget.
func FuzzParseBudget(f *testing.F) {
	for _, s := range []string{"tokens=1000 cost_usd=1.5 turns=20", "cost_usd=0.000001", "tokens=0", "tokens=1 tokens=2", "nap=1", "tokens=1  turns=2", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		b, problems := ParseBudget(v)
		if len(problems) > 0 {
			return
		}
		again, problems := ParseBudget(b.String())
		if len(problems) > 0 || again != b {
			t.Fatalf("%q read as %+v renders as %q, read back as %+v (%v)", v, b, b.String(), again, problems)
		}
	})
}

// FuzzParseJournal feeds the journal reader what an examine job may
// write: it must not panic; a journal with no problem ends with exactly
// one close and issues observation IDs in order; every problem names a
// line or the journal, and a journal with one is never empty of them.
func FuzzParseJournal(f *testing.F) {
	for _, seed := range []string{
		`{"op":"observation add","id":"O1","text":"README says hi"}` + "\n" + `{"op":"verdict set","expectation":"E1","verdict":"met","observations":["O1"]}` + "\n" + `{"op":"close","outcome":"accepted","diagnostic":"ok"}` + "\n",
		`{"op":"close","outcome":"rejected","diagnostic":"no"}`,
		`{"op":"observation add","id":"O2"}`,
		"", "\n\n", `{"op":"close"}{"op":"close"}`, "\xff",
		`{"op":"observation add","id":"O1","text":"x","public":["../etc/passwd","/abs","ok.md"]}` + "\n" + `{"op":"close","outcome":"accepted","diagnostic":"d"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		entries, problems := ParseJournal(b, nil)
		for _, p := range problems {
			if !strings.HasPrefix(p, "line ") && !strings.HasPrefix(p, "the journal ") {
				t.Fatalf("a problem that names neither a line nor the journal: %q", p)
			}
		}
		if len(problems) > 0 {
			return
		}
		if len(entries) == 0 || entries[len(entries)-1].Op != OpClose {
			t.Fatalf("a journal accepted without a close last: %+v", entries)
		}
		issued := 0
		for _, e := range entries[:len(entries)-1] {
			if e.Op == OpClose {
				t.Fatalf("a journal accepted with a close before its end: %+v", entries)
			}
			if e.Op == OpObservationAdd {
				issued++
				if want := fmt.Sprintf("O%d", issued); e.ID != want {
					t.Fatalf("observation %q accepted where %s comes next", e.ID, want)
				}
			}
		}
	})
}
