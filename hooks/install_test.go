package hooks_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/hooks"
	"github.com/nwdes/nwdes/internal/gittest"
	"github.com/nwdes/nwdes/refusal"
)

func hooksDir(t *testing.T) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "hooks")
}

func mustInstall(t *testing.T, dir string) *hooks.State {
	t.Helper()
	st, err := hooks.Install(dir)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestInstallingTwiceChangesNothing(t *testing.T) {
	dir := hooksDir(t)
	first := mustInstall(t, dir)
	if !first.Changed || !first.Current || first.Chained != "" {
		t.Fatalf("first install: %+v", first)
	}
	fi1, _ := os.Stat(first.Hook)
	second := mustInstall(t, dir)
	fi2, _ := os.Stat(first.Hook)
	if second.Changed || !fi1.ModTime().Equal(fi2.ModTime()) {
		t.Fatalf("second install changed something: %+v", second)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || fi2.Mode().Perm() != 0o755 {
		t.Fatalf("hooks dir holds %d entries, hook mode %v", len(entries), fi2.Mode())
	}
}

func TestAnExistingHookIsKeptChainedAndPutBackByteForByte(t *testing.T) {
	dir := hooksDir(t)
	orig := []byte("#!/bin/sh\n# someone's hook\r\nexit 0\n\n")
	hook := filepath.Join(dir, "pre-push")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hook, orig, 0o750); err != nil {
		t.Fatal(err)
	}
	st := mustInstall(t, dir)
	if st.Chained != hook+".nwdes-chained" || !st.ChainedRuns || !st.Current {
		t.Fatalf("install: %+v", st)
	}
	if again := mustInstall(t, dir); again.Changed || again.Chained == "" {
		t.Fatalf("reinstall: %+v", again)
	}
	un, err := hooks.Uninstall(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !un.Changed || un.Installed || un.Chained != "" || !un.Foreign {
		t.Fatalf("uninstall: %+v", un)
	}
	got, _ := os.ReadFile(hook)
	fi, _ := os.Stat(hook)
	if !bytes.Equal(got, orig) || fi.Mode().Perm() != 0o750 {
		t.Fatalf("restored hook differs: %q mode %v", got, fi.Mode())
	}
	if un2, err := hooks.Uninstall(dir); err != nil || un2.Changed {
		t.Fatalf("second uninstall: %+v %v", un2, err)
	}
}

func TestASymlinkedHookStaysASymlink(t *testing.T) {
	dir := hooksDir(t)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../shared/pre-push", filepath.Join(dir, "pre-push")); err != nil {
		t.Fatal(err)
	}
	mustInstall(t, dir)
	if target, err := os.Readlink(filepath.Join(dir, "pre-push.nwdes-chained")); err != nil || target != "../shared/pre-push" {
		t.Fatalf("chained link: %q %v", target, err)
	}
	if _, err := hooks.Uninstall(dir); err != nil {
		t.Fatal(err)
	}
	if target, err := os.Readlink(filepath.Join(dir, "pre-push")); err != nil || target != "../shared/pre-push" {
		t.Fatalf("restored link: %q %v", target, err)
	}
}

func TestNothingIsLostWhenAForeignHookReplacedOursAfterInstall(t *testing.T) {
	dir := hooksDir(t)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	hook := filepath.Join(dir, "pre-push")
	os.WriteFile(hook, []byte("#!/bin/sh\necho first\n"), 0o755)
	mustInstall(t, dir)
	os.WriteFile(hook, []byte("#!/bin/sh\necho another tool\n"), 0o755)
	if _, err := hooks.Install(dir); !refusal.Named(err, "HookConflict") {
		t.Fatalf("install over a foreign hook with a chained one kept: %v", err)
	}
	if _, err := hooks.Uninstall(dir); !refusal.Named(err, "HookConflict") {
		t.Fatalf("uninstall: %v", err)
	}
	a, _ := os.ReadFile(hook)
	b, _ := os.ReadFile(hook + ".nwdes-chained")
	if string(a) != "#!/bin/sh\necho another tool\n" || string(b) != "#!/bin/sh\necho first\n" {
		t.Fatalf("a refusal changed files: %q %q", a, b)
	}
}

func TestAnOlderNwdesHookIsUpgradedKeepingTheChain(t *testing.T) {
	dir := hooksDir(t)
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "pre-push"), []byte("#!/bin/sh\n# nwdes-managed-hook: pre-push v0\nexec git nwdes hook pre-push \"$@\"\n"), 0o755)
	os.WriteFile(filepath.Join(dir, "pre-push.nwdes-chained"), []byte("#!/bin/sh\n"), 0o755)
	st, err := hooks.Status(dir)
	if err != nil || !st.Installed || st.Current {
		t.Fatalf("status of an older hook: %+v %v", st, err)
	}
	st = mustInstall(t, dir)
	if !st.Changed || !st.Current || st.Chained == "" {
		t.Fatalf("upgrade: %+v", st)
	}
}

