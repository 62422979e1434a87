package gitstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/gitstore/treemerge"
	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/refusal"
)

// This file moves nwdes refs and notes between clones. Transport goes
// through the git binary, so that users' SSH configuration, credential
// helpers, proxies and URL rewrites apply; it is the only place nwdes runs
// git. Nothing else here trusts git: merges of record trees are computed in
// process and local refs move only by compare-and-swap.
//
// Remote state lands in a tracking namespace, never on the local refs:
//
//	refs/nwdes/<name>   on the remote  →  refs/nwdes-remotes/<remote>/nwdes/<name>
//	refs/notes/nwdes    on the remote  →  refs/nwdes-remotes/<remote>/notes/nwdes
//
// and is then merged into the local refs: a fast-forward when local is
// behind, nothing when it is ahead, otherwise a merge commit whose tree is
// the three-way union of both sides (see mergeTrees).

// TrackingPrefix is where fetched nwdes refs are kept, per remote.
const TrackingPrefix = "refs/nwdes-remotes/"

// LocalPrefix is where a clone keeps records that are its own: outside
// refs/nwdes/, so that push, fetch and the refspecs remote setup writes
// never carry them. fsck checks them like any other.
const LocalPrefix = "refs/nwdes-local/"

// DefaultSyncAttempts bounds Push's fetch-merge-push rounds.
const DefaultSyncAttempts = 8

// Side names one side of a merge.
type Side int

const (
	// Ours is the local ref's side.
	Ours Side = iota
	// Theirs is the remote's side.
	Theirs
)

// Resolver decides which side's record to keep when both sides changed the
// record at path differently since their merge base (a record is a
// directory holding record.json). It must be deterministic and symmetric —
// swapping ours and theirs must swap the answer — so that two clones merging
// the same pair build the same tree. The side not kept stays reachable in
// the merge commit's other parent.
type Resolver func(ref RefName, path string, ours, theirs *Record) (Side, error)

// SyncOptions configure Fetch, Push and SetupRemote.
type SyncOptions struct {
	// Environ is the caller's environment ("KEY=value"). Only what git needs
	// for transport, SSH, credentials and configuration is passed on (see
	// GitEnv); the library never reads the process environment itself.
	Environ []string
	// MaxAttempts bounds Push's rounds when the remote keeps moving.
	MaxAttempts int
	// GitPath is the git binary; "git" (looked up on PATH) when empty.
	GitPath string
	// stdin, when set, is given to the git command (internal).
	stdin string
	// AfterMerge, when set, runs after the remote's refs were merged into
	// the local ones and before anything is pushed: what is derived from
	// the merged records (notes rendered from examinations) is brought up to
	// date there, so that it is pushed up to date too.
	AfterMerge func(ctx context.Context) error
}

func (o *SyncOptions) fill() {
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = DefaultSyncAttempts
	}
	if o.GitPath == "" {
		o.GitPath = "git"
	}
}

// SyncAction says what happened to one local ref.
type SyncAction string

const (
	SyncCreated     SyncAction = "created"      // the ref did not exist locally
	SyncFastForward SyncAction = "fast-forward" // local was behind the remote
	SyncMerged      SyncAction = "merged"       // both had advanced: merge commit
	SyncUpToDate    SyncAction = "up-to-date"   // same commit on both sides
	SyncAhead       SyncAction = "ahead"        // the remote is behind local
	SyncPushed      SyncAction = "pushed"       // the remote was moved to local
	SyncMirrored    SyncAction = "mirrored"     // a swap ref took the remote's value
	SyncSkipped     SyncAction = "skipped"      // no kind declares the ref: left alone
)

// RefSync is what a sync did to one ref.
type RefSync struct {
	Ref    RefName    `json:"ref"`
	Action SyncAction `json:"action"`
	// Before and After are the local ref's values around a merge, or the
	// remote's around a push; absent refs are "".
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
	// Remote is the remote's value that was merged, or pushed over.
	Remote string `json:"remote,omitempty"`
	// Resolved lists paths where both sides had changed a record or note
	// differently and a merge rule chose (records) or concatenated (notes).
	Resolved []string `json:"resolved,omitempty"`
	// Policy is the ref's declared sync policy ("" when undeclared).
	Policy SyncPolicy `json:"policy,omitempty"`
}

// SyncReport is what Fetch or Push did.
type SyncReport struct {
	Remote string `json:"remote"`
	// Merged is the fetch-and-merge of every tracked ref (the last round's).
	Merged []RefSync `json:"merged"`
	// Pushed lists the refs moved on the remote (Push only).
	Pushed []RefSync `json:"pushed"`
	// Attempts is how many fetch-merge-push rounds Push took.
	Attempts int `json:"attempts"`
}

// RemoteSetup is what SetupRemote found and changed.
type RemoteSetup struct {
	Remote   string   `json:"remote"`
	Added    []string `json:"added"`
	Present  []string `json:"present"`
	Warnings []string `json:"warnings"`
}

// FetchRefspecs are the refspecs that bring a remote's nwdes refs and notes
// into the tracking namespace. The notes refspec is a pattern so that a
// remote without nwdes notes yet does not make `git fetch` fail (an exact
// refspec for a missing ref does); it may also bring other notes refs whose
// names start with "nwdes", which only ever land in the tracking namespace.
// notes are the display notes refs declared besides (refs/notes/commits,
// say): each is fetched by the same pattern trick, refs/notes/<name>*, so
// that a remote without it does not fail the fetch.
func FetchRefspecs(remote string, notes ...RefName) []string {
	base := TrackingPrefix + remote + "/"
	out := []string{
		"+refs/nwdes/*:" + base + "nwdes/*",
		"+refs/notes/nwdes*:" + base + "notes/nwdes*",
	}
	for _, n := range notes {
		rest := strings.TrimPrefix(string(n), "refs/")
		out = append(out, "+"+string(n)+"*:"+base+rest+"*")
	}
	return out
}

// TrackingRef is where the remote's value of a local nwdes ref is kept.
func TrackingRef(remote string, ref RefName) RefName {
	return RefName(TrackingPrefix + remote + "/" + strings.TrimPrefix(string(ref), "refs/"))
}

