package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/refusal"
)

var (
	configCases = flag.Int("config.cases", 1000, "generated configurations TestConfigReadsAsGitOnGeneratedFiles compares with git (a tenth with -short)")
	configSeed  = flag.Int64("config.seed", 1, "seed of the generated configurations")
)

// configCase is one configuration world: files under the home directory
// (the repository is repo/, its own file repo/.git/config), the
// environment, and HEAD. {home}, {repo} and {gitdir} in files and values
// stand for those absolute paths.
type configCase struct {
	name  string
	files map[string]string
	env   map[string]string
	head  string // HEAD's content; "" is the branch main
	// conditional: nwdes must report Conditional (an include it cannot
	// evaluate) rather than agree entry by entry.
	conditional bool
}

// gitWorld is a real repository in a home directory of its own, whose
// configuration files each case rewrites, and git to ask.
type gitWorld struct {
	home, repo string
	// real is the home directory's real path (home may be reached
	// through a symbolic link); files are written under it.
	real    string
	loc     Location
	written []string
}

func newGitWorld(t testing.TB) *gitWorld {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	repo := gittest.Init(t, false)
	loc, err := Discover(repo, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &gitWorld{home: filepath.Dir(repo), real: filepath.Dir(repo), repo: repo, loc: loc}
}

func (w *gitWorld) expand(s string) string {
	return strings.NewReplacer("{home}", w.home, "{real}", w.real, "{repo}", w.repo, "{gitdir}", w.loc.GitDir).Replace(s)
}

// set writes the case's files (and removes the last case's).
func (w *gitWorld) set(t testing.TB, c configCase) {
	t.Helper()
	for _, p := range w.written {
		if err := os.RemoveAll(p); err != nil {
			t.Fatal(err)
		}
	}
	w.written = w.written[:0]
	files := map[string]string{"repo/.git/config": ""}
	for name, content := range c.files {
		files[name] = content
	}
	head := c.head
	if head == "" {
		head = "ref: refs/heads/main\n"
	}
	files["repo/.git/HEAD"] = head
	for name, content := range files {
		p := filepath.Join(w.real, filepath.FromSlash(name))
		if name != "repo/.git/config" && name != "repo/.git/HEAD" {
			// remember the outermost path this write creates
			created := p
			for d := filepath.Dir(p); d != w.real; d = filepath.Dir(d) {
				if _, err := os.Lstat(d); err == nil {
					break
				}
				created = d
			}
			w.written = append(w.written, created)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(w.expand(content)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func (w *gitWorld) environ(c configCase) []string {
	env := append(gittest.Env(w.home), "PWD="+w.repo)
	keys := make([]string, 0, len(c.env))
	for k := range c.env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+w.expand(c.env[k]))
	}
	return env
}

// gitList is `git config -z --list --show-origin` in the repository, as
// lines "origin key=value" ("origin key" for a bare key), origins made
// absolute; failed reports git's exit status.
func (w *gitWorld) gitList(env []string) (lines []string, failed error, stderr string) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "config", "-z", "--list", "--show-origin")
	cmd.Dir = w.repo
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, err, errb.String()
	}
	fields := strings.Split(out.String(), "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		origin := fields[i]
		if p, ok := strings.CutPrefix(origin, "file:"); ok {
			if !filepath.IsAbs(p) {
				p = filepath.Join(w.repo, p)
			}
			origin = "file:" + filepath.Clean(p)
		}
		key, value, hasValue := strings.Cut(fields[i+1], "\n")
		lines = append(lines, entryLine(origin, key, value, !hasValue))
	}
	return lines, nil, errb.String()
}

func entryLine(origin, key, value string, bare bool) string {
	if bare {
		return fmt.Sprintf("%s %s (bare)", origin, key)
	}
	return fmt.Sprintf("%s %s=%q", origin, key, value)
}

// nwdesList is ReadConfig's reading in the same shape.
func nwdesList(cfg *Config) []string {
	var lines []string
	for _, e := range cfg.entries {
		origin := "command line:"
		if e.file != "" {
			origin = "file:" + filepath.Clean(e.file)
		}
		lines = append(lines, entryLine(origin, e.key, e.value, e.bare))
	}
	return lines
}

// compare reads the case both ways and reports any difference: the
// entries, key by key and in order, or one side refusing what the other
// reads.
func (w *gitWorld) compare(t testing.TB, c configCase) bool {
	ok, _ := w.compareCounting(t, c)
	return ok
}

// compareCounting is compare, also saying how the case read: "refused",
// "conditional" or "read".
func (w *gitWorld) compareCounting(t testing.TB, c configCase) (bool, string) {
	t.Helper()
	w.set(t, c)
	env := w.environ(c)
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	want, gitErr, stderr := w.gitList(env)
	cfg, err := ReadConfig(w.loc, func(k string) string { return vars[k] })
	describe := func() string {
		var b strings.Builder
		names := make([]string, 0, len(c.files))
		for n := range c.files {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(&b, "\n--- %s\n%q", n, c.files[n])
		}
		if len(c.env) > 0 {
			fmt.Fprintf(&b, "\n--- env %q", c.env)
		}
		if c.head != "" {
			fmt.Fprintf(&b, "\n--- HEAD %q", c.head)
		}
		return b.String()
	}
	switch {
	case err == nil && c.conditional && cfg.Conditional:
		// left to git, whatever git makes of it
		return true, "conditional"
	case gitErr != nil && err == nil:
		t.Errorf("%s: git refuses (%v: %s) but nwdes reads %q%s", c.name, gitErr, strings.TrimSpace(stderr), nwdesList(cfg), describe())
		return false, ""
	case gitErr == nil && err != nil:
		t.Errorf("%s: nwdes refuses (%v) but git reads %q%s", c.name, err, want, describe())
		return false, ""
	case err != nil:
		var ce *ConfigError
		if !refusal.Named(err, "ConfigurationMalformed") || !errors.As(err, &ce) {
			t.Errorf("%s: nwdes refuses with %v, not ConfigurationMalformed%s", c.name, err, describe())
			return false, ""
		}
		return true, "refused"
	case c.conditional != cfg.Conditional:
		t.Errorf("%s: Conditional = %v%s", c.name, cfg.Conditional, describe())
		return false, ""
	}
	if got := nwdesList(cfg); !slices.Equal(got, want) {
		t.Errorf("%s: nwdes reads\n\t%s\ngit reads\n\t%s%s", c.name, strings.Join(got, "\n\t"), strings.Join(want, "\n\t"), describe())
		return false, ""
	}
	for i := 0; i+1 < len(want); i++ {
		origin, rest, _ := strings.Cut(want[i], " ")
		if strings.HasPrefix(rest, "includeif.") && !strings.HasPrefix(want[i+1], origin+" ") {
			return true, "includeIf followed"
		}
	}
	return true, "read"
}

