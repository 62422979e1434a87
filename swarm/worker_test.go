package swarm

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nwdes/nwdes/refusal"
)

func workerProblems(t *testing.T, err error) []string {
	t.Helper()
	if !refusal.Named(err, refusal.WorkerInvalid) {
		t.Fatalf("err = %v, want a refusal %s", err, refusal.WorkerInvalid)
	}
	if r, _ := refusal.As(err); r.Class != refusal.Refused {
		t.Fatalf("class = %v, want Refused (exit 2)", r.Class)
	}
	var werr *WorkerError
	if !errors.As(err, &werr) {
		t.Fatalf("err = %v holds no *WorkerError", err)
	}
	return werr.Problems
}

func TestAWorkerDescriptionIsRead(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		doc  string
		want Worker
	}{
		{"every field", `{"name": "coder-1.a_b", "harness": "/usr/local/bin/agent",
			"harness_args": ["--prompt-file", "{prompt}", "--model={model}", "{}", "{{", "{1}", "{ prompt }"],
			"model": "big-model", "deadline": "1h30m", "slots": 64,
			"read_roots": ["/usr/share/doc", "/opt/data"], "env": ["API_KEY", "_x1"]}`,
			Worker{Name: "coder-1.a_b", Harness: "/usr/local/bin/agent",
				HarnessArgs: []string{"--prompt-file", "{prompt}", "--model={model}", "{}", "{{", "{1}", "{ prompt }"},
				Model:       "big-model", Deadline: 90 * time.Minute, Slots: 64,
				ReadRoots: []string{"/usr/share/doc", "/opt/data"}, Env: []string{"API_KEY", "_x1"}}},
		{"the required fields alone, slots defaulting to 1", `{"name": "w", "harness": "agent", "deadline": "24h"}`,
			Worker{Name: "w", Harness: "agent", Deadline: 24 * time.Hour, Slots: 1}},
		{"empty lists and keys in any order", `{"env": [], "deadline": "1ns", "read_roots": [], "harness_args": [], "harness": "a b", "name": "W"}`,
			Worker{Name: "W", Harness: "a b", HarnessArgs: []string{}, Deadline: 1, Slots: 1, ReadRoots: []string{}, Env: []string{}}},
		{"escapes in strings", `{"name": "\u0077", "harness": "/bin/\u00e9t\u00e9", "deadline": "5s", "model": "m\ud83d\ude00"}`,
			Worker{Name: "w", Harness: "/bin/été", Deadline: 5 * time.Second, Slots: 1, Model: "m😀"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseWorker([]byte(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, tc.want) {
				t.Fatalf("got %+v, want %+v", *got, tc.want)
			}
			if err := got.Validate(); err != nil {
				t.Fatalf("an accepted worker does not validate: %v", err)
			}
		})
	}
}