// localOf maps a tracking ref back to the local ref it tracks, or "".
func localOf(remote string, tracking RefName) RefName {
	rest, ok := strings.CutPrefix(string(tracking), TrackingPrefix+remote+"/")
	if !ok {
		return ""
	}
	switch {
	case strings.HasPrefix(rest, "nwdes/"):
		return RefName("refs/" + rest)
	case rest == "notes/nwdes":
		return NotesRef
	case strings.HasPrefix(rest, "notes/"):
		return RefName("refs/" + rest) // a display notes ref; callers check it is declared
	}
	return ""
}

// ValidRemoteName refuses names git could not use as a remote.
func ValidRemoteName(remote string) error {
	if remote == "" || strings.HasPrefix(remote, "-") || RefName(TrackingPrefix+remote+"/x").Validate() != nil {
		return refusal.New(refusal.MissingFact, "name a remote listed by git remote",
			"%q is not a remote name", remote)
	}
	return nil
}

// gitEnvExact and gitEnvPrefixes are what git may need from the caller's
// environment: finding programs and the user's configuration, SSH agents and
// askpass helpers, proxies and certificates, and git's own tracing.
var (
	gitEnvExact = map[string]bool{
		"HOME": true, "PATH": true, "USER": true, "LOGNAME": true, "TMPDIR": true, "TERM": true,
		"DISPLAY": true, "WAYLAND_DISPLAY": true, "XDG_CONFIG_HOME": true, "XDG_RUNTIME_DIR": true,
		"SSH_AUTH_SOCK": true, "SSH_AGENT_PID": true, "SSH_ASKPASS": true, "SSH_ASKPASS_REQUIRE": true,
		"GIT_SSH": true, "GIT_SSH_COMMAND": true, "GIT_SSH_VARIANT": true, "GIT_ASKPASS": true,
		"GIT_TERMINAL_PROMPT": true, "GIT_EXEC_PATH": true, "GIT_PROXY_COMMAND": true,
		"GIT_ALLOW_PROTOCOL": true, "GIT_PROTOCOL_FROM_USER": true,
		"GIT_CONFIG_NOSYSTEM": true, "GIT_CONFIG_GLOBAL": true, "GIT_CONFIG_SYSTEM": true,
		"GIT_CONFIG_PARAMETERS": true, "GIT_CONFIG_COUNT": true,
		"GIT_SSL_NO_VERIFY": true, "GIT_SSL_CAINFO": true, "GIT_SSL_CAPATH": true,
		"GIT_SSL_CERT": true, "GIT_SSL_KEY": true, "GIT_HTTP_USER_AGENT": true,
		"SSL_CERT_FILE": true, "SSL_CERT_DIR": true, "CURL_CA_BUNDLE": true, "KRB5CCNAME": true,
		"http_proxy": true, "https_proxy": true, "HTTP_PROXY": true, "HTTPS_PROXY": true,
		"no_proxy": true, "NO_PROXY": true, "all_proxy": true, "ALL_PROXY": true,
		"SYSTEMROOT": true,
	}
	gitEnvPrefixes = []string{"GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_", "GIT_TRACE"}
)

// GitEnv filters environ down to what git needs for transport and
// credentials. Everything that would point git at another repository
// (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE, GIT_OBJECT_DIRECTORY, …) is
// dropped; the repository is always named explicitly. LC_ALL=C keeps git's
// messages parseable.
func GitEnv(environ []string) []string {
	out := []string{}
	for _, kv := range environ {
		k, _, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		keep := gitEnvExact[k]
		for _, p := range gitEnvPrefixes {
			keep = keep || strings.HasPrefix(k, p)
		}
		if keep {
			out = append(out, kv)
		}
	}
	return append(out, "LC_ALL=C", "LANGUAGE=C")
}

// GitError is a git command that failed; Stderr is what git said.
type GitError struct {
	Args   []string
	Code   int
	Stderr string
}

func (e *GitError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = "no message"
	}
	return fmt.Sprintf("git %s: exit %d: %s", strings.Join(e.Args, " "), e.Code, msg)
}

// git runs the git binary on this repository with a filtered environment.
func (s *Store) git(ctx context.Context, o SyncOptions, args ...string) ([]byte, error) {
	full := append([]string{"--git-dir=" + s.loc.GitDir}, args...)
	cmd := exec.CommandContext(ctx, o.GitPath, full...)
	cmd.Dir = s.loc.GitDir
	if s.loc.WorkTree != "" {
		cmd.Dir = s.loc.WorkTree
	}
	cmd.Env = GitEnv(o.Environ)
	if o.stdin != "" {
		cmd.Stdin = strings.NewReader(o.stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		code := -1
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else {
			return nil, fmt.Errorf("run git %s: %w", strings.Join(args, " "), err)
		}
		return stdout.Bytes(), &GitError{Args: args, Code: code, Stderr: stderr.String()}
	}
	return stdout.Bytes(), nil
}

// GitConfig returns every value of key as git itself reads it (all scopes,
// includes and conditional includes), or nil when it is unset. Callers that
// parse configuration in process fall back to it for what they cannot
// evaluate, such as includeIf.
func (s *Store) GitConfig(ctx context.Context, key string, o SyncOptions) ([]string, error) {
	o.fill()
	out, err := s.git(ctx, o, "config", "--get-all", key)
	var ge *GitError
	if errors.As(err, &ge) && ge.Code == 1 {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return strings.Split(strings.TrimRight(string(out), "\n"), "\n"), nil
}

func (s *Store) checkRemote(ctx context.Context, remote string, o SyncOptions) error {
	if err := ValidRemoteName(remote); err != nil {
		return err
	}
	urls, err := s.GitConfig(ctx, "remote."+remote+".url", o)
	if err != nil {
		return err
	}
	if len(urls) == 0 {
		return refusal.New(refusal.MissingFact, "add it with git remote add "+remote+" URL, or name a remote listed by git remote -v",
			"there is no remote named %q", remote)
	}
	return nil
}

// SetupRemote adds FetchRefspecs to remote.<remote>.fetch (each once), so
// that a plain `git fetch` brings nwdes refs and notes into the tracking
// namespace. It never writes remote.<remote>.push: a bare `git push` would
// then push only what that lists. It warns about fetch refspecs already
// configured that would force the remote's values onto local nwdes refs or
// notes, which drops local records not yet pushed.
func (s *Store) SetupRemote(ctx context.Context, remote string, o SyncOptions) (*RemoteSetup, error) {
	o.fill()
	if err := s.checkRemote(ctx, remote, o); err != nil {
		return nil, err
	}
	have, err := s.GitConfig(ctx, "remote."+remote+".fetch", o)
	if err != nil {
		return nil, err
	}
	res := &RemoteSetup{Remote: remote, Added: []string{}, Present: []string{}, Warnings: []string{}}
	for _, spec := range have {
		if clobbersLocal(spec) {
			res.Warnings = append(res.Warnings, fmt.Sprintf(
				"remote.%s.fetch %q overwrites local nwdes refs or notes on every fetch, dropping records not yet pushed; remove it with: git config --unset remote.%s.fetch '%s'",
				remote, spec, remote, regexpQuote(spec)))
		}
	}
	for _, spec := range FetchRefspecs(remote, s.opts.Registry.NotesRefs()...) {
		if slices.Contains(have, spec) {
			res.Present = append(res.Present, spec)
			continue
		}
		if _, err := s.git(ctx, o, "config", "--add", "remote."+remote+".fetch", spec); err != nil {
			return nil, err
		}
		res.Added = append(res.Added, spec)
	}
	return res, nil
}

func regexpQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `.`, `\.`, `*`, `\*`, `+`, `\+`, `^`, `\^`, `$`, `\$`, `[`, `\[`, `]`, `\]`, `?`, `\?`, `(`, `\(`, `)`, `\)`, `|`, `\|`, `{`, `\{`, `}`, `\}`)
	return r.Replace(s)
}

