package hooks

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/nwdes/nwdes/gitstore/gitrepo"
	"github.com/nwdes/nwdes/internal/boundedio"
	"github.com/nwdes/nwdes/refusal"
)

// PrePush is the hook nwdes installs.
const PrePush = "pre-push"

// ChainedSuffix names where a hook found at install time is kept: the
// installed script runs it after its own check, with the same arguments and
// the same standard input, and uninstall puts it back.
const ChainedSuffix = ".nwdes-chained"

// marker identifies a hook nwdes wrote; the version after it changes when
// the script does, so that install upgrades an older one.
const (
	marker        = "# nwdes-managed-hook: pre-push"
	scriptVersion = "v1"
)

// Script is the pre-push hook nwdes installs: POSIX sh that runs
// `git-nwdes hook pre-push` and then, if one was there before, the chained
// hook, each with the same arguments and standard input. Without a chained
// hook it execs nwdes directly, so the hook costs one shell and one nwdes
// process. git-nwdes is called directly rather than through `git nwdes`:
// git puts its exec-path on PATH for hooks, so this finds the same binary
// one process sooner.
const Script = `#!/bin/sh
` + marker + ` ` + scriptVersion + `
# Installed by "git nwdes hooks install"; "git nwdes hooks uninstall" removes
# it and puts back the hook that was here before (kept as pre-push` + ChainedSuffix + `).
# It refuses a push of a protected branch whose commit lacks an accepted
# examination of every feature with a contract (see docs/hooks.md), then runs
# the chained hook with the same arguments and input.
if ! command -v git-nwdes >/dev/null 2>&1; then
	echo "nwdes: git-nwdes is not on PATH, so the pre-push check cannot run; the push is refused." >&2
	echo "remedy: install git-nwdes, or remove this hook with git nwdes hooks uninstall" >&2
	exit 1
fi
chained="${0%/*}/pre-push` + ChainedSuffix + `"
if [ ! -x "$chained" ]; then
	exec git-nwdes hook pre-push "$@"
fi
input=$(cat; echo x) || exit 1
input=${input%x}
printf '%s' "$input" | git-nwdes hook pre-push "$@" || exit $?
printf '%s' "$input" | "$chained" "$@"
`

// ReceiveScript is the server's pre-receive hook (hooks install --server):
// `git-nwdes hook pre-receive`, then the chained hook with the same input.
const ReceiveScript = `#!/bin/sh
` + receiveMarker + ` ` + scriptVersion + `
# Installed by "git nwdes hooks install --server"; "git nwdes hooks uninstall
# --server" removes it and puts back the hook that was here before (kept as
# pre-receive` + ChainedSuffix + `). It refuses a push that moves a protected
# branch to a commit without accepted (and, with a signing policy, correctly
# signed) examinations, or that rewrites nwdes's records (see docs/trust.md),
# then runs the chained hook with the same input.
if ! command -v git-nwdes >/dev/null 2>&1; then
	echo "nwdes: git-nwdes is not on the server's PATH, so the pre-receive check cannot run; the push is refused." >&2
	exit 1
fi
chained="${0%/*}/pre-receive` + ChainedSuffix + `"
if [ ! -x "$chained" ]; then
	exec git-nwdes hook pre-receive
fi
input=$(cat; echo x) || exit 1
input=${input%x}
printf '%s' "$input" | git-nwdes hook pre-receive || exit $?
printf '%s' "$input" | "$chained" "$@"
`

const receiveMarker = "# nwdes-managed-hook: pre-receive"