func TestEachWorkerProblemIsNamed(t *testing.T) {
	t.Parallel()
	const ok = `"name": "w", "harness": "agent", "deadline": "1m"`
	for _, tc := range []struct {
		name string
		doc  string
		want string
	}{
		{"empty input", ``, "not a JSON object"},
		{"a list", `[]`, "not a JSON object"},
		{"null", `null`, "not a JSON object"},
		{"invalid JSON", `{"name": "w",}`, "not valid JSON"},
		{"an unterminated object", `{"name": "w"`, "ends early"},
		{"a second object", `{` + ok + `} {}`, "data follows the object"},
		{"trailing garbage", `{` + ok + `} x`, "data follows the object"},
		{"a repeated key", `{` + ok + `, "name": "v"}`, `"name": the key is given twice`},
		{"an unknown key", `{` + ok + `, "harnes_args": []}`, `"harnes_args": unknown key (did you mean harness_args?)`},
		{"a missing name", `{"harness": "agent", "deadline": "1m"}`, "name: missing"},
		{"a missing harness", `{"name": "w", "deadline": "1m"}`, "harness: missing"},
		{"a missing deadline", `{"name": "w", "harness": "agent"}`, "deadline: missing"},
		{"a name that is a number", `{"name": 1, "harness": "agent", "deadline": "1m"}`, "name: a number, not a string"},
		{"a null name", `{"name": null, "harness": "agent", "deadline": "1m"}`, "name: null, not a string"},
		{"an empty name", `{"name": "", "harness": "agent", "deadline": "1m"}`, "name: \"\" does not match"},
		{"a name starting with a dot", `{"name": ".w", "harness": "agent", "deadline": "1m"}`, "does not match"},
		{"a name holding ..", `{"name": "a..b", "harness": "agent", "deadline": "1m"}`, "does not match"},
		{"a name holding a slash", `{"name": "a/b", "harness": "agent", "deadline": "1m"}`, "does not match"},
		{"a name of 65 bytes", `{"name": "` + strings.Repeat("a", 65) + `", "harness": "agent", "deadline": "1m"}`, "does not match"},
		{"a name with an unpaired surrogate", `{"name": "w\ud800", "harness": "agent", "deadline": "1m"}`, "name: holds U+FFFD"},
		{"a name of invalid UTF-8", "{\"name\": \"w\xff\", \"harness\": \"agent\", \"deadline\": \"1m\"}", "name: holds U+FFFD"},
		{"a relative harness", `{"name": "w", "harness": "bin/agent", "deadline": "1m"}`, "neither an absolute path nor a bare name"},
		{"an unclean harness", `{"name": "w", "harness": "/usr/../bin/agent", "deadline": "1m"}`, `not a clean absolute path to a program (it would be "/bin/agent")`},
		{"a harness with a trailing slash", `{"name": "w", "harness": "/bin/agent/", "deadline": "1m"}`, "not a clean absolute path"},
		{"the root as harness", `{"name": "w", "harness": "/", "deadline": "1m"}`, "not a clean absolute path"},
		{"a harness with a NUL", `{"name": "w", "harness": "/bin/a\u0000", "deadline": "1m"}`, "control character"},
		{"a harness with a newline", `{"name": "w", "harness": "agent\n", "deadline": "1m"}`, "control character"},
		{"an empty harness", `{"name": "w", "harness": "", "deadline": "1m"}`, "harness: empty"},
		{"a harness of ..", `{"name": "w", "harness": "..", "deadline": "1m"}`, "not a program name"},
		{"harness_args not a list", `{` + ok + `, "harness_args": "{prompt}"}`, "harness_args: a string, not a list of strings"},
		{"harness_args holding a number", `{` + ok + `, "harness_args": ["a", 2]}`, "harness_args[1]: a number, not a string"},
		{"a misspelt placeholder", `{` + ok + `, "harness_args": ["{promt}"]}`, "harness_args[0]: unknown placeholder {promt} (only {prompt} and {model}); did you mean {prompt}?"},
		{"an upper-case placeholder", `{` + ok + `, "harness_args": ["x", "--m={MODEL}"]}`, "harness_args[1]: unknown placeholder {MODEL}"},
		{"an unknown placeholder", `{` + ok + `, "harness_args": ["{workdir}"]}`, "unknown placeholder {workdir}"},
		{"an argument with a NUL", `{` + ok + `, "harness_args": ["a\u0000"]}`, "harness_args[0]: holds a NUL byte"},
		{"a model with a newline", `{` + ok + `, "model": "m\n"}`, "model: \"m\\n\" holds a control character"},
		{"a model that is a list", `{` + ok + `, "model": ["m"]}`, "model: a list, not a string"},
		{"a deadline that is a number", `{"name": "w", "harness": "agent", "deadline": 60}`, "deadline: a number, not a string"},
		{"a deadline without a unit", `{"name": "w", "harness": "agent", "deadline": "60"}`, "not a duration"},
		{"a zero deadline", `{"name": "w", "harness": "agent", "deadline": "0s"}`, "deadline: 0s is not more than 0"},
		{"a negative deadline", `{"name": "w", "harness": "agent", "deadline": "-1m"}`, "is not more than 0"},
		{"a deadline over a day", `{"name": "w", "harness": "agent", "deadline": "24h0m1s"}`, "at most 24h0m0s"},
		{"zero slots", `{` + ok + `, "slots": 0}`, "slots: 0 is not between 1 and 64"},
		{"65 slots", `{` + ok + `, "slots": 65}`, "slots: 65 is not between 1 and 64"},
		{"fractional slots", `{` + ok + `, "slots": 1.5}`, "slots: 1.5 is not a whole number"},
		{"slots in exponent form", `{` + ok + `, "slots": 1e1}`, "not a whole number"},
		{"slots as a string", `{` + ok + `, "slots": "2"}`, "slots: a string, not a whole number"},
		{"huge slots", `{` + ok + `, "slots": 99999999999999999999}`, "not a whole number in range"},
		{"a relative read root", `{` + ok + `, "read_roots": ["usr/share"]}`, `read_roots[0]: "usr/share" is not a clean absolute path`},
		{"an unclean read root", `{` + ok + `, "read_roots": ["/usr/share/"]}`, "not a clean absolute path"},
		{"the root as read root", `{` + ok + `, "read_roots": ["/"]}`, `read_roots[0]: "/" would open the whole file system`},
		{"a repeated read root", `{` + ok + `, "read_roots": ["/a", "/b", "/a"]}`, `read_roots[2]: "/a" repeats read_roots[0]`},
		{"an empty read root", `{` + ok + `, "read_roots": [""]}`, "not a clean absolute path"},
		{"read_roots as an object", `{` + ok + `, "read_roots": {}}`, "read_roots: an object, not a list of strings"},
		{"a bad variable name", `{` + ok + `, "env": ["A-B"]}`, `env[0]: "A-B" does not match`},
		{"a variable name starting with a digit", `{` + ok + `, "env": ["1A"]}`, "does not match"},
		{"PATH", `{` + ok + `, "env": ["PATH"]}`, "env[0]: PATH is set by the machinery"},
		{"HOME", `{` + ok + `, "env": ["HOME"]}`, "set by the machinery"},
		{"LANG", `{` + ok + `, "env": ["LANG"]}`, "set by the machinery"},
		{"TMPDIR", `{` + ok + `, "env": ["TMPDIR"]}`, "set by the machinery"},
		{"XDG_DATA_HOME", `{` + ok + `, "env": ["XDG_DATA_HOME"]}`, "set by the machinery"},
		{"NWDES_JOB_DIR", `{` + ok + `, "env": ["NWDES_JOB_DIR"]}`, "set by the machinery"},
		{"GIT_CONFIG_NOSYSTEM", `{` + ok + `, "env": ["GIT_CONFIG_NOSYSTEM"]}`, "set by the machinery"},
		{"GIT_CONFIG_GLOBAL", `{` + ok + `, "env": ["GIT_CONFIG_GLOBAL"]}`, "env[0]: GIT_CONFIG_GLOBAL would bring the host's git configuration"},
		{"an identity with no email", `{` + ok + `, "identity": "Ada"}`, `identity: "Ada" is not "Name <email>"`},
		{"an identity with a quote", `{` + ok + `, "identity": "A\"da <a@b>"}`, "identity:"},
		{"an identity with a newline", `{` + ok + `, "identity": "Ada\n <a@b>"}`, "identity:"},
		{"an identity with a space in the email", `{` + ok + `, "identity": "Ada <a b@c>"}`, "identity:"},
		{"a repeated variable", `{` + ok + `, "env": ["A", "B", "A"]}`, "env[2]: A repeats env[0]"},
		{"env holding true", `{` + ok + `, "env": [true]}`, "env[0]: a boolean, not a string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w, err := ParseWorker([]byte(tc.doc))
			if w != nil {
				t.Fatalf("accepted %+v", *w)
			}
			p := workerProblems(t, err)
			if len(p) != 1 {
				t.Fatalf("problems = %q, want one", p)
			}
			if !strings.Contains(p[0], tc.want) {
				t.Fatalf("problem = %q, want it to hold %q", p[0], tc.want)
			}
			if !strings.Contains(err.Error(), p[0]) {
				t.Fatalf("the refusal %q does not name the problem", err)
			}
		})
	}
}