func local(s string) map[string]string { return map[string]string{"repo/.git/config": s} }

// configTable is the features one at a time; the generated cases combine
// them.
func configTable() []configCase {
	cases := []configCase{
		{name: "section and name are lower-cased", files: local("[Sec]\n\tKey = Value\n")},
		{name: "a subsection keeps its case and its escapes", files: local("[a \"X\\\\y\\\"z\\tq\"]\n\tk = v\n")},
		{name: "an escaped newline in a subsection is refused", files: local("[a \"b\\\n\"]\nk = 1\n")},
		{name: "an unterminated subsection is refused", files: local("[a \"b\nk = 1\n")},
		{name: "space after the subsection's quote is refused", files: local("[a \"b\" ]\nk = 1\n")},
		{name: "space and tabs before the subsection", files: local("[a \t \"b\"]\nk = 1\n")},
		{name: "old dotted subsections are lower-cased", files: local("[A.B]\nK = 1\n[a.b.C]\nk = 2\n[.a]\nk = 3\n[a.]\nk = 4\n[a..b]\nk = 5\n")},
		{name: "a dotted section with a quoted subsection", files: local("[a.B \"C\"]\nk = 1\n")},
		{name: "a quoted subsection with no section", files: local("[ \"x\"]\nk = 1\n")},
		{name: "an empty section is refused", files: local("[]\nk = 1\n")},
		{name: "a section with an underscore is refused", files: local("[a_b]\nk = 1\n")},
		{name: "a header at the end of the file is refused", files: local("[a")},
		{name: "keys on the header line", files: local("[a] k = 1\n[b]k=2\n[c]\tk\n")},
		{name: "a key outside any section", files: local("k = v\n[a]\nk = w\n")},
		{name: "names with digits and dashes", files: local("[a]\nk-1-X = v\nK9 = w\n")},
		{name: "a name starting with a digit is refused", files: local("[a]\n1k = v\n")},
		{name: "a name starting with a dash is refused", files: local("[a]\n-k = v\n")},
		{name: "a bare name followed by a # comment is refused", files: local("[a]\nk # comment\n")},
		{name: "a bare name followed by a ; comment is refused", files: local("[a]\nk ; comment\n")},
		{name: "a name followed by a CR then = is refused", files: local("[a]\nk\r= v\n")},
		{name: "a name with a non-ASCII letter is refused", files: local("[a]\nké = v\n")},
		{name: "an = with no name is refused", files: local("[a]\n= v\n")},
		{name: "a vertical tab is not white space", files: local("[a]\n\vk = v\n")},
		{name: "bare names are true", files: local("[a]\nk\nj \t\nl\r\n")},
		{name: "empty values are empty", files: local("[a]\nk =\nj = \"\"\nl =\t \n")},
		{name: "unquoted white space becomes single spaces and is trimmed", files: local("[a]\nk =  a\tb\rc  \t d \t\n")},
		{name: "quoted white space is kept", files: local("[a]\nk = \" a\tb\rc \"\nj = x \" y \" z\n")},
		{name: "empty quotes do not start the value", files: local("[a]\nk = \"\" x\nj = \"\" \" x\"\n")},
		{name: "escapes", files: local("[a]\nk = \\n\\t\\b\\\"\\\\x\n")},
		{name: "an unknown escape is refused", files: local("[a]\nk = \\q\n")},
		{name: "an escaped CR is refused", files: local("[a]\nk = a\\\rb\n")},
		{name: "continuation lines", files: local("[a]\nk = one \\\n  two\\\n\nj = \"x\\\ny\"\nl = a \\\n\n")},
		{name: "a continuation with CRLF", files: local("[a]\r\nk = one\\\r\ntwo\r\n")},
		{name: "a newline inside quotes is refused", files: local("[a]\nk = \"open\nj = 1\n")},
		{name: "comments outside and inside quotes", files: local("# c\n; c\n[a] # c\nk = v # c\nj = \"v # not ; a comment\" ; c\nl = a;b\nm = \"a\"#b\nn = x\\\\#y\n")},
		{name: "a comment does not continue", files: local("[a]\nk = v # c \\\nj = w\n")},
		{name: "a value at the end of the file", files: local("[a]\nk = v")},
		{name: "a backslash at the end of the file", files: local("[a]\nk = v\\")},
		{name: "a backslash and CR at the end of the file are refused", files: local("[a]\nk = v\\\r")},
		{name: "a quoted backslash at the end of the file is refused", files: local("[a]\nk = \"v\\")},
		{name: "CRLF everywhere", files: local("[a \"B\"]\r\n\tk = v \r\n\tj\r\n")},
		{name: "a byte order mark", files: local("\xef\xbb\xbf[a]\nk = v\n")},
		{name: "a partial byte order mark is refused", files: local("\xef\xbb[a]\nk = v\n")},
		{name: "a NUL ends a value", files: local("[a]\nk = x\x00y\n")},
		{name: "a NUL ends a key inside a subsection", files: local("[a \"x\x00y\"]\nk = v\n")},
		{name: "a NUL in a name is refused", files: local("[a]\nk\x00 = v\n")},
		{name: "non-ASCII values", files: local("[a]\nk = héllo wörld\n")},
		{name: "an empty file", files: local("")},
		{name: "only comments", files: local("# nothing\n; here")},

		{name: "every scope in git's order", files: map[string]string{
			".gitconfig":                "[s]\n\tv = global\n",
			".config/git/config":        "[s]\n\tv = xdg\n",
			"repo/.git/config":          "[s]\n\tv = local\n[extensions]\n\tworktreeConfig = true\n",
			"repo/.git/config.worktree": "[s]\n\tv = worktree\n",
		}, env: map[string]string{
			"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "s.V", "GIT_CONFIG_VALUE_0": "count",
			"GIT_CONFIG_PARAMETERS": "'s.v'='param'",
		}},
		{name: "the system file when GIT_CONFIG_NOSYSTEM is false", files: map[string]string{"sys": "[s]\n\tv = system\n"},
			env: map[string]string{"GIT_CONFIG_NOSYSTEM": "false", "GIT_CONFIG_SYSTEM": "{home}/sys"}},
		{name: "no system file when GIT_CONFIG_NOSYSTEM is 1k", files: map[string]string{"sys": "[s]\n\tv = system\n"},
			env: map[string]string{"GIT_CONFIG_NOSYSTEM": "1k", "GIT_CONFIG_SYSTEM": "{home}/sys"}},
		{name: "a GIT_CONFIG_NOSYSTEM that is no boolean is refused", env: map[string]string{"GIT_CONFIG_NOSYSTEM": "maybe"}},
		{name: "GIT_CONFIG_GLOBAL replaces both global files", files: map[string]string{
			".gitconfig": "[s]\n\tv = global\n", ".config/git/config": "[s]\n\tv = xdg\n", "g": "[s]\n\tv = chosen\n",
		}, env: map[string]string{"GIT_CONFIG_GLOBAL": "{home}/g"}},
		{name: "XDG_CONFIG_HOME", files: map[string]string{"x/git/config": "[s]\n\tv = xdg\n", ".config/git/config": "[s]\n\tv = ignored\n"},
			env: map[string]string{"XDG_CONFIG_HOME": "{home}/x"}},
		{name: "no worktree file without the extension", files: map[string]string{"repo/.git/config.worktree": "[s]\n\tv = worktree\n"}},
		{name: "no worktree file without a repository format version", files: map[string]string{
			"repo/.git/config": "[extensions]\n\tworktreeConfig = true\n", "repo/.git/config.worktree": "[s]\n\tv = worktree\n"}},
		{name: "a worktree file with format version 1 set after the extension", files: map[string]string{
			"repo/.git/config": "[extensions]\n\tworktreeConfig\n[core]\n\trepositoryFormatVersion = 1\n", "repo/.git/config.worktree": "[s]\n\tv = worktree\n"}},
		{name: "no worktree file with format version -1", files: map[string]string{
			"repo/.git/config": "[core]\n\trepositoryFormatVersion = -1\n[extensions]\n\tworktreeConfig = 1\n", "repo/.git/config.worktree": "[s]\n\tv = worktree\n"}},
		{name: "a malformed worktree file is refused", files: map[string]string{
			"repo/.git/config": "[core]\n\trepositoryFormatVersion = 0\n[extensions]\n\tworktreeConfig = yes\n", "repo/.git/config.worktree": "[s\n"}},
		{name: "the worktree extension set false", files: map[string]string{
			"repo/.git/config": "[core]\n\trepositoryFormatVersion = 0\n[extensions]\n\tworktreeConfig = true\n\tworktreeConfig = off\n", "repo/.git/config.worktree": "[s]\n\tv = worktree\n"}},
		{name: "the worktree extension from an include does not count", files: map[string]string{
			"repo/.git/config": "[core]\n\trepositoryFormatVersion = 0\n[include]\n\tpath = ext\n", "repo/.git/ext": "[extensions]\n\tworktreeConfig\n",
			"repo/.git/config.worktree": "[s]\n\tv = worktree\n"}},
		{name: "a global file that is a directory is refused", files: map[string]string{".gitconfig/x": ""}},

		{name: "includes relative to the including file, nested", files: map[string]string{
			"repo/.git/config": "[include]\n\tpath = inc/a\n[s]\n\tv = after\n",
			"repo/.git/inc/a":  "[s]\n\tv = a\n[include]\n\tpath = ../b\n",
			"repo/.git/b":      "[s]\n\tv = b\n",
		}},
		{name: "includes with ~ and absolute paths", files: map[string]string{
			"repo/.git/config": "[include]\n\tpath = ~/h.inc\n\tpath = {home}/abs.inc\n\tpath = ~\n",
			"h.inc":            "[s]\n\tv = home\n", "abs.inc": "[s]\n\tv = abs\n",
		}},
		{name: "a missing include is skipped", files: local("[include]\n\tpath = nowhere\n\tpath = nowhere/deeper\n\tpath = HEAD/x\n[s]\n\tv = 1\n")},
		{name: "an empty include path is refused", files: local("[include]\n\tpath =\n")},
		{name: "an include of a directory is refused", files: map[string]string{"repo/.git/config": "[include]\n\tpath = d\n", "repo/.git/d/x": ""}},
		{name: "a bare include.path is refused", files: local("[include]\n\tpath\n")},
		{name: "a malformed included file is refused", files: map[string]string{"repo/.git/config": "[include]\n\tpath = bad\n", "repo/.git/bad": "[s\n"}},
		{name: "ten nested includes are read", files: nestedIncludes(10)},
		{name: "eleven nested includes are refused", files: nestedIncludes(11)},
		{name: "an include of itself is refused", files: local("[include]\n\tpath = config\n")},
		{name: "an include for an unknown user is refused", files: local("[include]\n\tpath = ~nosuchuserhere/x\n")},
		{name: "an include under another user's home", files: local("[include]\n\tpath = ~root/nwdes-test-nothing\n")},
		{name: "include under a subsection is no include", files: map[string]string{"repo/.git/config": "[include \"x\"]\n\tpath = i\n[Include]\n\tPath = i\n", "repo/.git/i": "[s]\n\tv = 1\n"}},
		{name: "include.path from the environment, absolute or under ~", files: map[string]string{"h.inc": "[s]\n\tv = home\n"},
			env: map[string]string{"GIT_CONFIG_PARAMETERS": "'include.path'='~/h.inc' 'include.path={home}/h.inc'"}},
		{name: "a relative include.path from the environment is refused", files: map[string]string{"repo/.git/h.inc": ""},
			env: map[string]string{"GIT_CONFIG_PARAMETERS": "'include.path'='h.inc'"}},
		{name: "an include under %(prefix) is left to git", files: local("[include]\n\tpath = %(prefix)/nwdes-test-nothing\n"), conditional: true},
		{name: "an include under ~ with HOME empty is left to git", files: local("[include]\n\tpath = ~/nothing\n"),
			env: map[string]string{"HOME": ""}, conditional: true},
		{name: "a gitdir pattern under ~ with HOME empty is left to git", files: local("[includeIf \"gitdir:~/nothing/\"]\n\tpath = x\n"),
			env: map[string]string{"HOME": ""}, conditional: true},
		{name: "a gitdir pattern under %(prefix) is left to git", files: local("[includeIf \"gitdir:%(prefix)/nothing/\"]\n\tpath = x\n"),
			conditional: true},

		{name: "a bare includeIf path under a false condition is read", files: local("[includeIf \"gitdir:/nowhere/\"]\n\tpath\n")},
		{name: "a bare includeIf path under a true condition is refused", files: local("[includeIf \"gitdir:~/repo/\"]\n\tpath\n")},
		{name: "an includeIf key other than path includes nothing", files: map[string]string{"repo/.git/config": "[includeIf \"gitdir:~/repo/\"]\n\tother = i\n", "repo/.git/i": "[s]\n\tv = 1\n"}},
		{name: "conditions are case-sensitive", files: map[string]string{"repo/.git/config": "[includeIf \"GITDIR:~/repo/\"]\n\tpath = i\n", "repo/.git/i": "[s]\n\tv = 1\n"}},
		{name: "an includeIf with no condition is no include", files: map[string]string{"repo/.git/config": "[includeIf]\n\tpath = i\n[includeIf \"\"]\n\tpath = i\n", "repo/.git/i": "[s]\n\tv = 1\n"}},
		{name: "includeIf from the environment", files: map[string]string{"i": "[s]\n\tv = 1\n"},
			env: map[string]string{"GIT_CONFIG_PARAMETERS": "'includeIf.gitdir:{gitdir}.path'='{home}/i' 'includeIf.gitdir:./.path'='{home}/i'"}},

		{name: "hasconfig sees remote URLs defined before and after it", files: map[string]string{
			"repo/.git/config": "[includeIf \"hasconfig:remote.*.url:https://example.com/**\"]\n\tpath = i\n[remote \"origin\"]\n\turl = https://example.com/team/repo.git\n",
			"repo/.git/i":      "[s]\n\tv = 1\n",
		}},
		{name: "hasconfig sees remote URLs in other scopes and the environment", files: map[string]string{
			".gitconfig": "[includeIf \"hasconfig:remote.*.url:*://example.org/*\"]\n\tpath = i\n[includeIf \"hasconfig:remote.*.url:**/team/**\"]\n\tpath = j\n",
			"i":          "[s]\n\tv = i\n", "j": "[s]\n\tv = j\n",
		}, env: map[string]string{"GIT_CONFIG_PARAMETERS": "'remote.o.url'='ssh://example.org/team/x'"}},
		{name: "hasconfig globs do not cross slashes with one star", files: map[string]string{
			"repo/.git/config": "[remote \"o\"]\n\turl = https://example.com/a/b\n[includeIf \"hasconfig:remote.*.url:https://example.com/*\"]\n\tpath = i\n[includeIf \"hasconfig:remote.*.url:https://example.com/**\"]\n\tpath = i\n",
			"repo/.git/i":      "[s]\n\tv = 1\n",
		}},
		{name: "a file hasconfig includes may not set a remote URL", files: map[string]string{
			"repo/.git/config": "[remote \"o\"]\n\turl = x\n[includeIf \"hasconfig:remote.*.url:x\"]\n\tpath = i\n",
			"repo/.git/i":      "[remote \"p\"]\n\turl = y\n",
		}},
		{name: "no file any includeIf includes may set a remote URL once hasconfig is asked", files: map[string]string{
			"repo/.git/config": "[includeIf \"gitdir:~/repo/\"]\n\tpath = i\n[includeIf \"hasconfig:remote.*.url:x\"]\n\tpath = j\n",
			"repo/.git/i":      "[remote \"p\"]\n\turl = y\n", "repo/.git/j": "[s]\n\tv = 1\n",
		}},
		{name: "a bare remote URL asked for by hasconfig is refused", files: local("[remote \"o\"]\n\turl\n[includeIf \"hasconfig:remote.*.url:x\"]\n\tpath = i\n")},
	}
	for _, g := range []struct {
		cond  string
		where string
	}{
		{"gitdir:{gitdir}", "repo/.git/config"},
		{"gitdir:{gitdir}/", "repo/.git/config"},
		{"gitdir:{repo}/", "repo/.git/config"},
		{"gitdir:{repo}", "repo/.git/config"},
		{"gitdir:~/repo/", "repo/.git/config"},
		{"gitdir:~/repo/.git", ".gitconfig"},
		{"gitdir:repo/", ".gitconfig"},
		{"gitdir:repo", ".gitconfig"},
		{"gitdir:repo/.git", ".gitconfig"},
		{"gitdir:.git", ".gitconfig"},
		{"gitdir:./repo/", ".gitconfig"},
		{"gitdir:./repo/", "repo/.git/config"},
		{"gitdir:./", "repo/.git/config"},
		{"gitdir:./", ".gitconfig"},
		{"gitdir:../", "repo/.git/config"},
		{"gitdir:**/re?o/.git", ".gitconfig"},
		{"gitdir:**/r[a-f]po/", ".gitconfig"},
		{"gitdir:**/r[!e]po/", ".gitconfig"},
		{"gitdir:**/r[[:alpha:]]po/", ".gitconfig"},
		{"gitdir:**/r*/", ".gitconfig"},
		{"gitdir:/**/.git", ".gitconfig"},
		{"gitdir:~/*/.git", ".gitconfig"},
		{"gitdir:~/**", ".gitconfig"},
		{"gitdir:~/REPO/", ".gitconfig"},
		{"gitdir/i:~/REPO/", ".gitconfig"},
		{"gitdir/i:**/R[A-F]PO/", ".gitconfig"},
		{"gitdir/i:./REPO/", ".gitconfig"},
		{"gitdir:/nowhere/", ".gitconfig"},
		{"gitdir:", ".gitconfig"},
		{"gitdir:~", ".gitconfig"},
	} {
		cases = append(cases, configCase{name: "includeIf " + g.cond + " in " + g.where, files: map[string]string{
			g.where: "[includeIf \"" + g.cond + "\"]\n\tpath = {home}/i\n", "i": "[s]\n\tv = 1\n",
		}})
	}
	for _, b := range []struct{ head, conds string }{
		{"", "main ma* m?in feature/ **"},
		{"ref: refs/heads/feature/x\n", "feature/ feature/* feature f* f** **/x */x feature/x ** feature/x/"},
		{"ref:refs/heads/topic \n", "topic"},
		{"ref: refs/heads/unborn\n", "unborn"},
		{"ref: refs/heads/alias\n", "alias main"},
		{"ref: refs/tags/v1\n", "v1 ** refs/tags/v1"},
		{"0123456789012345678901234567890123456789\n", "** main"},
	} {
		var cfg strings.Builder
		for _, c := range strings.Fields(b.conds) {
			fmt.Fprintf(&cfg, "[includeIf \"onbranch:%s\"]\n\tpath = {home}/i\n", c)
		}
		files := map[string]string{"repo/.git/config": cfg.String(), "i": "[s]\n\tv = 1\n"}
		if strings.Contains(b.head, "alias") {
			files["repo/.git/refs/heads/alias"] = "ref: refs/heads/main\n"
		}
		cases = append(cases, configCase{name: fmt.Sprintf("onbranch with HEAD %q", b.head), files: files, head: b.head})
	}
	for _, p := range []string{
		`'a.b'='c' 'A.B.C=d' 'x.y' 'p.q'= 'r.s'='it'\''s' 't.u'='a'\!'b'`,
		`'a.b' `,
		`'a.X y.b=v'`,
		`' a.b =v=w'`,
		`'a..b=1'`,
		`'-a.b'='1'`,
		`  'a.b'`,
		`'a.b'='c''d.e'`,
		`'a.b'=c`,
		`'ab'`,
		`'a.1b'`,
		`'a.b.'`,
		`'=v'`,
		`''`,
		`'a.b`,
		`'a.b'='c`,
	} {
		cases = append(cases, configCase{name: "GIT_CONFIG_PARAMETERS " + p, env: map[string]string{"GIT_CONFIG_PARAMETERS": p}})
	}
	for _, c := range []map[string]string{
		{"GIT_CONFIG_COUNT": "2", "GIT_CONFIG_KEY_0": "a.B", "GIT_CONFIG_VALUE_0": "x", "GIT_CONFIG_KEY_1": "C.d.E", "GIT_CONFIG_VALUE_1": ""},
		{"GIT_CONFIG_COUNT": " 1", "GIT_CONFIG_KEY_0": "a.b", "GIT_CONFIG_VALUE_0": "v"},
		{"GIT_CONFIG_COUNT": "+1", "GIT_CONFIG_KEY_0": "a..b", "GIT_CONFIG_VALUE_0": "v"},
		{"GIT_CONFIG_COUNT": "-0"},
		{"GIT_CONFIG_COUNT": "x"},
		{"GIT_CONFIG_COUNT": "1 "},
		{"GIT_CONFIG_COUNT": "-1"},
		{"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_VALUE_0": "v"},
		{"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "-a.b", "GIT_CONFIG_VALUE_0": "v"},
		{"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "a.x\ny.b", "GIT_CONFIG_VALUE_0": "v"},
		{"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "a", "GIT_CONFIG_VALUE_0": "v"},
	} {
		cases = append(cases, configCase{name: fmt.Sprintf("GIT_CONFIG_COUNT %q", c), env: c})
	}
	return cases
}

func nestedIncludes(n int) map[string]string {
	files := map[string]string{"repo/.git/config": "[include]\n\tpath = n1\n"}
	for i := 1; i <= n; i++ {
		content := fmt.Sprintf("[s]\n\tv = %d\n", i)
		if i < n {
			content += fmt.Sprintf("[include]\n\tpath = n%d\n", i+1)
		}
		files[fmt.Sprintf("repo/.git/n%d", i)] = content
	}
	return files
}

func TestConfigReadsAsGitOnEachFeature(t *testing.T) {
	w := newGitWorld(t)
	for _, c := range configTable() {
		w.compare(t, c)
	}
}

func TestConfigReadsAsGitThroughASymbolicLink(t *testing.T) {
	w := newGitWorld(t)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(w.real, link); err != nil {
		t.Fatal(err)
	}
	w.home, w.repo = link, filepath.Join(link, "repo")
	var err error
	if w.loc, err = Discover(w.repo, nil); err != nil {
		t.Fatal(err)
	}
	for _, cond := range []string{"gitdir:{home}/repo/", "gitdir:{real}/repo/", "gitdir:~/repo/", "gitdir:{home}/repo/.git",
		"gitdir:./repo/", "gitdir/i:{home}/REPO/", "gitdir:**/link/repo/", "gitdir:{home}/nowhere/"} {
		w.compare(t, configCase{name: "through a link, includeIf " + cond, files: map[string]string{
			".gitconfig": "[includeIf \"" + cond + "\"]\n\tpath = i\n", "i": "[s]\n\tv = 1\n",
		}})
	}
}

func TestConfigReadsAsGitInALinkedWorktree(t *testing.T) {
	w := newGitWorld(t)
	gittest.Git(t, w.repo, "worktree", "add", "-q", "-b", "topic/wt", filepath.Join(w.home, "wt"))
	wt := &gitWorld{home: w.home, real: w.real, repo: filepath.Join(w.home, "wt")}
	var err error
	if wt.loc, err = Discover(wt.repo, nil); err != nil {
		t.Fatal(err)
	}
	if wt.loc.GitDir == wt.loc.CommonDir {
		t.Fatalf("not a linked worktree: %+v", wt.loc)
	}
	includes := ""
	for _, cond := range []string{"onbranch:topic/", "onbranch:main", "gitdir:~/repo/.git/worktrees/*", "gitdir:~/repo/", "gitdir:~/wt/"} {
		includes += "[includeIf \"" + cond + "\"]\n\tpath = {home}/i\n"
	}
	wt.compare(t, configCase{name: "conditions in a linked worktree", files: map[string]string{
		"repo/.git/config":                       "[core]\n\trepositoryFormatVersion = 1\n[extensions]\n\tworktreeConfig = true\n" + includes,
		"repo/.git/worktrees/wt/config.worktree": "[s]\n\tv = linked\n",
		"repo/.git/config.worktree":              "[s]\n\tv = main\n",
		"i":                                      "[s]\n\tv = 1\n",
	}})
}

func TestConfigReadsAsGitOnGeneratedFiles(t *testing.T) {
	w := newGitWorld(t)
	n := *configCases
	if testing.Short() {
		n /= 10
	}
	rng := rand.New(rand.NewSource(*configSeed))
	failures := 0
	how := map[string]int{}
	for i := range n {
		c := generateConfigCase(rng)
		c.name = fmt.Sprintf("seed %d case %d", *configSeed, i)
		ok, kind := w.compareCounting(t, c)
		how[kind]++
		if !ok {
			if failures++; failures == 10 {
				t.Fatal("stopping after 10 differences")
			}
		}
	}
	t.Logf("%d generated configurations agree with git: %d read alike (%d of them through a matching includeIf), %d refused by both",
		n-failures, how["read"]+how["includeIf followed"], how["includeIf followed"], how["refused"])
}

// generateConfigCase combines the features: every scope, includes and
// conditional includes, the environment, HEAD, CRLF, and now and then a
// malformed line or a random byte edit.
func generateConfigCase(rng *rand.Rand) configCase {
	g := &configGen{rng: rng}
	g.faults = g.chance(0.4)
	c := configCase{files: map[string]string{}, env: map[string]string{}}
	targets := []string{"repo/.git/inc1", "repo/.git/sub/inc2", "h.inc", "abs.inc"}
	refs := []string{"inc1", "sub/inc2", "../inc1", "~/h.inc", "{home}/abs.inc", "nowhere", "sub/../inc1"}
	for _, name := range []string{".gitconfig", ".config/git/config", "repo/.git/config", "repo/.git/config.worktree", "repo/.git/inc1", "repo/.git/sub/inc2", "h.inc", "abs.inc"} {
		if g.chance(0.35) && name != "repo/.git/config" {
			continue
		}
		var f strings.Builder
		includes := 0
		for range g.n(1, 4) {
			f.WriteString(g.header())
			for range g.n(0, 4) {
				switch {
				case g.chance(0.1) && includes < 2 && slices.Contains(targets, name) == false:
					includes++
					fmt.Fprintf(&f, "[include]\n\tpath = %s\n", g.pick(refs))
				case g.chance(0.15) && includes < 2:
					includes++
					fmt.Fprintf(&f, "[includeIf \"%s\"]\n\tpath = %s\n", g.condition(), g.pick(refs))
				case g.chance(0.05):
					fmt.Fprintf(&f, "[remote \"%s\"]\n\turl = %s\n", g.pick([]string{"origin", "up"}), g.pick(configURLs))
				default:
					f.WriteString(g.line())
				}
			}
			if g.chance(0.2) {
				f.WriteString(g.pick([]string{"# comment\n", "; comment\n", "\n", "\t\n"}))
			}
		}
		s := f.String()
		if g.chance(0.2) {
			s = strings.ReplaceAll(s, "\n", "\r\n")
		}
		if g.chance(0.15) {
			s = strings.TrimSuffix(s, "\n") + g.pick([]string{"\\", "", " \\"})
		} else if g.fault(0.1) {
			s = strings.TrimSuffix(s, "\n") + g.pick([]string{"\"", "\\\r"})
		}
		if g.fault(0.05) {
			s = g.mutate(s)
		}
		if name == "repo/.git/config" && g.chance(0.3) {
			// ahead of the rest, where no edit reaches: a damaged
			// format is Discover's to refuse, not ReadConfig's
			ext := "[extensions]\n\tworktreeConfig = " + g.pick([]string{"true", "false", "1", ""}) + "\n"
			if g.chance(0.8) {
				ext += "[core]\n\trepositoryFormatVersion = " + g.pick([]string{"0", "1"}) + "\n"
			}
			s = ext + s
		}
		c.files[name] = s
	}
	if g.chance(0.3) {
		n := g.n(0, 3)
		c.env["GIT_CONFIG_COUNT"] = fmt.Sprint(n)
		for i := range n {
			c.env[fmt.Sprintf("GIT_CONFIG_KEY_%d", i)] = g.envKey()
			c.env[fmt.Sprintf("GIT_CONFIG_VALUE_%d", i)] = g.word() + g.pick([]string{"", " x", "\t"})
		}
	}
	if g.chance(0.3) {
		var words []string
		for range g.n(1, 3) {
			k, v := g.envKey(), strings.ReplaceAll(g.word()+g.pick([]string{"", " it's", " !"}), "'", `'\''`)
			switch g.n(0, 3) {
			case 0:
				words = append(words, "'"+k+"'='"+v+"'")
			case 1:
				words = append(words, "'"+k+"="+v+"'")
			case 2:
				words = append(words, "'"+k+"'")
			default:
				words = append(words, "'"+k+"'=")
			}
		}
		c.env["GIT_CONFIG_PARAMETERS"] = strings.Join(words, g.pick([]string{" ", "  ", "\t"}))
	}
	c.head = g.pick([]string{"", "", "ref: refs/heads/feature/x\n", "ref: refs/heads/Topic\n", "0123456789012345678901234567890123456789\n"})
	return c
}

var configURLs = []string{"https://example.com/team/repo.git", "git@example.org:team/repo.git", "ssh://example.org/x", "/srv/repo"}

// configGen draws configurations; faults allows lines git refuses.
type configGen struct {
	rng    *rand.Rand
	faults bool
}

func (g *configGen) fault(p float64) bool { return g.faults && g.chance(p) }

func (g *configGen) chance(p float64) bool     { return g.rng.Float64() < p }
func (g *configGen) n(lo, hi int) int          { return lo + g.rng.Intn(hi-lo+1) }
func (g *configGen) pick(from []string) string { return from[g.rng.Intn(len(from))] }

func (g *configGen) name() string {
	const first = "abcdefghijkKLMxyzZ"
	const rest = "abcdefXYZ0189-"
	b := []byte{first[g.rng.Intn(len(first))]}
	for range g.n(0, 5) {
		b = append(b, rest[g.rng.Intn(len(rest))])
	}
	if g.fault(0.02) {
		b[0] = g.pick([]string{"1", "-", "_", "é"})[0]
	}
	return string(b)
}

func (g *configGen) header() string {
	sec := g.pick([]string{"s", "S", "nwdes", "Remote", "a-b", "x9"})
	sub := g.pick([]string{"Sub", "a b", `q\"uote`, `back\\slash`, `\t`, "dot.ted", "", "é"})
	sep := g.pick([]string{" ", "  ", "\t"})
	switch g.n(0, 6) {
	case 0:
		return "[" + sec + "." + g.pick([]string{"Sub", "a.B", "x"}) + "]\n"
	case 1:
		return "[" + sec + sep + "\"" + sub + "\"]" + g.pick([]string{"\n", " ", "\t# c\n"})
	case 2:
		return "[" + sec + "." + g.pick([]string{"b", "C"}) + " \"" + sub + "\"]\n"
	case 3:
		if g.fault(0.2) {
			return g.pick([]string{"[" + sec + " \"x\" ]\n", "[" + sec + "\n", "[" + sec + " \"x\n", "[]\n", "[a_b]\n"})
		}
		fallthrough
	default:
		return "[" + sec + "]" + g.pick([]string{"\n", "\n", " ", " # c\n"})
	}
}

func (g *configGen) word() string {
	return g.pick([]string{"v", "Value", "a-b/c:d@e.f", "1", "0", "yes", "off", "", "é", "x=y", "~/p", "*"})
}

func (g *configGen) piece() string {
	switch g.n(0, 13) {
	case 0:
		return g.pick([]string{" ", "  ", "\t", " \t "})
	case 1:
		return "\r"
	case 2:
		return "\"" + g.pick([]string{" a ", "#x", ";y", "a\tb", "", `\"`, `\\`, "x\\\ny"}) + "\""
	case 3:
		return g.pick([]string{`\n`, `\t`, `\b`, `\"`, `\\`})
	case 5:
		return "\\\n" + g.pick([]string{"", " ", "\t"})
	case 6:
		if g.fault(0.1) {
			return g.pick([]string{`\q`, "\"open", `\x`})
		}
		return g.word()
	default:
		return g.word()
	}
}

func (g *configGen) line() string {
	indent := g.pick([]string{"\t", "", "  "})
	name := g.name()
	switch {
	case g.chance(0.1):
		return indent + name + g.pick([]string{"\n", " \n", "\t\n"})
	case g.fault(0.03):
		return indent + name + g.pick([]string{" # c\n", " ; c\n", "\r= v\n"})
	case g.fault(0.03):
		return indent + "= v\n"
	}
	var v strings.Builder
	for range g.n(0, 4) {
		v.WriteString(g.piece())
	}
	if g.chance(0.2) {
		// a comment ends the line: a continuation after it is none
		v.WriteString(g.pick([]string{" # c", "; c", "#", " ;x \\", "#\\\nx"}))
	}
	return indent + name + g.pick([]string{" = ", "=", " =", "= ", "\t=\t"}) + v.String() + "\n"
}

func (g *configGen) condition() string {
	switch g.n(0, 3) {
	case 0:
		return "gitdir" + g.pick([]string{":", "/i:"}) + g.pick([]string{
			"~/repo/", "~/REPO/", "repo/", "repo/.git", "./repo/", "./", "{gitdir}", "{repo}/", "**/r*/", "/nowhere/", "~/*/.git", "", "r[a-f]po/",
		})
	case 1:
		return "onbranch:" + g.pick([]string{"main", "feature/", "feature/*", "f*", "**", "topic", "Topic", "x"})
	case 2:
		return "hasconfig:remote.*.url:" + g.pick([]string{"https://example.com/**", "*:team/*", "**", "ssh://*/x", "/srv/*"})
	default:
		return g.pick([]string{"unknown:x", "GITDIR:~/repo/", ""})
	}
}

func (g *configGen) envKey() string {
	if g.fault(0.05) {
		return g.pick([]string{"", "nosection", "a.1b", "a.b.", ".a"})
	}
	switch g.n(0, 2) {
	case 0:
		return "s." + g.name()
	case 1:
		return "S.Sub Sec." + g.name()
	default:
		return "remote.o.url"
	}
}

// mutate inserts, deletes or replaces one byte.
func (g *configGen) mutate(s string) string {
	const alphabet = "[]\"\\#;=\n\r\t ax.1-\x00"
	i := g.rng.Intn(len(s) + 1)
	c := string(alphabet[g.rng.Intn(len(alphabet))])
	switch {
	case i == len(s) || g.chance(0.4):
		return s[:i] + c + s[i:]
	case g.chance(0.5):
		return s[:i] + s[i+1:]
	default:
		return s[:i] + c + s[i+1:]
	}
}

func TestConfigBooleansReadAsGitConfigTypeBoolReadsThem(t *testing.T) {
	w := newGitWorld(t)
	spellings := []string{"", "true", "TRUE", "Yes", "on", "off", "No", "FALSE", "0", "1", "2", "-1", "0x0", "0x10", "0X1f",
		"-0x1", "0x", "010", "00", "08", "1k", "0k", "1K", "1m", "1g", "1G", "1t", "1kk", " 1", "\v1", "1 ", "+1", "+0", "-0",
		"+-1", "2147483647", "2147483648", "-2147483647", "-2147483648", "2097151k", "2097152k", "2047m", "1g", "2g",
		"9999999999999999999", "maybe", "tru", "0.5", "k", " ", "0b1", "1\u212a", "ｔrue"}
	for _, v := range spellings {
		w.set(t, configCase{files: local(fmt.Sprintf("[a]\n\tk = \"%s\"\n", v))})
		cmd := exec.Command("git", "config", "--type=bool", "a.k")
		cmd.Dir = w.repo
		cmd.Env = gittest.Env(w.home)
		out, gitErr := cmd.Output()
		got, err := ParseBool(v)
		switch {
		case gitErr != nil && err == nil:
			t.Errorf("%q: git refuses, ParseBool reads %v", v, got)
		case gitErr == nil && err != nil:
			t.Errorf("%q: ParseBool refuses (%v), git reads %s", v, err, out)
		case gitErr == nil && strings.TrimSpace(string(out)) != fmt.Sprint(got):
			t.Errorf("%q: ParseBool reads %v, git reads %s", v, got, out)
		}
	}
	w.set(t, configCase{files: local("[a]\n\tk\n")})
	cfg, err := ReadConfig(w.loc, func(k string) string { return map[string]string{"HOME": w.home}[k] })
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := cfg.Get("a.k"); !configTrue(v) {
		t.Fatalf("a bare key reads %q, not true", v)
	}
}

func FuzzConfigAgainstGit(f *testing.F) {
	for _, c := range configTable() {
		if len(c.env) == 0 && len(c.files) == 1 && c.head == "" && !c.conditional {
			f.Add([]byte(c.files["repo/.git/config"]))
		}
	}
	w := newGitWorld(f)
	w.set(f, configCase{})
	f.Fuzz(func(t *testing.T, b []byte) {
		// git checks core.* and extensions.* in the repository's own
		// file when it checks the repository format, as Discover does,
		// before it reads configuration; ReadConfig does not.
		if es, err := parseConfig(b); err == nil {
			for _, e := range es {
				if strings.HasPrefix(e.key, "core.") || strings.HasPrefix(e.key, "extensions.") {
					t.Skip("a repository format key")
				}
			}
		}
		w.compare(t, configCase{name: "fuzz", files: map[string]string{"repo/.git/config": string(b), "inc": "[s]\n\tv = 1\n"}})
	})
}