// TransactionScript is the server's reference-transaction hook (hooks
// install --server, beside pre-receive): in the state "prepared" — every
// ref of the transaction locked, none written — it runs `git-nwdes hook
// reference-transaction prepared`, which judges each update again with the
// records as they will be once the transaction commits, then the chained
// hook; in every other state only the chained hook. A refusal makes git
// abort the transaction (and receive-pack stop).
const TransactionScript = `#!/bin/sh
` + transactionMarker + ` ` + scriptVersion + `
# Installed by "git nwdes hooks install --server"; "git nwdes hooks uninstall
# --server" removes it and puts back the hook that was here before (kept as
# reference-transaction` + ChainedSuffix + `). Before git writes any ref of a
# transaction it refuses one that would leave a protected branch at a commit
# the records do not accept then, or that breaks the rules pre-receive holds
# a push to (see docs/hooks.md), then runs the chained hook with the same
# arguments and input.
chained="${0%/*}/reference-transaction` + ChainedSuffix + `"
if [ "$1" != prepared ]; then
	if [ -x "$chained" ]; then
		exec "$chained" "$@"
	fi
	cat >/dev/null
	exit 0
fi
if ! command -v git-nwdes >/dev/null 2>&1; then
	echo "nwdes: git-nwdes is not on PATH, so the reference-transaction check cannot run; the update is refused." >&2
	exit 1
fi
if [ ! -x "$chained" ]; then
	exec git-nwdes hook reference-transaction "$@"
fi
input=$(cat; echo x) || exit 1
input=${input%x}
printf '%s' "$input" | git-nwdes hook reference-transaction "$@" || exit $?
printf '%s' "$input" | "$chained" "$@"
`

const transactionMarker = "# nwdes-managed-hook: reference-transaction"

// A Hook is one hook nwdes installs: its name, and the script it writes.
type Hook struct {
	Name   string
	script string
	marker string
}

// The hooks nwdes installs: the client's pre-push, the server's
// pre-receive.
var (
	PrePushHook     = Hook{Name: PrePush, script: Script, marker: marker}
	PreReceiveHook  = Hook{Name: "pre-receive", script: ReceiveScript, marker: receiveMarker}
	TransactionHook = Hook{Name: ReferenceTransaction, script: TransactionScript, marker: transactionMarker}
)

// ServerHooks are the hooks the receiving repository needs, in the order
// they are installed: pre-receive judges a push before any ref moves (its
// refusal reaches the pusher on every transport); reference-transaction
// judges each write again once git holds the refs' locks, which closes
// what happens between the two (a push that is not --atomic, whose records
// lose a race to another push, must not leave its branch behind).
var ServerHooks = []Hook{PreReceiveHook, TransactionHook}

// State is what is installed where.
type State struct {
	// Name is the hook's name (pre-push, pre-receive).
	Name string `json:"name"`
	// Dir is the directory git runs hooks from.
	Dir string `json:"dir"`
	// HooksPath is core.hooksPath as configured ("" when unset).
	HooksPath string `json:"hooks_path,omitempty"`
	// Hook is the pre-push hook's path.
	Hook string `json:"hook"`
	// Installed: the pre-push hook is nwdes's; Current: and this version.
	Installed bool `json:"installed"`
	Current   bool `json:"current"`
	// Foreign: a pre-push hook that is not nwdes's is there.
	Foreign bool `json:"foreign"`
	// Chained is the kept earlier hook, "" when there is none.
	Chained string `json:"chained,omitempty"`
	// ChainedRuns: the chained hook is executable, so it runs.
	ChainedRuns bool `json:"chained_runs"`
	// Changed: this call changed the hooks directory.
	Changed bool `json:"changed"`
	// Actions says what this call did, one sentence each.
	Actions []string `json:"actions"`
}

// Dir returns the directory git runs hooks from, and core.hooksPath as
// configured: core.hooksPath when set (a leading ~/ is the home directory; a
// relative path is relative to the top of the work tree, or to the git
// directory in a bare repository, where git runs hooks), otherwise the
// hooks directory of the common git directory, which every linked worktree
// shares.
func Dir(loc gitrepo.Location, cfg *gitrepo.Config, home string) (dir, configured string) {
	hp, ok := cfg.Get("core.hooksPath")
	if !ok || hp == "" {
		return filepath.Join(loc.CommonDir, "hooks"), ""
	}
	p := gitrepo.ExpandHome(hp, home)
	if !filepath.IsAbs(p) {
		base := loc.WorkTree
		if base == "" {
			base = loc.GitDir
		}
		p = filepath.Join(base, p)
	}
	return filepath.Clean(p), hp
}

