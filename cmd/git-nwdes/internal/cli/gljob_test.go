package cli_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// glJobDef is the job of docs/ci.md's GitLab CI example, as far as gljob
// needs it.
type glJobDef struct {
	Variables          []string // KEY=value, in order
	Script, After      []string // one command each, as the runner evals it
	Artifacts, Reports []string // artifacts:paths and artifacts:reports:junit
}

var (
	glKey      = regexp.MustCompile(`^([a-z_]+):(?: (.*))?$`)
	glVariable = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*: [^\s"']+$`)
)

// parseGitLabJob reads the first ```yaml block after the heading
// "## GitLab CI": one job, whose keys sit two columns in. It knows the YAML
// the document writes, and refuses what it does not know.
func parseGitLabJob(doc string) (*glJobDef, error) {
	block, err := yamlBlockUnder(doc, "## GitLab CI")
	if err != nil {
		return nil, err
	}
	lines := strings.Split(block, "\n")
	if len(lines) == 0 || !glKey.MatchString(lines[0]) || strings.HasPrefix(lines[0], " ") {
		return nil, fmt.Errorf("the block does not start with a job")
	}
	indent := func(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }
	job := &glJobDef{}
	// items reads the list under a key at column at: "- cmd", or "- |"
	// and the lines indented past the dash, less the first one's indent.
	items := func(i *int, at int) ([]string, error) {
		var out []string
		for *i+1 < len(lines) && indent(lines[*i+1]) > at {
			*i++
			l := lines[*i]
			if indent(l) != at+2 || !strings.HasPrefix(l[at+2:], "- ") {
				return nil, fmt.Errorf("line %q is not a list item", l)
			}
			item := l[at+4:]
			if item != "|" {
				out = append(out, item)
				continue
			}
			var body []string
			cut := -1
			for *i+1 < len(lines) && (strings.TrimSpace(lines[*i+1]) == "" || indent(lines[*i+1]) > at+2) {
				*i++
				l := lines[*i]
				if strings.TrimSpace(l) == "" {
					body = append(body, "")
					continue
				}
				if cut < 0 {
					cut = indent(l) // the first line that is not blank
				}
				body = append(body, strings.TrimPrefix(l, strings.Repeat(" ", cut)))
			}
			out = append(out, strings.Trim(strings.Join(body, "\n"), "\n"))
		}
		return out, nil
	}
	for i := 1; i < len(lines); i++ {
		l := lines[i]
		if strings.TrimSpace(l) == "" {
			continue
		}
		if indent(l) != 2 {
			return nil, fmt.Errorf("line %q is not a key of the job", l)
		}
		m := glKey.FindStringSubmatch(l[2:])
		if m == nil {
			return nil, fmt.Errorf("line %q is not a key", l)
		}
		var err error
		switch m[1] {
		case "image", "rules":
			for i+1 < len(lines) && indent(lines[i+1]) > 2 {
				i++ // the runner's image, and when GitLab creates the job
			}
		case "variables":
			for i+1 < len(lines) && indent(lines[i+1]) > 2 {
				i++
				t := strings.TrimSpace(lines[i])
				if !glVariable.MatchString(t) {
					return nil, fmt.Errorf("variable %q", lines[i])
				}
				k, v, _ := strings.Cut(t, ": ")
				job.Variables = append(job.Variables, k+"="+v)
			}
		case "script":
			job.Script, err = items(&i, 2)
		case "after_script":
			job.After, err = items(&i, 2)
		case "artifacts":
			for i+1 < len(lines) && indent(lines[i+1]) > 2 {
				i++
				switch t := strings.TrimSpace(lines[i]); {
				case strings.HasPrefix(t, "- "):
					job.Artifacts = append(job.Artifacts, strings.TrimPrefix(t, "- "))
				case strings.HasPrefix(t, "junit: "):
					job.Reports = append(job.Reports, strings.TrimPrefix(t, "junit: "))
				case t == "when: always", t == "paths:", t == "reports:":
				default:
					return nil, fmt.Errorf("artifacts: %q: gljob does not know what GitLab does with it", t)
				}
			}
		default:
			return nil, fmt.Errorf("job key %q: gljob does not know what GitLab does with it", m[1])
		}
		if err != nil {
			return nil, err
		}
	}
	if len(job.Script) == 0 {
		return nil, fmt.Errorf("the job has no script")
	}
	return job, nil
}

func TestTheGitLabJobParserReadsScripts(t *testing.T) {
	doc := "# x\n\n## GitLab CI\n\n```yaml\nj:\n  image: golang:1.26\n  rules:\n    - if: $X\n  variables:\n    GIT_DEPTH: 0\n" +
		"  script:\n    - echo one\n    - |\n\n      if true; then\n        echo two\n      fi\n" +
		"  after_script:\n    - echo after\n  artifacts:\n    when: always\n    paths:\n      - a.md\n    reports:\n      junit: j.xml\n```\n"
	job, err := parseGitLabJob(doc)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%q %q %q %q %q", job.Variables, job.Script, job.After, job.Artifacts, job.Reports); got !=
		`["GIT_DEPTH=0"] ["echo one" "if true; then\n  echo two\nfi"] ["echo after"] ["a.md"] ["j.xml"]` {
		t.Fatal(got)
	}
	for _, bad := range []string{
		strings.Replace(doc, "  image:", "  services:", 1),
		strings.Replace(doc, "    - echo one", "    echo one", 1),
		strings.Replace(doc, "    when: always", "    expire_in: 1 week", 1),
		strings.Replace(doc, "```yaml", "```yml", 1),
	} {
		if _, err := parseGitLabJob(bad); err == nil {
			t.Errorf("took a job it cannot run as GitLab would:\n%s", bad)
		}
	}
}

// glJob runs the job of docs/ci.md's GitLab CI example in the script's
// current directory, the clone the runner would have made, as the runner
// runs it with a bash shell: `gljob [--mr IID NOTE]`.
//
// script: runs in one bash with -eo pipefail, each item in turn, stopping
// at the first that fails; after_script: runs after it in a new bash
// whatever happened, and its failure does not fail the job. The
// environment holds the job's variables:, CI, GITLAB_CI, CI_COMMIT_SHA (the
// checkout's HEAD), the script's identity and HOME; PATH does not hold the
// git-nwdes under test, and a go on PATH installs it for `go install
// github.com/nwdes/nwdes/cmd/git-nwdes@latest` (there is no network). With
// --mr the pipeline is a merge request's (CI_PIPELINE_SOURCE,
// CI_MERGE_REQUEST_IID), NWDES_NOTE_TOKEN is set, and CI_API_V4_URL is a
// local server standing for GitLab's notes API, which takes a POST to
// /projects/CI_PROJECT_ID/merge_requests/IID/notes with that token and
// writes the note's body to NOTE. rules: and image: are not evaluated.
// Stdout logs each part, its exit status, each note posted and each
// artifact present or missing; the job fails, as gljob does, when script:
// failed.
func glJob(ts *testscript.TestScript, neg bool, args []string) {
	var mr, notePath string
	switch {
	case len(args) == 0:
	case len(args) == 3 && args[0] == "--mr":
		mr, notePath = args[1], ts.MkAbs(args[2])
	default:
		ts.Fatalf("usage: gljob [--mr IID NOTE]")
	}
	doc, err := os.ReadFile(workflowDoc)
	ts.Check(err)
	job, err := parseGitLabJob(string(doc))
	if err != nil {
		ts.Fatalf("%s: %v", workflowDoc, err)
	}
	path, goBin := pathWithGoInstall(ts)
	head, err := exec.Command("git", "-C", ts.MkAbs("."), "rev-parse", "HEAD").Output()
	ts.Check(err)
	source := "push"
	if mr != "" {
		source = "merge_request_event"
	}
	env := append(scriptIdentity(ts), "CI=true", "GITLAB_CI=true", "CI_COMMIT_SHA="+strings.TrimSpace(string(head)),
		"CI_PROJECT_ID=42", "CI_PIPELINE_SOURCE="+source, "PATH="+strings.Join(append([]string{goBin}, path...), string(filepath.ListSeparator)))
	out := ts.Stdout()
	var notes []string
	if mr != "" {
		const token = "glpat-nwdes-test-token"
		var mu sync.Mutex
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			want := "/api/v4/projects/42/merge_requests/" + mr + "/notes"
			if r.Method != http.MethodPost || r.URL.Path != want || r.Header.Get("PRIVATE-TOKEN") != token {
				http.Error(w, "not the notes API with the token", http.StatusUnauthorized)
				return
			}
			if err := r.ParseForm(); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			mu.Lock()
			notes = append(notes, r.PostForm.Get("body"))
			mu.Unlock()
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, `{"id":1}`)
		}))
		ts.Defer(srv.Close)
		env = append(env, "CI_MERGE_REQUEST_IID="+mr, "NWDES_NOTE_TOKEN="+token, "CI_API_V4_URL="+srv.URL+"/api/v4")
	}
	env = append(env, job.Variables...)
	run := func(part string, cmds []string) int {
		var script strings.Builder
		for _, c := range cmds {
			fmt.Fprintf(&script, "printf '$ %%s\\n' %s\n%s\n", shellQuote(c), c)
		}
		f := filepath.Join(ts.MkAbs("."), "..", ".gljob-"+part+".sh")
		ts.Check(os.WriteFile(f, []byte(script.String()), 0o644))
		defer os.Remove(f)
		return runCIStep(ts, part, []string{"bash", "--noprofile", "--norc", "-eo", "pipefail", f}, env)
	}
	failed := run("script", job.Script) != 0
	if len(job.After) > 0 {
		run("after_script", job.After)
	}
	for _, n := range notes {
		fmt.Fprintf(out, "== note posted to merge request %s: %d bytes\n", mr, len(n))
	}
	if notePath != "" && len(notes) > 0 {
		ts.Check(os.WriteFile(notePath, []byte(notes[len(notes)-1]), 0o644))
	}
	for _, a := range append(job.Artifacts, job.Reports...) {
		state := "present"
		if _, err := os.Stat(ts.MkAbs(a)); err != nil {
			state = "missing"
		}
		fmt.Fprintf(out, "== artifact %s: %s\n", a, state)
	}
	switch {
	case failed && !neg:
		ts.Fatalf("the job failed")
	case !failed && neg:
		ts.Fatalf("the job succeeded")
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