func TestHooksGoWhereGitRunsThem(t *testing.T) {
	repo := gittest.Init(t, false)
	loc, err := gitrepo.Discover(repo, nil)
	if err != nil {
		t.Fatal(err)
	}
	home := "/home/u"
	dirFor := func(l gitrepo.Location, cfgText string) string {
		t.Helper()
		cfgFile := filepath.Join(t.TempDir(), "cfg")
		os.WriteFile(cfgFile, []byte(cfgText), 0o644)
		set, err := hooks.LoadSettings(l, func(k string) string {
			return map[string]string{"GIT_CONFIG_GLOBAL": cfgFile, "GIT_CONFIG_NOSYSTEM": "1", "HOME": home}[k]
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return set.Dir
	}
	if got := dirFor(loc, ""); got != filepath.Join(repo, ".git", "hooks") {
		t.Fatalf("default: %s", got)
	}
	if got := dirFor(loc, "[core]\nhooksPath = .githooks\n"); got != filepath.Join(repo, ".githooks") {
		t.Fatalf("relative hooksPath: %s", got)
	}
	if got := dirFor(loc, "[core]\nhooksPath = ~/hooks\n"); got != "/home/u/hooks" {
		t.Fatalf("~ hooksPath: %s", got)
	}
	wt := filepath.Join(t.TempDir(), "wt")
	gittest.Git(t, repo, "worktree", "add", "-q", wt)
	wloc, err := gitrepo.Discover(wt, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := dirFor(wloc, ""); got != filepath.Join(repo, ".git", "hooks") {
		t.Fatalf("linked worktree: %s", got)
	}
	if got := dirFor(wloc, "[core]\nhooksPath = h\n"); got != filepath.Join(wt, "h") {
		t.Fatalf("linked worktree, relative hooksPath: %s", got)
	}
	bare := gittest.Init(t, true)
	bloc, _ := gitrepo.Discover(bare, nil)
	if got := dirFor(bloc, "[core]\nhooksPath = h\n"); got != filepath.Join(bare, "h") {
		t.Fatalf("bare, relative hooksPath: %s", got)
	}
	// git agrees on each.
	for _, c := range []struct{ dir, hp, want string }{
		{repo, ".githooks", filepath.Join(repo, ".githooks")},
		{wt, "h", filepath.Join(wt, "h")},
	} {
		out := gittest.Git(t, filepath.Join(c.dir), "-c", "core.hooksPath="+c.hp, "rev-parse", "--git-path", "hooks")
		if !filepath.IsAbs(out) {
			out = filepath.Join(c.dir, out)
		}
		if filepath.Clean(out) != c.want {
			t.Fatalf("git says %s, want %s", out, c.want)
		}
	}
}

// fakeNwdes puts a git-nwdes on PATH that records its arguments and input
// and exits with code.
func fakeNwdes(t *testing.T, code int) (binDir, record string) {
	t.Helper()
	binDir = t.TempDir()
	record = filepath.Join(t.TempDir(), "nwdes.log")
	script := "#!/bin/sh\nprintf '%s|' \"$@\" > " + record + "\ncat >> " + record + "\nexit " + string(rune('0'+code)) + "\n"
	os.WriteFile(filepath.Join(binDir, "git-nwdes"), []byte(script), 0o755)
	return binDir, record
}

func runHook(t *testing.T, hook, path, stdin string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(hook, args...)
	cmd.Env = []string{"PATH=" + path}
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

func TestTheHookPassesTheSameArgumentsAndInputToNwdesAndToTheChainedHook(t *testing.T) {
	dir := hooksDir(t)
	os.MkdirAll(dir, 0o755)
	chainedLog := filepath.Join(t.TempDir(), "chained.log")
	os.WriteFile(filepath.Join(dir, "pre-push"), []byte("#!/bin/sh\nprintf '%s|' \"$@\" > "+chainedLog+"\ncat >> "+chainedLog+"\nexit 7\n"), 0o755)
	mustInstall(t, dir)
	input := "refs/heads/main " + strings.Repeat("a", 40) + " refs/heads/main " + strings.Repeat("0", 40) + "\n" +
		"(delete) " + strings.Repeat("0", 40) + " refs/heads/old " + strings.Repeat("b", 40) + "\n"
	bin, nwLog := fakeNwdes(t, 0)
	_, code := runHook(t, filepath.Join(dir, "pre-push"), bin+":/usr/bin:/bin", input, "origin", "ssh://h/r x.git")
	if code != 7 {
		t.Fatalf("exit %d, want the chained hook's 7", code)
	}
	want := "hook|pre-push|origin|ssh://h/r x.git|" + input
	if got, _ := os.ReadFile(nwLog); string(got) != want {
		t.Fatalf("nwdes got %q", got)
	}
	if got, _ := os.ReadFile(chainedLog); string(got) != "origin|ssh://h/r x.git|"+input {
		t.Fatalf("chained hook got %q", got)
	}

	os.Remove(chainedLog)
	bin, _ = fakeNwdes(t, 1)
	_, code = runHook(t, filepath.Join(dir, "pre-push"), bin+":/usr/bin:/bin", input, "origin", "u")
	if _, err := os.Stat(chainedLog); code != 1 || err == nil {
		t.Fatalf("a refusal by nwdes: exit %d, chained hook ran: %v", code, err == nil)
	}

	_, code = runHook(t, filepath.Join(dir, "pre-push"), bin+":/usr/bin:/bin", "", "origin", "u")
	if code != 1 {
		t.Fatalf("empty input: exit %d", code)
	}
}

func TestWithoutAChainedHookNwdesGetsTheInputDirectly(t *testing.T) {
	dir := hooksDir(t)
	mustInstall(t, dir)
	bin, nwLog := fakeNwdes(t, 0)
	if _, code := runHook(t, filepath.Join(dir, "pre-push"), bin+":/usr/bin:/bin", "x y\n", "r", "u"); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if got, _ := os.ReadFile(nwLog); string(got) != "hook|pre-push|r|u|x y\n" {
		t.Fatalf("nwdes got %q", got)
	}
}

func TestTheHookFailsClosedWhenGitNwdesIsMissing(t *testing.T) {
	dir := hooksDir(t)
	mustInstall(t, dir)
	out, code := runHook(t, filepath.Join(dir, "pre-push"), "/usr/bin:/bin", "", "r", "u")
	if code == 0 || !strings.Contains(out, "git-nwdes is not on PATH") {
		t.Fatalf("exit %d: %s", code, out)
	}
}