// clobbersLocal reports whether a fetch refspec writes onto refs/nwdes/ or
// refs/notes/nwdes (negative refspecs write nothing).
func clobbersLocal(spec string) bool {
	spec = strings.TrimPrefix(spec, "+")
	if strings.HasPrefix(spec, "^") {
		return false
	}
	_, dst, ok := strings.Cut(spec, ":")
	if !ok || dst == "" {
		return false
	}
	covers := func(target string) bool {
		if i := strings.IndexByte(dst, '*'); i >= 0 {
			prefix := dst[:i]
			return strings.HasPrefix(target, prefix) || strings.HasPrefix(prefix, target)
		}
		return dst == target || strings.HasPrefix(dst, target+"/")
	}
	return covers("refs/nwdes/") || covers("refs/notes/nwdes")
}

// Fetch brings the remote's nwdes refs and notes into the tracking
// namespace and merges each into the local ref (see MergeInto). Local refs
// the remote lacks are left alone.
func (s *Store) Fetch(ctx context.Context, remote string, o SyncOptions) (*SyncReport, error) {
	o.fill()
	if err := s.checkRemote(ctx, remote, o); err != nil {
		return nil, err
	}
	merged, err := s.fetchAndMerge(ctx, remote, o)
	if err != nil {
		return nil, err
	}
	return &SyncReport{Remote: remote, Merged: merged, Pushed: []RefSync{}, Attempts: 1}, nil
}

func (s *Store) fetchAndMerge(ctx context.Context, remote string, o SyncOptions) ([]RefSync, error) {
	args := append([]string{"fetch", "--quiet", "--no-tags", "--prune", "--no-write-fetch-head",
		"--no-recurse-submodules", remote}, FetchRefspecs(remote, s.opts.Registry.NotesRefs()...)...)
	if _, err := s.fetchGit(ctx, remote, o, args...); err != nil {
		return nil, err
	}
	if err := s.fetchMissing(ctx, remote, o); err != nil {
		return nil, err
	}
	merged, err := s.MergeTracking(ctx, remote, o)
	if err != nil {
		return nil, err
	}
	if o.AfterMerge != nil {
		if err := o.AfterMerge(ctx); err != nil {
			return nil, fmt.Errorf("after merging %s: %w", remote, err)
		}
	}
	return merged, nil
}

// fetchGit runs a git fetch of remote. A fetch that failed only because
// another process of this clone moved one of its tracking refs meanwhile
// (git's "cannot lock ref 'refs/nwdes-remotes/…'": a local lock race, not
// the network) is run again a few times, then refused LockHeld.
func (s *Store) fetchGit(ctx context.Context, remote string, o SyncOptions, args ...string) ([]byte, error) {
	wait := 20 * time.Millisecond
	for attempt := 1; ; attempt++ {
		out, err := s.git(ctx, o, args...)
		if err == nil || !localLockRace(err) || ctx.Err() != nil {
			return out, transportRefusal("fetch", remote, err)
		}
		if attempt >= o.MaxAttempts {
			var ge *GitError
			errors.As(err, &ge)
			return nil, refusal.New(refusal.LockHeld,
				"another git or nwdes process of this clone kept fetching "+remote+" at the same time; run the command again",
				"git fetch %s lost a local lock race %d times (this clone's tracking refs moved under it; not the network): %s",
				remote, attempt, text.OneLine(ge.Stderr)).Wrap(errors.Join(ErrLocked, err))
		}
		s.opts.Sleep(jitter(wait))
		wait *= 2
	}
}

// localLockRace reports a git fetch that failed because one of this
// clone's tracking refs was locked or moved by another process while the
// fetch updated it (and for no other reason: the transport failing is
// fatal to git).
func localLockRace(err error) bool {
	var ge *GitError
	return errors.As(err, &ge) && strings.Contains(ge.Stderr, "cannot lock ref '"+TrackingPrefix) &&
		!strings.Contains(ge.Stderr, "fatal:")
}

func transportRefusal(verb, remote string, err error) error {
	var ge *GitError
	if !errors.As(err, &ge) {
		return err
	}
	return refusal.NewUnavailable(refusal.RemoteFailed,
		fmt.Sprintf("check that git %s %s works (network, credentials, URL), then run the command again", verb, remote),
		"git %s %s failed (exit %d): %s", verb, remote, ge.Code, text.OneLine(ge.Stderr)).Wrap(err)
}