func TestThreeMistakesAreReportedTogether(t *testing.T) {
	t.Parallel()
	doc := `{"name": "coder", "harness": "bin/agent", "deadline": "48h", "env": ["API_KEY", "HOME"]}`
	_, err := ParseWorker([]byte(doc))
	p := workerProblems(t, err)
	if len(p) != 3 {
		t.Fatalf("problems = %q, want three", p)
	}
	for i, prefix := range []string{"harness: ", "deadline: ", "env[1]: "} {
		if !strings.HasPrefix(p[i], prefix) {
			t.Errorf("problem %d = %q, want it to begin %q", i, p[i], prefix)
		}
	}
	r, _ := refusal.As(err)
	if !strings.HasPrefix(r.Detail, "3 problems: harness: ") || strings.Count(r.Detail, "; ") != 2 {
		t.Fatalf("detail = %q, want the three problems listed", r.Detail)
	}
}

func TestEveryProblemOfAWorkerIsNamedInDocumentOrder(t *testing.T) {
	t.Parallel()
	doc := `{"name": "../x", "surplus": 1, "harness_args": ["{prompt}", "{Prompt}", 3],
		"slots": 0, "read_roots": ["/", "rel"], "env": ["PATH", "A", "A"], "name": "again"}`
	_, err := ParseWorker([]byte(doc))
	p := workerProblems(t, err)
	want := []string{"name: ", `"surplus": unknown key`, "harness_args[1]: unknown placeholder {Prompt}",
		"harness_args[2]: a number", "slots: 0", "read_roots[0]: ", "read_roots[1]: ",
		"env[0]: PATH", "env[2]: A repeats", `"name": the key is given twice`, "harness: missing", "deadline: missing"}
	if len(p) != len(want) {
		t.Fatalf("problems = %q, want %d", p, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(p[i], want[i]) {
			t.Errorf("problem %d = %q, want it to begin %q", i, p[i], want[i])
		}
	}
}

func TestArgsReplacesThePlaceholdersOnce(t *testing.T) {
	t.Parallel()
	w := &Worker{Model: "{prompt}", HarnessArgs: []string{"-p", "{prompt}", "--model={model}", "{prompt}{model}{prompt}", "{}", "{{prompt}}", "{x"}}
	got := w.Args("/job/{model}/PROMPT.md")
	want := []string{"-p", "/job/{model}/PROMPT.md", "--model={prompt}",
		"/job/{model}/PROMPT.md{prompt}/job/{model}/PROMPT.md", "{}", "{/job/{model}/PROMPT.md}", "{x"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Args = %q, want %q", got, want)
	}
	if got := (&Worker{}).Args("/p"); len(got) != 0 {
		t.Fatalf("Args of no arguments = %q", got)
	}
}

func TestAWorkerRendersAsJSONThatReadsBack(t *testing.T) {
	t.Parallel()
	w := Worker{Name: "w", Harness: "agent", HarnessArgs: []string{"{prompt}"}, Model: "m", Deadline: 90 * time.Minute, Slots: 2, Env: []string{"K"}}
	b, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"name":"w","harness":"agent","harness_args":["{prompt}"],"model":"m","deadline":"1h30m0s","slots":2,"read_roots":[],"env":["K"],"identity":""}`
	if string(b) != want {
		t.Fatalf("JSON = %s\nwant   %s", b, want)
	}
	if pb, _ := json.Marshal(&w); string(pb) != want {
		t.Fatalf("a *Worker renders as %s", pb)
	}
	back, err := ParseWorker(b)
	if err != nil {
		t.Fatal(err)
	}
	w.ReadRoots = []string{}
	if !reflect.DeepEqual(*back, w) {
		t.Fatalf("read back %+v, want %+v", *back, w)
	}
}

func TestAZeroWorkerDoesNotValidate(t *testing.T) {
	t.Parallel()
	p := workerProblems(t, (&Worker{}).Validate())
	want := []string{"name: missing", "harness: missing", "deadline: 0s is not more than 0", "slots: 0"}
	if len(p) != len(want) {
		t.Fatalf("problems = %q, want %d", p, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(p[i], want[i]) {
			t.Errorf("problem %d = %q, want it to begin %q", i, p[i], want[i])
		}
	}
}
