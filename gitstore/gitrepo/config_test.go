package gitrepo

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/internal/gittest"
)

func TestConfigFilesParseAsGitReadsThem(t *testing.T) {
	cases := []struct {
		name, src string
		want      []string // key=value
	}{
		{"plain", "[core]\n\thooksPath = .githooks\n", []string{"core.hookspath=.githooks"}},
		{"subsection keeps its case", "[remote \"Up\"]\n url = x\n", []string{"remote.Up.url=x"}},
		{"old dotted subsection is lower-cased", "[Remote.Up]\nURL=x\n", []string{"remote.up.url=x"}},
		{"bare key is true", "[nwdes]\n\tdurable\n", []string{"nwdes.durable=true"}},
		{"comments and trailing space", "# c\n[a] ; c\n b = v  # c\n", []string{"a.b=v"}},
		{"quotes keep space and hashes", "[a]\n b = \" x # y \"\n", []string{"a.b= x # y "}},
		{"escapes", "[a]\n b = one\\ttwo\\n\\\"q\\\\\n", []string{"a.b=one\ttwo\n\"q\\"}},
		{"continuation", "[a]\n b = one \\\ntwo\n c = 3\n", []string{"a.b=one two", "a.c=3"}},
		{"key on the header line", "[a] b = 1\n", []string{"a.b=1"}},
		{"multi-valued in order", "[nwdes]\nprotect = main\nprotect = release/*\n", []string{"nwdes.protect=main", "nwdes.protect=release/*"}},
		{"empty value", "[a]\nb =\n", []string{"a.b="}},
		{"crlf", "[a]\r\nb = c\r\n", []string{"a.b=c"}},
		{"bom", "\ufeff[a]\nb=c\n", []string{"a.b=c"}},
		{"a key outside any section has no section", "k = v\n[a]\nb = c\n", []string{"k=v", "a.b=c"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			es, err := parseConfig([]byte(c.src))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range es {
				got = append(got, e.key+"="+e.value)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestMalformedConfigFilesAreRefused(t *testing.T) {
	for _, src := range []string{"[a\nb=c\n", "[a \"x]\n", "[a]\nb = \"open\n", "[a]\nb = \\q\n", "[a]\n= v\n"} {
		if _, err := parseConfig([]byte(src)); err == nil {
			t.Errorf("%q parsed", src)
		}
	}
}

func TestGitConfigParametersAreReadInBothForms(t *testing.T) {
	es, err := parseParameters(`'core.hooksPath'='/x y' 'nwdes.protect=main' 'a.b' 'c.d'='it'\''s'`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		got = append(got, e.key+"="+e.value)
	}
	want := []string{"core.hookspath=/x y", "nwdes.protect=main", "a.b=true", "c.d=it's"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestConfigScopesApplyInGitsOrderWithIncludes(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	common := filepath.Join(root, "repo", ".git")
	writeFile(t, filepath.Join(root, "system"), "[nwdes]\nprotect = sys\n[core]\nhooksPath = /sys\n")
	writeFile(t, filepath.Join(home, ".config", "git", "config"), "[nwdes]\nprotect = xdg\n")
	writeFile(t, filepath.Join(home, ".gitconfig"), "[include]\npath = ~/more.inc\n")
	writeFile(t, filepath.Join(home, "more.inc"), "[core]\nhooksPath = /global\n[include]\npath = nested.inc\n")
	writeFile(t, filepath.Join(home, "nested.inc"), "[nwdes]\nprotect = nested\n")
	writeFile(t, filepath.Join(common, "config"), "[nwdes]\nprotect = local\n[core]\nrepositoryFormatVersion = 1\n[extensions]\nworktreeConfig = true\n")
	writeFile(t, filepath.Join(common, "config.worktree"), "[nwdes]\nprotect = worktree\n")
	env := map[string]string{
		"HOME": home, "GIT_CONFIG_SYSTEM": filepath.Join(root, "system"),
		"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "nwdes.protect", "GIT_CONFIG_VALUE_0": "count",
		"GIT_CONFIG_PARAMETERS": "'nwdes.protect'='param'",
	}
	loc := Location{GitDir: common, CommonDir: common, WorkTree: filepath.Dir(common)}
	cfg, err := ReadConfig(loc, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"sys", "xdg", "nested", "local", "worktree", "count", "param"}
	if got := cfg.GetAll("nwdes.protect"); !reflect.DeepEqual(got, want) {
		t.Fatalf("nwdes.protect = %q, want %q", got, want)
	}
	if v, _ := cfg.Get("core.hooksPath"); v != "/global" {
		t.Fatalf("core.hooksPath = %q", v)
	}
	env["GIT_CONFIG_NOSYSTEM"] = "1"
	env["GIT_CONFIG_GLOBAL"] = filepath.Join(root, "none")
	cfg, err = ReadConfig(loc, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.GetAll("nwdes.protect"); strings.Join(got, ",") != "local,worktree,count,param" {
		t.Fatalf("without system and global: %q", got)
	}
}

func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{"[a]\nb=c\n", "[a \"x\\\"y\"]\n b = \"q\" # c\n", "[a]\nb = x\\\ny\n", "[a.B]\nc\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		es, err := parseConfig(b)
		if err != nil {
			return
		}
		for _, e := range es {
			if e.key == "" || strings.ContainsAny(e.key, "\n\x00") || e.bare && e.value != "true" {
				t.Fatalf("entry %+v", e)
			}
		}
	})
}

func FuzzParseParameters(f *testing.F) {
	for _, s := range []string{`'a.b'='c'`, `'a.b=c' 'd.e'`, `'x.y'='it'\''s'`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		es, err := parseParameters(s)
		if err != nil {
			return
		}
		for _, e := range es {
			if e.key != normKey(e.key) {
				t.Fatalf("key %q not normalised", e.key)
			}
		}
	})
}

func TestConfigEmptyValueIsTheEmptyStringAndFalse(t *testing.T) {
	es, err := parseConfig([]byte("[s]\n\tk =\n\tb\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 2 || es[0].value != "" {
		t.Fatalf("entries %+v", es)
	}
	if configTrue(es[0].value) || !configFalse(es[0].value) {
		t.Fatal(`"k =" must read as false, as git config --type=bool reads it`)
	}
	if !configTrue(es[1].value) || configFalse(es[1].value) {
		t.Fatal(`a bare "b" must read as true`)
	}
}

func TestConfigUnquotedTabsAndLoneCarriageReturnsBecomeSpaces(t *testing.T) {
	es, err := parseConfig([]byte("[a]\nk = a\tb\rc \t d\n q = \"x\ty\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 2 || es[0].value != "a b c   d" || es[1].value != "x\ty" {
		t.Fatalf("entries %+v", es)
	}
}

func TestConfigKeysGitRefusesAreRefused(t *testing.T) {
	for _, src := range []string{"[a]\n1k = v\n", "[a]\n-k = v\n", "[a]\nk # comment\n", "[a]\nk ; comment\n", "[a]\nk\r= v\n"} {
		_, err := parseConfig([]byte(src))
		if err == nil {
			t.Errorf("%q parsed", src)
		}
	}
}

func TestConfigBackslashAtTheEndOfTheFileEndsTheValue(t *testing.T) {
	es, err := parseConfig([]byte("[a]\n\tk = x\\"))
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 || es[0].value != "x" {
		t.Fatalf("entries %+v", es)
	}
}

func TestConfigIncludeIfConditionsAreEvaluatedAsGitDoes(t *testing.T) {
	repo := gittest.Init(t, false)
	home := filepath.Dir(repo)
	gittest.Git(t, repo, "checkout", "-q", "-b", "feature/x")
	gittest.Git(t, repo, "remote", "add", "origin", "https://example.com/team/repo.git")
	conds := []struct{ cond, name string }{
		{"gitdir:~/repo/", "home"},
		{"gitdir:repo/.git", "relative"},
		{"gitdir/i:~/REPO/", "icase"},
		{"gitdir:~/REPO/", "case"},
		{"gitdir:./repo/", "dotslash"},
		{"gitdir:~/other/", "other"},
		{"onbranch:feature/", "branch"},
		{"onbranch:main", "main"},
		{"hasconfig:remote.*.url:https://example.com/**", "url"},
		{"hasconfig:remote.*.url:https://example.org/**", "otherurl"},
		{"unknown:x", "unknown"},
	}
	var global strings.Builder
	for _, c := range conds {
		global.WriteString("[includeIf \"" + c.cond + "\"]\n\tpath = inc/" + c.name + "\n")
		writeFile(t, filepath.Join(home, "inc", c.name), "[nwdes]\n\tprotect = "+c.name+"\n")
	}
	writeFile(t, filepath.Join(home, ".gitconfig"), global.String())
	loc := Location{GitDir: filepath.Join(repo, ".git"), CommonDir: filepath.Join(repo, ".git"), WorkTree: repo}
	env := map[string]string{"HOME": home, "GIT_CONFIG_NOSYSTEM": "1"}
	cfg, err := ReadConfig(loc, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"home", "relative", "icase", "dotslash", "branch", "url"}
	if got := cfg.GetAll("nwdes.protect"); !reflect.DeepEqual(got, want) || cfg.Conditional {
		t.Fatalf("nwdes.protect = %q (conditional %v), want %q", got, cfg.Conditional, want)
	}
	if got := gittest.Git(t, repo, "config", "--get-all", "nwdes.protect"); got != strings.Join(want, "\n") {
		t.Fatalf("git itself reads %q", got)
	}
}

func TestPromisorRemotesAreListedInTheOrderGitAsksThem(t *testing.T) {
	cases := []struct {
		name, src string
		want      []string
	}{
		{"a full clone has none", "[remote \"origin\"]\n\turl = x\n", nil},
		{"a partial clone's remote", "[remote \"origin\"]\n\tpromisor = true\n\tpartialclonefilter = blob:none\n[extensions]\n\tpartialClone = origin\n", []string{"origin"}},
		{"promisor false is not one", "[remote \"a\"]\n\tpromisor = false\n", nil},
		{"a filter alone makes one", "[remote \"a\"]\n\tpartialCloneFilter = tree:0\n", []string{"a"}},
		{"extensions.partialClone goes last", "[extensions]\n\tpartialclone = origin\n[remote \"origin\"]\n\tpromisor\n[remote \"Other\"]\n\tpromisor = yes\n", []string{"Other", "origin"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			es, err := parseConfig([]byte(c.src))
			if err != nil {
				t.Fatal(err)
			}
			cfg := &Config{entries: es}
			if got := cfg.PromisorRemotes(); !slices.Equal(got, c.want) {
				t.Fatalf("PromisorRemotes() = %q, want %q", got, c.want)
			}
		})
	}
}