// MergeTracking brings every tracking ref of remote into its local ref,
// each by its declared policy, without any transport: what an ordinary
// `git fetch` brought (after SetupRemote) becomes visible to nwdes. A
// merge ref is merged (MergeInto), a fast-forward ref fast-forwarded, a
// swap ref mirrored (and deleted when the remote no longer has it); a ref
// no kind declares is reported skipped and left alone. A fast-forward ref
// already diverged refuses the call with ChainDiverged before any ref
// moves; one that diverges while the call runs refuses at that ref, after
// the refs before it (each ref moves whole, on its own).
func (s *Store) MergeTracking(ctx context.Context, remote string, o SyncOptions) ([]RefSync, error) {
	o.fill()
	if err := ValidRemoteName(remote); err != nil {
		return nil, err
	}
	tracked, err := s.refs.list(TrackingPrefix + remote + "/")
	if err != nil {
		return nil, err
	}
	type job struct {
		local, tracking RefName
		spec            RefSpec
		declared        bool
	}
	var jobs []job
	for _, t := range SortedNames(tracked) {
		local := localOf(remote, t)
		if local == "" {
			continue
		}
		spec, ok := s.opts.Registry.Ref(local)
		j := job{local: local, tracking: t, spec: spec, declared: ok}
		if ok && spec.Policy == PolicyFastForward {
			// Refuse before anything moves: a diverged chain is never merged.
			if err := s.checkForward(local, tracked[t]); err != nil {
				return nil, err
			}
		}
		jobs = append(jobs, j)
	}
	out := []RefSync{}
	for _, j := range jobs {
		theirs := tracked[j.tracking]
		var rs RefSync
		var err error
		switch {
		case !j.declared:
			cur, rerr := s.refs.read(j.local)
			if rerr != nil {
				return nil, rerr
			}
			rs = RefSync{Ref: j.local, Action: SyncSkipped, Before: hexOrEmpty(cur), After: hexOrEmpty(cur), Remote: hexOrEmpty(theirs)}
		case j.spec.Policy == PolicyMerge, j.spec.Policy == PolicyFastForward:
			rs, err = s.bringIn(ctx, j.local, j.spec.Policy, theirs, remote)
		case j.spec.Policy == PolicySwap:
			rs, err = s.mirror(j.local, theirs)
		default:
			// A local ref is never under refs/nwdes/ (DeclareRef refuses
			// it), so no tracking ref maps to one.
			err = fmt.Errorf("%s is declared %s but was fetched", j.local, j.spec.Policy)
		}
		if err != nil {
			return nil, err
		}
		rs.Policy = j.spec.Policy
		out = append(out, rs)
	}
	// A swap ref the remote no longer has (a released lease: fetch
	// --prune removed its tracking ref) is deleted here too.
	locals, err := s.refs.list("refs/nwdes/")
	if err != nil {
		return nil, err
	}
	for _, ref := range SortedNames(locals) {
		spec, ok := s.opts.Registry.Ref(ref)
		if !ok || spec.Policy != PolicySwap {
			continue
		}
		if _, seen := tracked[TrackingRef(remote, ref)]; seen {
			continue
		}
		rs, err := s.mirror(ref, plumbing.ZeroHash)
		if err != nil {
			return nil, err
		}
		rs.Policy = spec.Policy
		out = append(out, rs)
	}
	return out, nil
}

// checkForward refuses when ref and theirs have diverged: each holds
// commits the other lacks.
func (s *Store) checkForward(ref RefName, theirs plumbing.Hash) error {
	ours, err := s.refs.read(ref)
	if err != nil || ours.IsZero() || theirs.IsZero() || ours == theirs {
		return err
	}
	behind, err := s.isAncestor(ours, theirs)
	if err != nil || behind {
		return err
	}
	ahead, err := s.isAncestor(theirs, ours)
	if err != nil || ahead {
		return err
	}
	return diverged(ref, ours, theirs)
}

func diverged(ref RefName, ours, theirs plumbing.Hash) error {
	return refusal.New(refusal.ChainDiverged,
		"find which chain is right (git log both tips); a ledger is never merged: reset the wrong side to the other (git update-ref) after keeping what it holds",
		"%s has diverged: local %s and remote %s each hold commits the other lacks", ref, ours.String()[:12], theirs.String()[:12])
}

// mirror sets a swap ref to the remote's value (zero: the remote has no
// such ref, and the local one is deleted): the remote is where such a ref
// is decided, and the local ref is only what was last seen there.
func (s *Store) mirror(ref RefName, theirs plumbing.Hash) (RefSync, error) {
	for attempt := 1; ; attempt++ {
		ours, err := s.refs.read(ref)
		if err != nil {
			return RefSync{}, err
		}
		rs := RefSync{Ref: ref, Action: SyncUpToDate, Before: hexOrEmpty(ours), After: hexOrEmpty(ours), Remote: hexOrEmpty(theirs)}
		if ours == theirs {
			return rs, nil
		}
		err = s.swap(ref, ours, theirs)
		if err == nil {
			rs.Action, rs.After = SyncMirrored, hexOrEmpty(theirs)
			return rs, nil
		}
		if !errors.Is(err, ErrConflict) || attempt >= s.opts.MaxAttempts {
			return RefSync{}, err
		}
		s.opts.Sleep(jitter(time.Millisecond))
	}
}

// MergeInto merges commit theirs into the local ref: it creates the ref when
// absent, fast-forwards it when it is an ancestor of theirs, leaves it when
// theirs is already contained, and otherwise writes a merge commit (parents:
// local tip, theirs) whose tree is the three-way merge of both over their
// merge base. The ref moves by compare-and-swap; when another writer moved
// it meanwhile, the merge is recomputed (bounded by the store's
// MaxAttempts).
func (s *Store) MergeInto(ctx context.Context, ref RefName, theirs oid.ID, from string, o SyncOptions) (RefSync, error) {
	o.fill()
	if err := ref.Validate(); err != nil {
		return RefSync{}, err
	}
	spec, err := s.opts.Registry.refFor(ref)
	if err != nil {
		return RefSync{}, err
	}
	if spec.Policy != PolicyMerge {
		return RefSync{}, refusal.New(refusal.PolicyRefused, "bring it in with git nwdes fetch, which follows its policy",
			"%s is declared %s: it is never merged", ref, spec.Policy)
	}
	return s.bringIn(ctx, ref, spec.Policy, toHash(theirs), from)
}