// Status reports what pre-push hook is installed in dir.
func Status(dir string) (*State, error) { return PrePushHook.Status(dir) }

// Install installs the pre-push hook (see Hook.Install).
func Install(dir string) (*State, error) { return PrePushHook.Install(dir) }

// Uninstall removes the pre-push hook (see Hook.Uninstall).
func Uninstall(dir string) (*State, error) { return PrePushHook.Uninstall(dir) }

// Status reports what is installed in dir.
func (h Hook) Status(dir string) (*State, error) {
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return nil, refusal.New(refusal.HooksPathUnusable, "set core.hooksPath to a directory, or unset it (git config --unset core.hooksPath)",
			"the hooks directory %s is not a directory", dir)
	}
	st := &State{Name: h.Name, Dir: dir, Hook: filepath.Join(dir, h.Name), Actions: []string{}}
	kind, err := h.inspect(st.Hook)
	if err != nil {
		return nil, err
	}
	st.Installed = kind != hookAbsent && kind != hookForeign
	st.Current = kind == hookCurrent
	st.Foreign = kind == hookForeign
	chained := st.Hook + ChainedSuffix
	if fi, err := os.Stat(chained); err == nil {
		st.Chained = chained
		st.ChainedRuns = !fi.IsDir() && fi.Mode()&0o111 != 0
	} else if _, lerr := os.Lstat(chained); lerr == nil {
		st.Chained = chained // a dangling symlink: kept, never runs
	}
	return st, nil
}

type hookKind int

// hookFileLimit bounds what inspect reads of a hook already in place: a
// file over it is no hook nwdes wrote.
var hookFileLimit = boundedio.Limit{Bytes: 1 << 20, Of: "a hook script", Remedy: "move the hook aside"}

const (
	hookAbsent hookKind = iota
	hookForeign
	hookOlder
	hookCurrent
)

func (h Hook) inspect(path string) (hookKind, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return hookAbsent, nil
	}
	if err != nil {
		return 0, fmt.Errorf("inspect %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return hookForeign, nil
	}
	b, err := boundedio.ReadFile(path, hookFileLimit)
	if refusal.Named(err, refusal.InputTooLarge) {
		return hookForeign, nil // larger than any hook nwdes writes
	}
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	if !bytes.Contains(b, []byte("\n"+h.marker+" ")) {
		return hookForeign, nil
	}
	if string(b) == h.script {
		return hookCurrent, nil
	}
	return hookOlder, nil
}

// Install puts nwdes's hook in dir. A hook already there that is not
// nwdes's is kept as <name>.nwdes-chained (renamed, so its content, mode
// and symlink-ness are exactly preserved) and still runs. Installing again
// changes nothing; an older nwdes hook is rewritten in place.
func (h Hook) Install(dir string) (*State, error) {
	st, err := h.Status(dir)
	if err != nil {
		return nil, err
	}
	if st.Current {
		st.Actions = append(st.Actions, "the nwdes "+h.Name+" hook is already installed; nothing changed")
		return st, nil
	}
	if st.Foreign && st.Chained != "" {
		return nil, refusal.New(refusal.HookConflict,
			fmt.Sprintf("decide which hook to keep: move %s or %s out of the way, then install again", st.Hook, st.Chained),
			"%s is not nwdes's and %s already holds an earlier hook; installing would lose one of them", st.Hook, st.Chained)
	}
	if fi, err := os.Stat(st.Hook); err == nil && fi.IsDir() {
		return nil, refusal.New(refusal.HookConflict, "remove or rename the directory, then install again",
			"%s is a directory", st.Hook)
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, fmt.Errorf("create hooks directory: %w", err)
	}
	chained := st.Hook + ChainedSuffix
	moved := false
	if st.Foreign {
		if err := os.Rename(st.Hook, chained); err != nil {
			return nil, fmt.Errorf("keep the existing hook: %w", err)
		}
		moved = true
		st.Actions = append(st.Actions, fmt.Sprintf("kept the existing %s hook as %s; it runs after nwdes's check", h.Name, chained))
	}
	if err := writeExecutable(st.Hook, []byte(h.script)); err != nil {
		if moved {
			_ = os.Rename(chained, st.Hook)
		}
		return nil, err
	}
	if st.Installed {
		st.Actions = append(st.Actions, "upgraded the nwdes "+h.Name+" hook at "+st.Hook)
	} else {
		st.Actions = append(st.Actions, "installed the nwdes "+h.Name+" hook at "+st.Hook)
	}
	if !moved && st.Chained != "" {
		st.Actions = append(st.Actions, fmt.Sprintf("%s, left by an earlier install, runs after nwdes's check", st.Chained))
	}
	final, err := h.Status(dir)
	if err != nil {
		return nil, err
	}
	final.Changed, final.Actions = true, st.Actions
	return final, nil
}

