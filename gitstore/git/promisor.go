package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"

	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/internal/text"
	"github.com/nwdes/nwdes/refusal"
)

// The git binary is run where git itself is the right tool: transport
// (git fetch and git push, so that users' SSH configuration, credential
// helpers, proxies and URL rewrites apply; gitstore/remote), git config
// where git's own answer is wanted, and in a partial clone git's lazy
// fetch of the objects a read missed (below). Run is the one way it is
// started.

// RunOptions say how Run starts git.
type RunOptions struct {
	// Environ is the caller's environment ("KEY=value"). Only what git
	// needs for transport, SSH, credentials and configuration is passed on
	// (see GitEnv); the library never reads the process environment.
	Environ []string
	// GitPath is the git binary; "git" (looked up on PATH) when empty.
	GitPath string
	// Stdin, when set, is given to the git command.
	Stdin string
	// Stderr, when set, also gets what git writes on stderr as it writes
	// it (a push whose hooks speak to the person who asked for it).
	Stderr io.Writer
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

// Run runs the git binary on this repository with a filtered environment
// (GitEnv). A failure git reports is a *GitError.
func (s *Repo) Run(ctx context.Context, o RunOptions, args ...string) ([]byte, error) {
	if o.GitPath == "" {
		o.GitPath = "git"
	}
	full := append([]string{"--git-dir=" + s.loc.GitDir}, args...)
	cmd := exec.CommandContext(ctx, o.GitPath, full...)
	cmd.Dir = s.loc.GitDir
	if s.loc.WorkTree != "" {
		cmd.Dir = s.loc.WorkTree
	}
	cmd.Env = GitEnv(o.Environ)
	if o.Stdin != "" {
		cmd.Stdin = strings.NewReader(o.Stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if o.Stderr != nil {
		cmd.Stderr = io.MultiWriter(&stderr, o.Stderr)
	}
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

// formatMismatch reports what git 2.39 says when the two sides of a fetch
// or push name objects by different hash functions (SHA-1 and SHA-256).
func formatMismatch(stderr string) bool {
	return strings.Contains(stderr, "mismatched algorithms") ||
		strings.Contains(stderr, "does not support this repository's hash algorithm")
}

// TransportRefusal names a git transport command that failed: a remote of
// another object format than this clone (UnsupportedRepository), or any
// other failure (RemoteFailed, with what git said); other errors are
// returned as they are.
func TransportRefusal(verb, remote string, err error) error {
	return transportRefusal(verb, remote, err)
}

func transportRefusal(verb, remote string, err error) error {
	var ge *GitError
	if !errors.As(err, &ge) {
		return err
	}
	if formatMismatch(ge.Stderr) {
		// Not the network: the two repositories name objects by different
		// hash functions, and no retry changes that.
		return refusal.New(refusal.UnsupportedRepository,
			"sync only clones of one object format (git rev-parse --show-object-format in each); nwdes does not mix SHA-1 and SHA-256 repositories",
			"git %s %s: the remote names its objects by another hash function than this clone (%s)", verb, remote, text.OneLine(ge.Stderr)).Wrap(err)
	}
	return refusal.NewUnavailable(refusal.RemoteFailed,
		fmt.Sprintf("check that git %s %s works (network, credentials, URL), then run the command again", verb, remote),
		"git %s %s failed (exit %d): %s", verb, remote, ge.Code, text.OneLine(ge.Stderr)).Wrap(err)
}

// FetchMissingFrom asks remote for every object the tips reach that this
// repository lacks (only the tips' own trees when history is false), as
// fetchMissingOf does: what a fetch of nwdes refs runs in a partial clone,
// so that records are then read whole, never taken for absent.
func (s *Repo) FetchMissingFrom(ctx context.Context, remote string, tips []oid.ID, history bool, o RunOptions) error {
	hs := tips
	if err := s.check(tips...); err != nil {
		return err
	}
	return s.fetchMissingOf(ctx, remote, hs, history, o)
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
func (s *Repo) fetchMissingOf(ctx context.Context, remote string, tips []oid.ID, history bool, o RunOptions) error {
	var missing []oid.ID
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
func (s *Repo) listMissing(ctx context.Context, tips []oid.ID, history bool, o RunOptions) ([]oid.ID, error) {
	args := []string{"rev-list", "--objects", "--missing=print"}
	if !history {
		args = append(args, "--no-walk")
	}
	for _, t := range tips {
		args = append(args, t.String())
	}
	out, err := s.Run(ctx, o, args...)
	if err != nil {
		return nil, fmt.Errorf("list the missing objects of %d commits: %w", len(tips), err)
	}
	var missing []oid.ID
	for _, line := range strings.Split(string(out), "\n") {
		if hex, ok := strings.CutPrefix(line, "?"); ok {
			if id, ok := parseHex(s.format, hex); ok && !id.IsZero() {
				missing = append(missing, id)
			}
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
func (s *Repo) fetchObjects(ctx context.Context, remote string, ids []oid.ID, o RunOptions) error {
	for len(ids) > 0 {
		n := min(len(ids), MaxLazyFetch)
		var in strings.Builder
		for _, h := range ids[:n] {
			in.WriteString(h.String())
			in.WriteByte('\n')
		}
		o2 := o
		o2.Stdin = in.String()
		if _, err := s.Run(ctx, o2, "-c", "fetch.negotiationAlgorithm=noop", "fetch", remote, "--no-tags",
			"--no-write-fetch-head", "--recurse-submodules=no", "--filter=blob:none", "--stdin"); err != nil {
			return err
		}
		ids = ids[n:]
	}
	return nil
}

// PartialClone tells a Repo that it is a partial clone, so
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
	failed map[oid.ID]error
}

// lazyOff says why this store never fetches lazily ("" when it does): a
// server hook's quarantine (objects read from GIT_OBJECT_DIRECTORY, or
// GIT_QUARANTINE_PATH set), where a fetch would write into the
// repository being pushed to, and GIT_NO_LAZY_FETCH (git 2.44's switch;
// git 2.39 has none, and nwdes honours it the same way).
func (s *Repo) lazyOff() string {
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
func (s *Repo) lazyFetch(h oid.ID) error {
	pc := s.opts.PartialClone
	s.lazy.mu.Lock()
	defer s.lazy.mu.Unlock()
	if err, ok := s.lazy.failed[h]; ok {
		return err
	}
	o := RunOptions{Environ: pc.Environ, GitPath: pc.GitPath}
	var errs []string
	for _, r := range pc.Remotes {
		err := s.fetchObjects(context.Background(), r, []oid.ID{h}, o)
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
		s.lazy.failed = map[oid.ID]error{}
	}
	s.lazy.failed[h] = err
	return err
}

// onMissing is what the repository's reads do with an object they did not
// find (objects.missing): in a partial clone where lazy fetching is on,
// fetch it and read again; otherwise refuse, saying what was tried. The
// refusal returned with retry is the one to give if the read misses
// again.
func (s *Repo) onMissing(h oid.ID) (bool, error) {
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
func (s *Repo) missingObject(h oid.ID, fetchErr error) error {
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
func (s *Repo) FetchMissing(ctx context.Context, commits ...oid.ID) error {
	pc := s.opts.PartialClone
	if len(pc.Remotes) == 0 || s.lazyOff() != "" || len(commits) == 0 {
		return nil
	}
	o := RunOptions{Environ: pc.Environ, GitPath: pc.GitPath}
	tips := commits
	if err := s.check(commits...); err != nil {
		return err
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

// Config returns every value of key as git itself reads it (all scopes,
// includes and conditional includes), or nil when it is unset. Callers that
// parse configuration in process fall back to it for what they cannot
// evaluate, such as includeIf.
func (s *Repo) Config(ctx context.Context, key string, o RunOptions) ([]string, error) {
	out, err := s.Run(ctx, o, "config", "--get-all", key)
	var ge *GitError
	if errors.As(err, &ge) && ge.Code == 1 {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return strings.Split(strings.TrimRight(string(out), "\n"), "\n"), nil
}