// bringIn moves ref towards theirs by its policy (merge or fast-forward),
// by compare-and-swap, recomputing when another writer moved it meanwhile
// (bounded by MaxAttempts): created when absent, fast-forwarded when
// behind, left when theirs is contained; otherwise a merge ref gets a merge
// commit and a fast-forward ref is refused (ChainDiverged). On an
// append-only ref, the local tip must pass CheckHistory and every commit
// theirs brings must keep its parents' immutable records (VerifyHistory's
// check): a remote history that drops or changes one is refused
// (HistoryRewritten), never merged.
func (s *Store) bringIn(ctx context.Context, ref RefName, policy SyncPolicy, theirs plumbing.Hash, from string) (RefSync, error) {
	spec, err := s.opts.Registry.refFor(ref)
	if err != nil {
		return RefSync{}, err
	}
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return RefSync{}, err
		}
		ours, err := s.refs.read(ref)
		if err != nil {
			return RefSync{}, err
		}
		cp, err := s.checkHistory(ref, spec, ours)
		if err != nil {
			return RefSync{}, err
		}
		rs := RefSync{Ref: ref, Before: hexOrEmpty(ours), After: hexOrEmpty(ours), Remote: hexOrEmpty(theirs)}
		var next plumbing.Hash
		switch {
		case theirs.IsZero() || ours == theirs:
			rs.Action = SyncUpToDate
			return rs, nil
		case ours.IsZero():
			rs.Action, next = SyncCreated, theirs
		default:
			base, err := s.mergeBase(ours, theirs)
			if err != nil {
				return RefSync{}, err
			}
			switch base {
			case theirs:
				rs.Action = SyncAhead
				return rs, nil
			case ours:
				rs.Action, next = SyncFastForward, theirs
			default:
				if policy != PolicyMerge {
					return RefSync{}, diverged(ref, ours, theirs)
				}
				m := &merger{s: s, ref: ref, resolve: s.opts.Registry.resolve}
				next, err = m.commit(ours, theirs, base, fmt.Sprintf("merge %s from %s", ref, from))
				if err != nil {
					return RefSync{}, err
				}
				rs.Action, rs.Resolved = SyncMerged, m.resolved
			}
		}
		if appendOnly(spec) {
			// theirs' own commits, then the merge commit written here.
			if err := s.verifyIncoming(ref, spec, []plumbing.Hash{ours}, theirs, from); err != nil {
				return RefSync{}, err
			}
			if next != theirs {
				if err := s.verifyIncoming(ref, spec, []plumbing.Hash{ours, theirs}, next, from); err != nil {
					return RefSync{}, err
				}
			}
		}
		err = s.swap(ref, ours, next)
		if err == nil {
			if appendOnly(spec) {
				s.advanceCheckpoint(ref, cp, next)
			}
			rs.After = next.String()
			return rs, nil
		}
		if !errors.Is(err, ErrConflict) {
			return RefSync{}, err
		}
		if attempt >= s.opts.MaxAttempts {
			return RefSync{}, refusal.New(refusal.Conflict, "too many writers at once; try again",
				"%s kept moving while merging %s: gave up after %d attempts", ref, from, attempt).Wrap(err)
		}
		s.opts.Sleep(jitter(time.Millisecond))
	}
}

func hexOrEmpty(h plumbing.Hash) string {
	if h.IsZero() {
		return ""
	}
	return h.String()
}

// mergeBase returns a best common ancestor of a and b, zero when the two
// histories share nothing (as when two clones each created a ref). After
// criss-cross merges any best base serves: the merge is a union with
// deterministic rules, so the choice cannot lose a record.
func (s *Store) mergeBase(a, b plumbing.Hash) (plumbing.Hash, error) {
	best, err := s.mergeBases(a, b)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("merge base of %s and %s: %w", a, b, err)
	}
	if len(best) == 0 {
		return plumbing.ZeroHash, nil
	}
	return best[0], nil
}

// Push sends every local nwdes ref and the notes ref to remote without ever
// overwriting a remote update it has not seen: each round fetches and
// merges (so local contains the remote's value), then runs one atomic
// `git push --no-verify` whose every ref carries --force-with-lease with the
// remote value just fetched. When the remote moved in between, the lease
// fails, nothing is written, and the round repeats (bounded by MaxAttempts,
// with jittered backoff). --no-verify keeps the user's pre-push hooks out of
// nwdes's own pushes.
func (s *Store) Push(ctx context.Context, remote string, o SyncOptions) (*SyncReport, error) {
	o.fill()
	if err := s.checkRemote(ctx, remote, o); err != nil {
		return nil, err
	}
	wait := 20 * time.Millisecond
	var lastErr error
	for attempt := 1; attempt <= o.MaxAttempts; attempt++ {
		merged, err := s.fetchAndMerge(ctx, remote, o)
		if err != nil {
			return nil, err
		}
		rep := &SyncReport{Remote: remote, Merged: merged, Pushed: []RefSync{}, Attempts: attempt}
		locals, err := s.refs.list("refs/nwdes/")
		if err != nil {
			return nil, err
		}
		for _, n := range append([]RefName{NotesRef}, s.opts.Registry.NotesRefs()...) {
			if h, err := s.refs.read(n); err != nil {
				return nil, err
			} else if !h.IsZero() {
				locals[n] = h
			}
		}
		args := []string{"push", "--no-verify", "--atomic", "--porcelain", "--no-recurse-submodules"}
		var specs []string
		moved := false
		for _, ref := range SortedNames(locals) {
			if spec, ok := s.opts.Registry.Ref(ref); !ok || spec.Policy == PolicySwap || spec.Policy == PolicyLocal {
				// Undeclared refs are not ours to send; swap refs move
				// only by SwapRemote, one ref and one expected value.
				continue
			}
			tracked, err := s.refs.read(TrackingRef(remote, ref))
			if err != nil {
				return nil, err
			}
			if tracked == locals[ref] {
				continue
			}
			// The lease must be a remote value the local ref contains. A
			// plain git fetch between our merge and here moves the tracking
			// ref to a value we never merged; leasing on it would force the
			// push over that update. Merge again instead.
			if !tracked.IsZero() {
				merged, err := s.isAncestor(tracked, locals[ref])
				if err != nil {
					return nil, err
				}
				if !merged {
					moved = true
					break
				}
			}
			args = append(args, "--force-with-lease="+string(ref)+":"+hexOrEmpty(tracked))
			specs = append(specs, locals[ref].String()+":"+string(ref))
			rep.Pushed = append(rep.Pushed, RefSync{Ref: ref, Action: SyncPushed, Before: hexOrEmpty(tracked), After: locals[ref].String(), Remote: hexOrEmpty(tracked)})
		}
		if moved {
			lastErr = fmt.Errorf("a tracking ref of %s moved during the merge", remote)
			continue
		}
		if len(specs) == 0 {
			return rep, nil
		}
		args = append(append(args, remote), specs...)
		out, err := s.git(ctx, o, args...)
		if err == nil {
			for _, p := range rep.Pushed {
				// What the remote now holds; a failure here only delays
				// the next fetch's knowledge of it.
				t := TrackingRef(remote, p.Ref)
				if cur, err := s.refs.read(t); err == nil {
					_ = s.refs.cas(t, cur, plumbing.NewHash(p.After))
				}
			}
			return rep, nil
		}
		if !pushRaced(out) {
			return nil, transportRefusal("push", remote, err)
		}
		lastErr = err
		s.opts.Sleep(jitter(wait))
		if wait < 500*time.Millisecond {
			wait *= 2
		}
	}
	return nil, refusal.New(refusal.Conflict, "the remote keeps moving, or its refs cannot be updated; run git nwdes push again",
		"%s kept rejecting the push of nwdes refs: gave up after %d attempts (last: %v)", remote, o.MaxAttempts, text.OneLine(fmt.Sprint(lastErr))).Wrap(lastErr)
}