// Uninstall removes nwdes's hook and puts back the hook it kept, byte for
// byte. With no nwdes hook there it changes nothing, except that a kept
// hook whose place is empty is put back.
func (h Hook) Uninstall(dir string) (*State, error) {
	st, err := h.Status(dir)
	if err != nil {
		return nil, err
	}
	switch {
	case st.Foreign && st.Chained != "":
		return nil, refusal.New(refusal.HookConflict,
			fmt.Sprintf("decide which to keep: %s (now in place) or %s (kept by an earlier install)", st.Hook, st.Chained),
			"%s is not nwdes's, so putting back %s would overwrite it", st.Hook, st.Chained)
	case st.Foreign:
		st.Actions = append(st.Actions, fmt.Sprintf("%s is not nwdes's; nothing changed", st.Hook))
		return st, nil
	case !st.Installed && st.Chained == "":
		st.Actions = append(st.Actions, "no nwdes "+h.Name+" hook is installed; nothing changed")
		return st, nil
	}
	var actions []string
	if st.Installed {
		if err := os.Remove(st.Hook); err != nil {
			return nil, fmt.Errorf("remove %s: %w", st.Hook, err)
		}
		actions = append(actions, "removed the nwdes "+h.Name+" hook "+st.Hook)
	}
	if st.Chained != "" {
		if err := os.Rename(st.Chained, st.Hook); err != nil {
			return nil, fmt.Errorf("put back %s: %w", st.Chained, err)
		}
		actions = append(actions, fmt.Sprintf("put back the earlier %s hook from %s", h.Name, st.Chained))
	}
	final, err := h.Status(dir)
	if err != nil {
		return nil, err
	}
	final.Changed, final.Actions = true, actions
	return final, nil
}

// writeExecutable writes data to path through a temporary file and a
// rename, so a concurrent git push sees the old hook or the new one.
func writeExecutable(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Chmod(0o755); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Describe renders a State for people, one line each.
func Describe(st *State) []string {
	var out []string
	where := st.Dir
	if st.HooksPath != "" {
		where += fmt.Sprintf(" (core.hooksPath = %s)", st.HooksPath)
	}
	out = append(out, "hooks directory: "+where)
	install := "git nwdes hooks install"
	if st.Name != PrePushHook.Name {
		install += " --server"
	}
	switch {
	case st.Current:
		out = append(out, st.Name+": nwdes's hook, current")
	case st.Installed:
		out = append(out, st.Name+": nwdes's hook, an older version ("+install+" upgrades it)")
	case st.Foreign:
		out = append(out, st.Name+": another hook, not nwdes's ("+install+" keeps it and chains it)")
	default:
		out = append(out, st.Name+": none ("+install+")")
	}
	if st.Chained != "" {
		runs := "runs after nwdes's check"
		if !st.ChainedRuns {
			runs = "not executable, so it does not run (as git would ignore it)"
		}
		if !st.Installed {
			runs = "kept by an earlier install; git nwdes hooks uninstall puts it back"
		}
		out = append(out, fmt.Sprintf("chained: %s (%s)", st.Chained, runs))
	}
	return out
}