// pushRaced reports whether git's porcelain output shows a push rejected
// only because the remote moved (a failed lease, a non-fast-forward, the
// remote's ref update losing to a concurrent push, or the rest of an atomic
// push failing with it), which another round repairs.
func pushRaced(porcelain []byte) bool {
	raced := false
	for _, line := range strings.Split(string(porcelain), "\n") {
		f := strings.SplitN(line, "\t", 3)
		if len(f) < 3 || f[0] != "!" {
			continue
		}
		switch {
		case strings.Contains(f[2], "(stale info)"), strings.Contains(f[2], "(fetch first)"),
			strings.Contains(f[2], "(non-fast-forward)"), strings.Contains(f[2], "(atomic push failed)"),
			strings.Contains(f[2], "(already exists)"),
			// The remote's own ref update lost a race with another push
			// (its lock, or the old value under it).
			strings.Contains(f[2], "(atomic transaction failed)"), strings.Contains(f[2], "(failed to update ref)"),
			strings.Contains(f[2], "(cannot lock ref"):
			raced = true
		default:
			return false
		}
	}
	return raced
}

// DefaultResolve keeps the record whose canonical record.json sorts last
// byte-wise, then the one whose payloads (by name) sort last. It knows
// nothing of kinds: packages whose records are rewritten in place (an
// index, a draft) give a Resolver that knows which one is newer.
func DefaultResolve(_ RefName, _ string, ours, theirs *Record) (Side, error) {
	eo, err := ours.encode()
	if err != nil {
		return Ours, err
	}
	et, err := theirs.encode()
	if err != nil {
		return Ours, err
	}
	c := bytes.Compare(eo, et)
	if c == 0 {
		c = comparePayloads(ours.Payloads, theirs.Payloads)
	}
	if c < 0 {
		return Theirs, nil
	}
	return Ours, nil
}

func comparePayloads(a, b map[string][]byte) int {
	names := map[string][]byte{}
	maps.Copy(names, a)
	maps.Copy(names, b)
	for _, n := range slices.Sorted(maps.Keys(names)) {
		x, inA := a[n]
		y, inB := b[n]
		switch {
		case inA && !inB:
			return 1
		case inB && !inA:
			return -1
		}
		if c := bytes.Compare(x, y); c != 0 {
			return c
		}
	}
	return 0
}

// merger merges one ref's commits: the trees by treemerge's policy, with
// the store's objects and its record rule.
type merger struct {
	s        *Store
	ref      RefName
	resolve  Resolver
	resolved []string
}

func (m *merger) commit(ours, theirs, base plumbing.Hash, message string) (plumbing.Hash, error) {
	treeOf := func(h plumbing.Hash) (plumbing.Hash, error) {
		if h.IsZero() {
			return plumbing.ZeroHash, nil
		}
		c, err := m.s.readCommit(h)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		return c.Tree, nil
	}
	bt, err := treeOf(base)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	ot, err := treeOf(ours)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	tt, err := treeOf(theirs)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	// Records are decided whole, by their kind's rule; notes both sides
	// changed keep both texts.
	notes := m.s.opts.Registry.isNotes(m.ref)
	rules := treemerge.Rules{Notes: notes, Decide: m.record}
	if spec, ok := m.s.opts.Registry.Ref(m.ref); ok && notes {
		rules.NoteMerge = spec.MergeNote
	}
	if !notes {
		rules.Unit = isRecordDir
	}
	tree, resolved, err := treemerge.Merge(mergeObjects{m.s}, bt, ot, tt, rules)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	m.resolved = resolved
	if tree.IsZero() {
		if tree, err = m.s.obj.write(plumbing.TreeObject, nil); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	return m.s.obj.write(plumbing.CommitObject,
		encodeCommit(tree, []plumbing.Hash{ours, theirs}, Identity, m.s.opts.Now(), message))
}

// mergeObjects gives treemerge the store's objects.
type mergeObjects struct{ s *Store }

func (x mergeObjects) Tree(h plumbing.Hash) (map[string]treemerge.Entry, error) {
	es, err := x.s.treeEntries(h)
	if err != nil {
		return nil, err
	}
	out := make(map[string]treemerge.Entry, len(es))
	for name, e := range es {
		if what := recordModeProblem(e.mode); what != "" {
			// A merge would carry it into a tree every reader refuses.
			return nil, refusal.NewUnreadable(refusal.RefUnreadable, "restore the ref from a good clone, then fetch again",
				"tree %s holds %q with %s", h.String()[:12], name, what)
		}
		out[name] = treemerge.Entry{Mode: e.mode, Hash: e.hash}
	}
	return out, nil
}

func (x mergeObjects) WriteTree(entries map[string]treemerge.Entry) (plumbing.Hash, error) {
	es := make([]treeEntry, 0, len(entries))
	for name, e := range entries {
		es = append(es, treeEntry{name: name, mode: e.Mode, hash: e.Hash})
	}
	return x.s.obj.write(plumbing.TreeObject, encodeTree(es))
}

func (x mergeObjects) Blob(h plumbing.Hash) ([]byte, error) {
	_, b, err := x.s.obj.read(h)
	return b, err
}

func (x mergeObjects) WriteBlob(data []byte) (plumbing.Hash, error) {
	return x.s.obj.write(plumbing.BlobObject, data)
}

// isRecordDir reports a record directory: one holding record.json.
func isRecordDir(es map[string]treemerge.Entry) bool {
	e, ok := es["record.json"]
	return ok && !e.IsTree()
}

// record decides a record directory both sides changed, by its kind's
// merge rule (the registry's); an unreadable record cannot be judged by
// kind, and the byte rule decides the same way on both clones.
func (m *merger) record(path string, ours, theirs plumbing.Hash, o, t map[string]treemerge.Entry) (plumbing.Hash, error) {
	rawO, ro, errO := m.readRecord(o)
	rawT, rt, errT := m.readRecord(t)
	if errO != nil || errT != nil {
		c := bytes.Compare(rawO, rawT)
		if c == 0 {
			c = bytes.Compare(ours[:], theirs[:])
		}
		if c < 0 {
			return theirs, nil
		}
		return ours, nil
	}
	side, err := m.resolve(m.ref, path, ro, rt)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("merge %s in %s: %w", path, m.ref, err)
	}
	if side == Theirs {
		return theirs, nil
	}
	return ours, nil
}

// readRecord reads a record directory (record.json and payload/), returning
// record.json's bytes even when the record does not decode.
func (m *merger) readRecord(es map[string]treemerge.Entry) ([]byte, *Record, error) {
	_, raw, err := m.s.obj.read(es["record.json"].Hash)
	if err != nil {
		return nil, nil, err
	}
	r, err := decodeRecord(raw)
	if err != nil {
		return raw, nil, err
	}
	if p, ok := es["payload"]; ok && p.IsTree() {
		pes, err := mergeObjects{m.s}.Tree(p.Hash)
		if err != nil {
			return raw, nil, err
		}
		r.Payloads = map[string][]byte{}
		for name, e := range pes {
			_, data, err := m.s.obj.read(e.Hash)
			if err != nil {
				return raw, nil, err
			}
			r.Payloads[name] = data
		}
	}
	return raw, r, nil
}

// fetchMissing brings, in a partial clone, every object the fetched nwdes
// refs reach and the filter left out (records are blobs, and a clone made
// with --filter=blob:none fetches none of them, one made with
// --filter=tree:0 not even their trees): asked for all at once, in rounds
// (fetchMissingOf), as git asks its promisor remote for objects it lacks.
// Records are then read whole, never taken for absent. A full clone has
// nothing missing and pays one rev-list.
func (s *Store) fetchMissing(ctx context.Context, remote string, o SyncOptions) error {
	tracked, err := s.refs.list(TrackingPrefix + remote + "/")
	if err != nil || len(tracked) == 0 {
		return err
	}
	var tips []plumbing.Hash
	for _, name := range SortedNames(tracked) {
		if spec, ok := s.opts.Registry.Ref(localOf(remote, name)); ok && spec.Commit {
			// A commit ref's history is a product's: git fetches what
			// a checkout of it lacks, and listing it all here would
			// walk the whole history at every fetch.
			continue
		}
		tips = append(tips, tracked[name])
	}
	if len(tips) == 0 {
		return nil
	}
	return s.fetchMissingOf(ctx, remote, tips, true, o)
}

// fetchMissingOf asks remote for every object the tips reach that this
// repository lacks, in rounds: each lists what is missing (rev-list
// --missing=print, which never fetches) and asks for it as git's lazy
// fetch does. A tree the filter left out (--filter=tree:0) comes with its
// subtrees and without its blobs, which the next round asks for; a round
// that finds nothing missing ends it. What is still missing after
// maxMissingRounds is refused by name.
// With history false only the tips' own trees are listed, not their
// ancestors'.
func (s *Store) fetchMissingOf(ctx context.Context, remote string, tips []plumbing.Hash, history bool, o SyncOptions) error {
	var missing []plumbing.Hash
	for round := 0; ; round++ {
		var err error
		if missing, err = s.listMissing(ctx, tips, history, o); err != nil || len(missing) == 0 {
			return err
		}
		if round == maxMissingRounds {
			break
		}
		if err := s.fetchObjects(ctx, remote, missing, o); err != nil {
			return transportRefusal("fetch the records' objects from", remote, err)
		}
	}
	return refusal.NewUnreadable(refusal.ObjectMissing,
		fmt.Sprintf("check that %s serves objects by id (uploadpack.allowAnySHA1InWant, uploadpack.allowFilter), or fetch them whole with git fetch --refetch %s", remote, remote),
		"%d objects are still missing after %d requests to %s, among them %s", len(missing), maxMissingRounds, remote, missing[0]).Wrap(ErrObjectMissing)
}

// maxMissingRounds bounds fetchMissingOf's rounds: a blob:none clone
// needs one, a tree:0 clone two (trees, then their blobs).
const maxMissingRounds = 4

// listMissing returns the objects the tips reach (only their own trees
// when history is false) that this repository lacks.
func (s *Store) listMissing(ctx context.Context, tips []plumbing.Hash, history bool, o SyncOptions) ([]plumbing.Hash, error) {
	args := []string{"rev-list", "--objects", "--missing=print"}
	if !history {
		args = append(args, "--no-walk")
	}
	for _, t := range tips {
		args = append(args, t.String())
	}
	out, err := s.git(ctx, o, args...)
	if err != nil {
		return nil, fmt.Errorf("list the missing objects of %d commits: %w", len(tips), err)
	}
	var missing []plumbing.Hash
	for _, line := range strings.Split(string(out), "\n") {
		if id, ok := strings.CutPrefix(line, "?"); ok && isHex40(id) {
			missing = append(missing, plumbing.NewHash(id))
		}
	}
	return missing, nil
}

// MaxLazyFetch bounds the object ids one request to a promisor remote
// names: a longer list is asked for in several requests.
const MaxLazyFetch = 1000

// fetchObjects asks remote for ids, MaxLazyFetch at a time, with the
// command git 2.39's lazy fetch runs (promisor-remote.c, fetch_objects):
// no negotiation (the remote sends each object asked for even when this
// clone holds its ancestors), no tags, no FETCH_HEAD, no submodules, and
// the blob:none filter, so that a tree comes without its blobs and the
// pack is kept as a promisor pack.
func (s *Store) fetchObjects(ctx context.Context, remote string, ids []plumbing.Hash, o SyncOptions) error {
	for len(ids) > 0 {
		n := min(len(ids), MaxLazyFetch)
		var in strings.Builder
		for _, h := range ids[:n] {
			in.WriteString(h.String())
			in.WriteByte('\n')
		}
		o2 := o
		o2.stdin = in.String()
		if _, err := s.git(ctx, o2, "-c", "fetch.negotiationAlgorithm=noop", "fetch", remote, "--no-tags",
			"--no-write-fetch-head", "--recurse-submodules=no", "--filter=blob:none", "--stdin"); err != nil {
			return err
		}
		ids = ids[n:]
	}
	return nil
}

// PartialClone tells a store that its repository is a partial clone, so
// that an object read misses is asked for from the promisor remotes, as
// git's own reads do, rather than refused at once (ObjectMissing).
type PartialClone struct {
	// Remotes are the promisor remotes in the order git asks them
	// (gitrepo.Config.PromisorRemotes); none: not a partial clone.
	Remotes []string
	// Environ is the caller's environment, passed to git through GitEnv.
	// GIT_QUARANTINE_PATH (a server hook's quarantine) or
	// GIT_NO_LAZY_FETCH set true in it turns lazy fetching off.
	Environ []string
	// GitPath is the git binary; "git" when empty.
	GitPath string
}

// lazyState remembers, per store, the objects a lazy fetch was asked for
// and did not bring, so that a missing object costs one request per
// process, not one per read.
type lazyState struct {
	mu     sync.Mutex
	failed map[plumbing.Hash]error
}

// lazyOff says why this store never fetches lazily ("" when it does): a
// server hook's quarantine (objects read from GIT_OBJECT_DIRECTORY, or
// GIT_QUARANTINE_PATH set), where a fetch would write into the
// repository being pushed to, and GIT_NO_LAZY_FETCH (git 2.44's switch;
// git 2.39 has none, and nwdes honours it the same way).
func (s *Store) lazyOff() string {
	env := s.opts.PartialClone.Environ
	switch {
	case s.loc.ObjectDir != "" || envValue(env, "GIT_QUARANTINE_PATH") != "":
		return "nwdes never fetches inside a server hook's quarantine"
	case envTrue(envValue(env, "GIT_NO_LAZY_FETCH")):
		return "GIT_NO_LAZY_FETCH is set"
	}
	return ""
}

func envValue(environ []string, key string) string {
	v := ""
	for _, kv := range environ {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

func envTrue(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// lazyFetch asks the promisor remotes, in order, for an object a read did
// not find, as git's promisor_remote_get_direct does: the next remote is
// asked only when one fails. It returns nil when the object was fetched,
// or why it was not (an error whose text says what was tried); an
// object asked for once is not asked for again by this store.
func (s *Store) lazyFetch(h plumbing.Hash) error {
	pc := s.opts.PartialClone
	s.lazy.mu.Lock()
	defer s.lazy.mu.Unlock()
	if err, ok := s.lazy.failed[h]; ok {
		return err
	}
	o := SyncOptions{Environ: pc.Environ, GitPath: pc.GitPath}
	o.fill()
	var errs []string
	for _, r := range pc.Remotes {
		err := s.fetchObjects(context.Background(), r, []plumbing.Hash{h}, o)
		if err == nil {
			if db, rerr := s.obj.reader(); rerr == nil {
				if ok, _ := db.Has(h); ok {
					return nil
				}
			}
			errs = append(errs, fmt.Sprintf("promisor remote %s did not send it", r))
			continue
		}
		var ge *GitError
		if errors.As(err, &ge) {
			errs = append(errs, fmt.Sprintf("git fetch %s of it failed (exit %d): %s", r, ge.Code, text.OneLine(ge.Stderr)))
		} else {
			errs = append(errs, fmt.Sprintf("git fetch %s of it failed: %v", r, err))
		}
	}
	err := errors.New(strings.Join(errs, "; "))
	if s.lazy.failed == nil {
		s.lazy.failed = map[plumbing.Hash]error{}
	}
	s.lazy.failed[h] = err
	return err
}

// onMissing is what the store's reads do with an object they did not
// find (objects.missing): in a partial clone where lazy fetching is on,
// fetch it and read again; otherwise refuse, saying what was tried. The
// refusal returned with retry is the one to give if the read misses
// again.
func (s *Store) onMissing(h plumbing.Hash) (bool, error) {
	if len(s.opts.PartialClone.Remotes) == 0 || s.lazyOff() != "" {
		return false, s.missingObject(h, nil)
	}
	if err := s.lazyFetch(h); err != nil {
		return false, s.missingObject(h, err)
	}
	return true, s.missingObject(h, errors.New("it was fetched, and is still not found"))
}

// missingObject is the refusal for an object this repository lacks, its
// text true to what was tried: in a partial clone, what the promisor
// remotes were asked (or why they were not), and what to run.
func (s *Store) missingObject(h plumbing.Hash, fetchErr error) error {
	pc := s.opts.PartialClone
	remotes := strings.Join(pc.Remotes, ", ")
	var detail, remedy string
	switch off := s.lazyOff(); {
	case len(pc.Remotes) == 0:
		detail = fmt.Sprintf("object %s is not in this repository (a shallow clone, or damage: no remote is a promisor remote to fetch it from)", h)
		remedy = "find the damage with git fsck, or deepen a shallow clone (git fetch --unshallow); then run the command again"
	case off != "":
		detail = fmt.Sprintf("object %s is not in this partial clone, and was not fetched: %s", h, off)
		remedy = fmt.Sprintf("fetch it from the promisor remote as git does (git cat-file -e %s, outside the hook and without GIT_NO_LAZY_FETCH), then run the command again", h)
	default:
		detail = fmt.Sprintf("object %s is not in this partial clone, and nwdes could not fetch it from the promisor remote (%s): %v", h, remotes, fetchErr)
		remedy = fmt.Sprintf("check that git fetch %s works (network, credentials, and on the remote uploadpack.allowFilter and uploadpack.allowAnySHA1InWant), then run the command again", pc.Remotes[0])
	}
	return refusal.NewUnreadable(refusal.ObjectMissing, remedy, "%s", detail).Wrap(ErrObjectMissing)
}

// FetchMissing brings, in a partial clone, every object the commits reach
// that the clone lacks, from its promisor remotes, in a few requests
// rather than one per object read (a gate exporting a candidate's tree
// reads every blob of it). Outside a partial clone, or where lazy
// fetching is off, it does nothing: the reads that follow refuse by name
// what is missing.
func (s *Store) FetchMissing(ctx context.Context, commits ...oid.ID) error {
	pc := s.opts.PartialClone
	if len(pc.Remotes) == 0 || s.lazyOff() != "" || len(commits) == 0 {
		return nil
	}
	o := SyncOptions{Environ: pc.Environ, GitPath: pc.GitPath}
	o.fill()
	tips := make([]plumbing.Hash, len(commits))
	for i, c := range commits {
		tips[i] = toHash(c)
	}
	var errs []error
	for _, r := range pc.Remotes {
		err := s.fetchMissingOf(ctx, r, tips, false, o)
		if err == nil {
			return nil
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
